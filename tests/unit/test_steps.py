"""Steps in a line of runs (report/steps.py, issue 24): found where the level changed, with the commit range's run
indices and a ratio CI; never for one outlying run, never below the threshold; rare where there is none."""

from __future__ import annotations

import numpy as np
import pytest

from jitexp.report.steps import find_steps

SD = 0.077  # between-run sd of log(steady time) on this VM (report/compare.py BETWEEN_RUN_SD)


def line(levels: list[float], seed: int, sd: float = SD, half: float = 0.02):
    """Values with lognormal run-to-run noise, each with its own +-half CI."""
    values = np.asarray(levels) * np.exp(np.random.default_rng(seed).normal(0, sd, len(levels)))
    return values, values * (1 - half), values * (1 + half)


def places(levels: list[float], seed: int, **kw) -> list[tuple[int, int]]:
    return [(s.before, s.after) for s in find_steps(*line(levels, seed), **kw)]


def test_a_step_is_found_between_the_right_runs_with_a_ci_that_holds_its_size():
    (step,) = find_steps(*line([1.0] * 6 + [1.5] * 6, seed=1))
    assert (step.before, step.after, step.n_before, step.n_after) == (5, 6, 6, 6)
    assert step.direction == "slower" and step.ci_low < 1.5 < step.ci_high and step.ci_low > 1
    (faster,) = find_steps(*line([2.0] * 9 + [1.0] * 3, seed=2, sd=0.12, half=0.1))
    assert (faster.before, faster.after, faster.direction) == (8, 9, "faster")


def test_two_steps_in_one_line():
    """Three runs at the middle level: both found in 92% of lines (benchmarks/history_steps.py), so over 100 lines."""
    found = [places([1.0] * 6 + [1.5] * 3 + [3.0] * 3, seed=s) for s in range(100)]
    assert sum(f == [(5, 6), (8, 9)] for f in found) >= 88
    assert all(f[-1] == (8, 9) for f in found)  # the 2x step, always


@pytest.mark.parametrize(
    ("levels", "at"),
    [
        ([1.0] * 5 + [1.4] + [1.0] * 6, 5),  # one outlying run inside the line
        ([1.0] * 11 + [1.5], 11),  # the newest run alone
        ([1.4] + [1.0] * 11, 0),  # the oldest run alone
    ],
    ids=["outlier", "newest alone", "oldest alone"],
)
def test_one_outlying_run_is_never_a_step(levels, at):
    found = [places(levels, seed=s) for s in range(20)]
    assert not any(at in pair for f in found for pair in f)  # never a step beside the outlier
    assert sum(f == [] for f in found) >= 19  # and rarely one anywhere (a false step elsewhere: about 2% of lines)


def test_two_runs_at_a_new_level_are_a_step():
    assert places([1.0] * 10 + [1.5] * 2, seed=4) == [(9, 10)]


def test_a_step_within_the_threshold_is_not_one():
    values = np.array([1.0] * 6 + [1.03] * 6) * (1 + 1e-4 * np.tile([1, -1], 6))  # clear, but 3%
    assert find_steps(values, threshold=0.05) == []
    assert [(s.before, s.after) for s in find_steps(values, threshold=0.01)] == [(5, 6)]


def test_too_few_runs_or_a_bad_value_give_no_step():
    assert find_steps([1.0, 1.0, 2.0]) == []
    assert find_steps([1.0, 1.0, float("nan"), 2.0, 2.0]) == []


def test_false_steps_are_rare_and_big_steps_are_found():
    """Simulated lines of 12 runs with this VM's between-run noise (benchmarks/history_steps.py prints more)."""
    trials = 400
    flat = sum(places([1.0] * 12, seed=s) != [] for s in range(trials)) / trials
    found = sum(places([1.0] * 6 + [1.5] * 6, seed=s) == [(5, 6)] for s in range(trials)) / trials
    assert flat <= 0.03, flat  # 2.1% in 1,000 simulated lines (benchmarks/history_steps.py)
    assert found >= 0.95, found


def test_an_outlying_run_does_not_hide_a_real_step():
    """One run 1.6x off inside the old level: the 1.5x step is still found (86% of 1,000 simulated lines; 12% when
    every run counted toward the spread)."""
    found = [places([1.0] * 2 + [1.6] + [1.0] * 3 + [1.5] * 6, seed=s) for s in range(100)]
    assert sum(f == [(5, 6)] for f in found) >= 80


def test_four_runs_two_at_each_level_are_the_fewest_that_make_a_step():
    # the fewest runs a line needs (2 * MIN_SEGMENT); noiseless, so the step's standard error is 0 and its CI a point
    (step,) = find_steps([1.0, 1.0, 2.0, 2.0])
    assert (step.before, step.after, step.ratio, step.n_before, step.n_after) == (1, 2, 2.0, 2, 2)
    assert step.ci_low == step.ci_high == 2.0 and step.direction == "slower"
    assert [(s.before, s.after) for s in find_steps([2.0, 2.0, 2.0, 1.0, 1.0])] == [(2, 3)]


def test_each_runs_own_spread_comes_from_its_ci_where_it_has_one():
    from jitexp.report.steps import Z95, _own_sd

    y = np.log([1.0, 1.0, 1.0])
    assert _own_sd(y, None, [1.1, 1.1, 1.1]).size == 0 and _own_sd(y, [0.9, 0.9, 0.9], None).size == 0
    # a missing, inverted or non-positive CI is left out
    own = _own_sd(y, [0.9, None, 1.2, 0.0], [1.1, 1.2, 1.0, 1.0])
    assert own == pytest.approx([(np.log(1.1) - np.log(0.9)) / (2 * Z95)])


def test_runs_whose_own_cis_are_wide_hide_a_step_their_values_alone_would_show():
    # a clean 30% step; each run's own 95% CI of +-40% says the runs are far noisier than their spread shows
    values = np.array([1.0] * 6 + [1.3] * 6) * (1 + 1e-3 * np.tile([1, -1], 6))
    assert [(s.before, s.after) for s in find_steps(values)] == [(5, 6)]
    assert find_steps(values, values * 0.6, values * 1.4) == []
    assert [(s.before, s.after) for s in find_steps(values, values * 0.6, None)] == [(5, 6)]  # no CI: no own spread
    from jitexp.report.steps import _own_sd

    assert list(_own_sd(np.zeros(1), [1.0], [1.0])) == [0.0]  # a CI of one point: no spread, still counted
