"""Steps in a line of runs (report/steps.py, issue 24): found where the level changed, with the commit range's run
indices and a ratio CI; never for one outlying run, never below the threshold; rare where there is none."""

from __future__ import annotations

import numpy as np
import pytest

from jitexp.report.history.steps import find_steps

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
    from jitexp.report.history.steps import Z95, _own_sd

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
    from jitexp.report.history.steps import _own_sd

    assert list(_own_sd(np.zeros(1), [1.0], [1.0])) == [0.0]  # a CI of one point: no spread, still counted


# ---- the gaps mutation testing found (scripts/mutation.sh report/steps.py) -----------------------------------

from scipy import stats as sps  # noqa: E402

from jitexp.report.history.steps import Z95, Step, _difference_sd, _kept, _proposed, _typical  # noqa: E402


def test_a_run_without_a_log_among_enough_runs_gives_no_step():
    with np.errstate(divide="ignore"):
        assert find_steps([1.0] * 6 + [2.0] * 5 + [0.0]) == []  # a zero time: log is -inf


def test_a_step_at_exactly_the_threshold_is_not_one():
    assert find_steps([1.0, 1.0, 2.0, 2.0], threshold=1.0) == []  # 2x against a 100% threshold
    assert len(find_steps([1.0, 1.0, 2.0, 2.0], threshold=0.99)) == 1


def test_the_search_proposes_a_step_worth_more_than_its_penalty_of_3_ln_n():
    # a step of d sd between 6 runs and 6 lowers the l2 cost by 6 * 6 / 12 * d**2 = 3 d**2; the penalty is 3 ln 12,
    # so it is proposed from d = sqrt(ln 12) = 1.576
    assert _proposed(np.r_[np.zeros(6), np.full(6, 1.55)], 12) == [0, 12]
    assert _proposed(np.r_[np.zeros(6), np.full(6, 1.6)], 12) == [0, 6, 12]


def test_the_noise_is_the_robust_spread_of_successive_differences():
    # differences 1, 2, 3: median 2, absolute deviations 1, 0, 1, MAD 1; a difference has sqrt(2) the runs' sd
    assert _difference_sd(np.array([0.0, 1.0, 3.0, 6.0])) == pytest.approx(1.4826 / np.sqrt(2))


def test_a_clean_steps_ci_comes_from_the_prior_when_the_runs_do_not_spread():
    # every run's own 95% CI is exp(+-1.96 * 0.05) and the runs do not spread at all: one run's variance is the
    # prior's, max(RHO 4.5 * 0.05**2, DRIFT_SD**2) = 0.115**2, on NU0 = 20 df, pooled with the line's 0 on its 10 df:
    # 20 / 30 * 0.115**2; the step's se sqrt(that * (1/6 + 1/6)), its CI 2 exp(+-t se) with t on 30 df
    values = np.array([1.0] * 6 + [2.0] * 6)
    (step,) = find_steps(values, values * np.exp(-Z95 * 0.05), values * np.exp(Z95 * 0.05))
    half = sps.t.ppf(0.975, 30) * np.sqrt(20 / 30 * 0.115**2 / 3)
    assert step.ratio == pytest.approx(2.0)
    assert (step.ci_low, step.ci_high) == pytest.approx((2.0 * np.exp(-half), 2.0 * np.exp(half)))


def test_the_search_is_scaled_by_the_typical_runs_own_ci():
    # 50 noiseless runs, a 30% step at the middle; 26 runs carry a CI of exp(+-1.96 * 0.29), 24 a CI of one point.
    # The typical own sd (median, 0.29) hides the step from the search; the CIs' mean square alone (0.52 * 0.29**2)
    # would let it pass the test
    values = np.array([1.0] * 25 + [1.3] * 25)
    own = np.array([0.29] * 26 + [0.0] * 24)
    assert find_steps(values, values * np.exp(-Z95 * own), values * np.exp(Z95 * own)) == []
    assert [(s.before, s.after) for s in find_steps(values)] == [(24, 25)]


def test_each_step_counts_the_runs_of_its_own_two_levels():
    first, second = find_steps([1.0] * 4 + [2.0] * 3 + [4.0] * 5)
    assert (first.before, first.after, first.n_before, first.n_after, first.ratio) == (3, 4, 4, 3, 2.0)
    assert (second.before, second.after, second.n_before, second.n_after, second.ratio) == (6, 7, 3, 5, 2.0)


def test_typical_runs_lie_within_4_robust_sd_of_their_segments_median():
    # median 0, absolute deviations 0, 0, 0, .25, .25, .25, .25, b: MAD .25, robust sd 1.4826 * .25; the last run
    # at exactly 4 robust sd is typical, just beyond it is not
    at = 4 * (1.4826 * 0.25)
    y = np.array([0.0, 0.0, 0.0, 0.25, -0.25, 0.25, -0.25, at])
    assert _typical(y, [(0, 8)]).all()
    y[-1] = np.nextafter(at, 2)
    assert _typical(y, [(0, 8)]).tolist() == [True] * 7 + [False]
    # no spread at all (most runs on their median): every run is typical
    assert _typical(np.array([0.0, 0.0, 0.0, 0.0, 0.5, 1.0]), [(0, 6)]).all()


def test_a_segment_keeps_its_outlier_only_when_fewer_than_two_runs_would_be_left():
    # robust sd 1.4826 * 0.05 over the line: 10 is far off its segment (median 0), and two runs are left without it
    y = np.array([0.0, 0.0, 10.0, 5.0, 5.1, 4.9, 5.0, 5.1])
    assert _typical(y, [(0, 3), (3, 8)]).tolist() == [True, True, False] + [True] * 5
    # a segment of two that far apart (both 5 from its median) would keep none: it keeps both
    assert _typical(np.array([0.0, 10.0, 5.0, 5.1, 4.9, 5.0, 5.1]), [(0, 2), (2, 7)]).all()


def kept(y: list[float], before: int, ratio: float | None = None, z: float = np.inf) -> bool:
    """_kept of the boundary after run `before` of log values y (a step beyond the threshold unless told)."""
    y = np.asarray(y)
    a, b = y[: before + 1], y[before + 1 :]
    ratio = np.exp(b.mean() - a.mean()) if ratio is None else ratio
    step = Step(before, before + 1, ratio, ratio, ratio, a.size, b.size)
    return _kept(y, step, z, 10, 0.05)


@pytest.mark.parametrize(
    ("y", "expected"),
    [
        ([0, 0, 1, 1], True),
        ([0, 0, 1, 0.5], True),  # the middle 0.375 from the two levels alone: both new runs beyond it
        ([0, 0, 1, 0.25], False),  # the middle 0.3125: one new run short of it
        ([0, 0, 3, 1], False),  # a run on the middle (1) is nearer neither side
        ([0, 0, -3, -1], False),  # and down
        ([0, 2, 3, 3], False),  # an old run on the middle (2)
        ([0, -2, -3, -3], False),  # and down
    ],
)
def test_a_step_needs_two_runs_on_either_side_nearer_their_own_level(y, expected):
    assert kept(y, 1) is expected


def test_the_nearer_runs_are_counted_downwards_when_the_plain_means_tie():
    # the typical runs (0.5, 0.5 before, -0.5, -0.5 after) make a step down; all the runs average 0 on either side
    assert kept([-1, 0.5, 0.5, -0.5, -0.5, 1], 2, ratio=np.exp(-1)) is True


def test_a_step_must_beat_the_bonferroni_corrected_t_over_the_places_it_could_be():
    crit = sps.t.ppf(1 - 0.01 / 2 / 9, 10)  # 12 runs: 9 places with 2 runs on either side, ALPHA 0.01, 10 df
    assert crit == pytest.approx(4.5184, abs=1e-3)
    y = [0.0] * 6 + [1.0] * 6
    assert kept(y, 5, z=crit) is False
    assert kept(y, 5, z=np.nextafter(crit, np.inf)) is True
    assert kept(y, 5, z=-np.nextafter(crit, np.inf)) is True


# ---- issue 49: what each run knows, calibrated on the recorded A/A history (tests/aa_lines.py) ---------------

import aa_lines  # noqa: E402
from jitexp.report.history.steps import Processes  # noqa: E402


def test_the_issues_six_runs_are_one_step_at_commit_4():
    """The 6-run history of issue 49 (a 1.93x change, 3 runs on either side), from its run medians and CIs alone."""
    values = [472.6, 608.8, 516.0, 945.8, 1047.4, 1066.1]
    low, high = [448, 539, 470, 828, 937, 1021], [516, 689, 541, 1056, 1133, 1143]
    (step,) = find_steps(values, low, high)
    assert (step.before, step.after, step.established, step.runs_beyond) == (2, 3, True, 3)
    assert step.ci_low > 1.5 and step.ci_high < 2.4


def test_a_large_change_in_the_newest_run_is_possible_not_established():
    values = np.array([1.0, 1.1, 0.95, 1.0, 1.6])
    (step,) = find_steps(values, values * 0.98, values * 1.02, possible=True)
    assert (step.after, step.n_after, step.established) == (4, 1, False)
    assert find_steps(values, values * 0.98, values * 1.02) == []  # never established


def test_processes_apart_on_either_side_are_the_evidence():
    """Two runs of 6 processes at 1.0 and two at 2.0, the processes not overlapping: the level is their geometric
    mean, and the evidence counts them."""
    n, sd = [6] * 4, [0.05] * 4
    low, high = [0.9] * 2 + [1.8] * 2, [1.1] * 2 + [2.2] * 2
    procs = Processes(n=n, log_mean=np.log([1.0, 1.02, 2.0, 2.04]), log_sd=sd, low=low, high=high)
    (step,) = find_steps([1.0, 1.0, 2.0, 2.0], processes=procs)
    assert step.ratio == pytest.approx(2.02 / 1.01)
    assert (step.processes_before, step.processes_after, step.processes_apart) == (12, 12, True)


@pytest.mark.parametrize(
    ("levels", "expected", "at_least"),
    [
        ([1.0] * 6, [], 0.99),
        ([1.0] * 10, [], 0.98),  # 0.985 here (3 of 200); 0.995 over 2,000
        ([1.0] * 20, [], 0.99),
        ([1.0] * 3 + [2.0] * 3, [(2, 3)], 0.99),
        ([1.0] * 3 + [1.5] * 3, [(2, 3)], 0.6),  # issue 49 asks 0.8: not met on this VM's drift (docs/benchmarks.md)
        ([1.0] * 5 + [1.5] * 5, [(4, 5)], 0.8),  # asks 0.95: not met
    ],
    ids=["A/A 6", "A/A 10", "A/A 20", "2x 3+3", "1.5x 3+3", "1.5x 5+5"],
)
def test_rates_on_lines_resampled_from_the_recorded_aa_history(levels, expected, at_least):
    """200 default lines each (fixed seed) from tests/data/aa_history: false steps at most 1%, power as pinned;
    benchmarks/history_steps.py prints the same rates over 2,000 lines."""
    assert aa_lines.rate(levels, expected, trials=200, seed=49) >= at_least


def test_five_quick_runs_with_a_1_8x_step_from_run_4_are_found_in_half_the_lines():
    """5 one-process runs (their rounds their evidence), 1.8x from run 4: established in 56% of 200 lines (issue 49
    asks for always: a one-process run drifts 0.2 in log between processes here, so 3 + 2 of them cannot establish
    1.8x at a 1% false-step rate; docs/benchmarks.md); A/A quick lines: no established step."""
    assert aa_lines.rate([1.0] * 3 + [1.8] * 2, [(2, 3)], trials=200, seed=49, quick=True) >= 0.5
    assert aa_lines.rate([1.0] * 5, [], trials=200, seed=49, quick=True) >= 0.99


# ---- the gaps mutation testing found after the move to report/history/ (issue 52) ----------------------------

from jitexp.report.history.steps import (  # noqa: E402
    DRIFT_SD,
    NU0,
    RHO,
    _Line,
    _own_var,
    _places,
    _possible,
    _with_evidence,
)


def test_three_runs_are_too_few_even_for_a_possible_step():
    values = np.array([1.0, 1.0, 2.0])
    assert find_steps(values, values * 0.99, values * 1.01, possible=True) == []


def test_a_line_without_cis_is_judged_on_its_own_spread_alone():
    # no CI (or CIs of one point, which say nothing): no prior; one run's variance is the runs' spread about their
    # levels on n - 2 df, the step's CI the ratio of the levels' geometric means, exp(+-t se)
    values = np.array([1.0, 1.02, 0.98, 1.0, 1.5, 1.53, 1.47, 1.5])
    y = np.log(values)
    a, b = y[:4], y[4:]
    var = (np.sum((a - a.mean()) ** 2) + np.sum((b - b.mean()) ** 2)) / 6
    half = sps.t.ppf(0.975, 6) * np.sqrt(var / 4 + var / 4)
    expected = (np.exp(b.mean() - a.mean() - half), np.exp(b.mean() - a.mean() + half))
    for low, high in ((None, None), (values, values)):
        (step,) = find_steps(values, low, high)
        assert (step.before, step.after) == (3, 4)
        assert (step.ci_low, step.ci_high) == pytest.approx(expected)


def test_a_flat_line_without_cis_is_searched_in_units_of_its_own_noise():
    # no CI: the search's scale is the robust sd of successive differences; on the bare log values (a scale of
    # nothing) it would propose boundaries in the noise, and three of them would pass
    flat = [1.009, 0.957, 0.943, 1.017, 1.022, 1.1, 0.97, 1.021, 1.009, 0.989, 0.938, 0.929, 1.103, 0.976, 1.107]
    assert find_steps(flat) == []


def test_one_run_with_a_very_wide_ci_widens_every_step():
    # the runs' own variance (their CIs' mean square) is a floor under the line's: a run whose CI spans 0.01-100
    # says the runs may move that much, and a clean 50% step is no longer significant
    values = np.array([1.0] * 6 + [1.5] * 6) * (1 + 1e-3 * np.tile([1, -1], 6))
    low, high = values * 0.99, values * 1.01
    assert [(s.before, s.after) for s in find_steps(values, low, high)] == [(5, 6)]
    low[0], high[0] = 0.01, 100.0
    assert find_steps(values, low, high) == []


def procs(n, log_mean, log_sd=0.5, low=None, high=None) -> Processes:
    k = len(n)
    low = [np.nan] * k if low is None else low
    high = [np.nan] * k if high is None else high
    sd = [log_sd] * k if np.isscalar(log_sd) else log_sd
    return Processes(n=n, log_mean=np.log(log_mean), log_sd=sd, low=low, high=high)


def test_the_processes_give_the_levels_only_where_every_run_has_two_or_more():
    # the values say 2x, the processes' geometric means 3x: which one a step reports says where its levels came from
    values = [1.0, 1.0, 2.0, 2.0]
    three = [1.0, 1.0, 3.0, 3.0]
    assert find_steps(values, processes=procs([6] * 4, three))[0].ratio == pytest.approx(3.0)
    assert find_steps(values, processes=procs([2] * 4, three))[0].ratio == pytest.approx(3.0)  # two are enough
    one_process = procs([6, 6, 1, 6], three, log_sd=[0.5, 0.5, 0.0, 0.5])
    assert find_steps(values, processes=one_process)[0].ratio == 2.0  # a run of one process: the values
    assert find_steps(values, processes=procs([6] * 3, three[1:]))[0].ratio == 2.0  # not every run: the values
    no_sd = procs([6] * 4, three, log_sd=[0.5, np.nan, 0.5, 0.5])
    assert find_steps(values, processes=no_sd)[0].ratio == 2.0  # a run without its processes' spread: the values


def test_a_processes_step_is_judged_on_their_spread_and_the_prior_it_predicts():
    # sd 0.5 between processes: one process's variance 0.25, a run's own 0.25 / 6; the prior RHO 0.4 * 0.25 = 0.1
    # (above DRIFT_SD**2) on NU0 = 20 df, pooled with the line's 0 on its 2 df: var 20 * 0.1 / 22
    (step,) = find_steps([1.0, 1.0, 3.0, 3.0], processes=procs([6] * 4, [1.0, 1.0, 3.0, 3.0]))
    assert RHO["processes"] * 0.25 > DRIFT_SD**2 and NU0 == 20
    half = sps.t.ppf(0.975, 22) * np.sqrt(20 * 0.1 / 22 * (1 / 2 + 1 / 2))
    assert (step.ci_low, step.ci_high) == pytest.approx((3 * np.exp(-half), 3 * np.exp(half)))


def test_runs_of_one_process_still_count_their_processes_as_evidence():
    # not every run has two processes, so the levels are the values; the evidence still counts the processes
    values = np.array([1.0, 1.0, 2.0, 2.0])
    one = procs([1, 1, 6, 6], values, low=[0.9, 0.9, 1.8, 1.8], high=[1.1, 1.1, 2.2, 2.2])
    for low, high in ((None, None), (values * 0.99, values * 1.01)):
        (step,) = find_steps(values, low, high, processes=one)
        assert (step.processes_before, step.processes_after, step.processes_apart) == (2, 12, True)


def test_each_steps_evidence_counts_the_runs_of_its_own_two_levels():
    # 4 -> 1 -> 2: every run of the middle level is below every run of the first, and the last level's above the
    # middle's (not above the first level's)
    first, second = find_steps([4.0] * 3 + [1.0] * 3 + [2.0] * 3)
    assert (first.after, first.direction, first.runs_beyond) == (3, "faster", 3)
    assert (second.after, second.direction, second.runs_beyond) == (6, "slower", 3)


def line_of(y, own=np.nan, prior=1e-6, nu0=10**6, processes=None) -> _Line:
    """A _Line as find_steps builds it, by hand: log levels y; by default a prior so sure (1e-6 on a million df)
    that any change is significant."""
    y = np.asarray(y, dtype=float)
    return _Line(y, np.broadcast_to(np.asarray(own, dtype=float), y.shape).copy(), prior, nu0, processes)


def test_runs_level_with_the_old_extreme_are_not_beyond_it():
    up = Step(1, 2, 2.0, 2.0, 2.0, 2, 2)
    assert _with_evidence(line_of([0, 0.5, 0.5, 1.0]), up).runs_beyond == 1
    down = Step(1, 2, 0.5, 0.5, 0.5, 2, 2)
    assert _with_evidence(line_of([0, -0.5, -0.5, -1.0]), down).runs_beyond == 1


@pytest.mark.parametrize("direction", ["up", "down"])
def test_processes_are_apart_only_when_none_touches_the_other_side(direction):
    sign = 1 if direction == "up" else -1
    y = sign * np.array([0.0, 0.0, 1.0, 1.0])
    step = Step(1, 2, float(np.exp(sign)), 1.0, 1.0, 2, 2)
    near, far = [0.9, 0.9, 1.1, 1.1], [1.0, 1.1, 1.3, 1.3]  # old processes up to 1.1, the new from 1.1
    if direction == "down":
        near, far = [1.1, 1.1, 0.9, 0.9], [1.3, 1.3, 1.1, 1.0]  # old from 1.1, the new up to 1.1
    touching = Processes(n=[3] * 4, log_mean=y, log_sd=[0.1] * 4, low=near, high=far)
    found = _with_evidence(line_of(y, processes=touching), step)
    assert (found.runs_beyond, found.processes_before, found.processes_after, found.processes_apart) == (2, 6, 6, False)
    if direction == "up":
        apart = Processes(n=[3] * 4, log_mean=y, log_sd=[0.1] * 4, low=[0.9, 0.9, 1.11, 1.11], high=far)
    else:
        apart = Processes(n=[3] * 4, log_mean=y, log_sd=[0.1] * 4, low=near, high=[1.3, 1.3, 1.09, 1.0])
    assert _with_evidence(line_of(y, processes=apart), step).processes_apart is True
    # a run on either side without its processes' range: the runs alone are the evidence
    unknown = Processes(n=[3] * 4, log_mean=y, log_sd=[0.1] * 4, low=[np.nan, *near[1:]], high=far)
    found = _with_evidence(line_of(y, processes=unknown), step)
    assert (found.runs_beyond, found.processes_before, found.processes_after, found.processes_apart) == (2, 0, 0, False)


def test_each_runs_own_variance_keeps_its_place_nan_where_it_has_no_ci():
    y = np.zeros(3)
    sd = (np.log(1.1) - np.log(0.9)) / (2 * Z95)
    own = _own_var(y, [0.9, None, 0.9], [1.1, 1.2, 1.1])
    assert own[[0, 2]] == pytest.approx([sd**2, sd**2]) and np.isnan(own[1])
    assert np.isnan(_own_var(y, None, [1.1] * 3)).all() and _own_var(y, None, [1.1] * 3).size == 3
    assert np.isnan(_own_var(y, [0.9] * 3, None)).all() and _own_var(y, [0.9] * 3, None).size == 3


def test_the_places_a_step_can_be_are_at_least_one():
    assert [_places(n) for n in (1, 3, 4, 5, 12)] == [1, 1, 1, 2, 9]


# the possible step in the newest runs (_possible), on hand-made lines


def possible(y, bounds=None, threshold=0.05, **line) -> tuple | None:
    step = _possible(line_of(y, **line), bounds or [0, len(y)], threshold)
    return None if step is None else (step.before, step.after, step.n_before, step.n_after)


def test_a_possible_step_in_the_newest_run_of_four():
    # the newest run against the three before it (two newest runs would leave two old runs, three none)
    values = np.array([1.0, 1.05, 0.95, 1.8])
    (step,) = find_steps(values, values * 0.99, values * 1.01, possible=True)
    assert (step.before, step.after, step.n_before, step.n_after, step.established) == (2, 3, 3, 1, False)
    assert step.ratio == pytest.approx(1.8 / (1.05 * 0.95) ** (1 / 3))
    assert 1 < step.ci_low < step.ratio < step.ci_high


def test_a_possible_step_down_in_the_newest_run():
    values = np.array([100.0, 105.0, 95.0, 100.0, 55.0])  # times in ms: log levels far from 0
    (step,) = find_steps(values, values * 0.99, values * 1.01, possible=True)
    assert (step.after, step.direction, step.established) == (4, "faster", False)


def test_a_possible_step_at_exactly_the_threshold_is_not_one():
    values = np.array([1.0, 1.0, 1.0, 2.0])  # 2x against a 100% threshold
    assert find_steps(values, values * 0.99, values * 1.01, possible=True, threshold=1.0) == []
    assert len(find_steps(values, values * 0.99, values * 1.01, possible=True, threshold=0.99)) == 1


def test_a_possible_step_takes_one_two_or_three_newest_runs_never_four():
    assert possible([0] * 6 + [1, 1]) == (5, 6, 6, 2)
    assert possible([0] * 6 + [1, 1, 1]) == (5, 6, 6, 3)
    assert possible([0] * 6 + [1] * 4) == (6, 7, 7, 3)  # the best of 1..3 runs, though 4 would be better
    assert possible([0, 0, 1, 1, 1]) == (1, 2, 2, 3)  # two old runs are enough


def test_a_possible_step_needs_every_new_run_past_the_middle():
    # three newest runs 1.25, 1.25, 0.5 after runs at 0: their mean 1, the middle 0.5, and the last run on it, not
    # past it; so the newest run alone is the possible step (its z is far smaller)
    assert possible([0] * 4 + [1.25, 1.25, 0.5]) == (5, 6, 6, 1)
    assert possible([0] * 4 + [-1.25, -1.25, -0.5]) == (5, 6, 6, 1)


def test_of_two_possible_steps_with_the_same_z_the_fewer_newest_runs_win():
    # 2 newest runs against 3 (diff 1 - 0.5 / 3) and 3 against 2 (diff 2.5 / 3): the same z exactly
    y = np.array([0, 0, 0.5, 1, 1])
    assert float(y[3:].mean()) - float(y[:3].mean()) == float(y[2:].mean()) - float(y[:2].mean())
    assert possible(y) == (2, 3, 3, 2)


def test_a_possible_steps_variance_comes_from_every_level_of_the_line():
    # two levels; the last has an outlying newest run (left out of the spread by _typical): one run's variance is
    # the first level's squares 4 * 0.1**2 over 5 df (7 typical runs, 2 levels), not the first level's alone
    y = np.array([0, 0.2, 0, 0.2, 1, 1, 1, 2])
    step = _possible(line_of(y, prior=0.0, nu0=0), [0, 4, 8], 0.05)
    half = sps.t.ppf(0.975, 5) * np.sqrt(0.04 / 5 * (1 / 3 + 1))
    assert (step.after, step.ratio) == (7, pytest.approx(np.e))
    assert (step.ci_low, step.ci_high) == pytest.approx((np.exp(1 - half), np.exp(1 + half)))


def test_a_possible_step_must_beat_its_t_not_just_reach_it():
    # 20 runs at 0 and the newest at 1; the variance is the runs' own (a floor set by hand) chosen so that the z of
    # the newest run, 1 / sqrt(v / 20 + v), is exactly the t of POSSIBLE_ALPHA (one test) on the line's 20 df
    from jitexp.report.history.steps import POSSIBLE_ALPHA

    crit = float(sps.t.ppf(1 - POSSIBLE_ALPHA / 2, 20))
    v = 1 / (crit**2 * 1.05)
    for _ in range(1000):
        z = 1.0 / np.sqrt(v / 20 + v / 1)
        if z == crit:
            break
        v = np.nextafter(v, 1.0) if z > crit else np.nextafter(v, 0.0)
    assert 1.0 / np.sqrt(v / 20 + v / 1) == crit
    y = [0.0] * 20 + [1.0]
    own = [v] + [np.nan] * 20
    assert possible(y, own=own, prior=0.0, nu0=0) is None
    while 1.0 / np.sqrt(v / 20 + v / 1) == crit:  # the next variance down whose z is above the t (an ulp or two)
        v = np.nextafter(v, 0.0)
    assert possible(y, own=[v] + own[1:], prior=0.0, nu0=0) == (19, 20, 20, 1)
