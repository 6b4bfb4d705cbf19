"""Summary statistics on arrays whose answers are known by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jitexp.stats import median_ci, summarize, tukey_outliers


def test_summary_of_a_known_array():
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s.n_samples == 5
    assert s.median_s == 3.0
    assert s.mean_s == 22.0
    assert s.min_s == 1.0 and s.max_s == 100.0
    assert s.iqr_s == pytest.approx(2.0)
    assert s.n_outliers == 1  # 100 lies beyond q3 + 1.5 * IQR = 7
    assert s.std_s == pytest.approx(np.std([1, 2, 3, 4, 100], ddof=1))
    assert s.cv == pytest.approx(s.std_s / 22.0)


def test_median_ci_uses_order_statistics():
    x = np.arange(1.0, 101.0)  # n = 100: ranks 40 and 61 (1-based)
    lo, hi = median_ci(x)
    assert (lo, hi) == (40.0, 61.0)
    assert lo <= np.median(x) <= hi


def test_median_ci_of_tiny_samples_is_the_range():
    assert median_ci([3.0, 1.0, 2.0]) == (1.0, 3.0)
    assert median_ci([5.0]) == (5.0, 5.0)
    assert all(math.isnan(v) for v in median_ci([]))


def test_ci_shrinks_with_more_samples():
    rng = np.random.default_rng(0)
    small = summarize(rng.normal(1.0, 0.1, 20))
    large = summarize(rng.normal(1.0, 0.1, 2000))
    assert large.rel_ci_halfwidth < small.rel_ci_halfwidth


def test_outliers_are_counted_on_both_sides():
    assert tukey_outliers([-50.0, 1.0, 1.1, 1.2, 1.3, 1.1, 60.0]) == 2
    assert tukey_outliers([1.0, 1.0, 1.0]) == 0


def test_constant_samples():
    s = summarize([2.0] * 10)
    assert s.std_s == 0.0 and s.cv == 0.0 and s.rel_ci_halfwidth == 0.0


def test_empty_input_is_an_error():
    with pytest.raises(ValueError):
        summarize([])


# ---- between processes, paired, break-even ---------------------------------------------------

from scipy import stats as scipy_stats  # noqa: E402

from jitexp.stats import break_even, hierarchical_medians, percentile_ci, point_medians, robust_cv, verdict  # noqa: E402


def test_break_even_hand_computed():
    # 0.05 + (n-1)*0.001 <= 0.01 + (n-1)*0.004  <=>  n-1 >= 13.33  =>  n = 15
    assert break_even(0.010, 0.004, 0.050, 0.001) == (15, pytest.approx(math.nan, nan_ok=True))
    assert 0.050 + 14 * 0.001 <= 0.010 + 14 * 0.004
    assert not 0.050 + 13 * 0.001 <= 0.010 + 13 * 0.004


def test_break_even_exact_integer_boundary():
    # gap 0.03, gain 0.01 per call: equality at n-1 = 3, so n = 4 despite float rounding
    assert break_even(0.01, 0.02, 0.04, 0.01)[0] == 4


@pytest.mark.parametrize(
    "case, expected",
    [
        # (eager first, eager median, jit first, jit median)
        ((0.05, 0.004, 0.01, 0.001), (1, None)),  # cheaper first call, faster after: ahead for good from call 1
        ((0.01, 0.004, 0.05, 0.001), (15, None)),  # dearer first call, faster after: pays off at 15
        ((0.05, 0.001, 0.01, 0.002), (math.inf, 41)),  # cheaper first call, slower after: level at 41, behind after
        ((0.01, 0.001, 0.05, 0.002), (math.inf, 0)),  # dearer and slower: never ahead
    ],
)
def test_break_even_in_all_four_cost_line_cases(case, expected):
    calls, ahead = break_even(*case)
    assert calls == expected[0]
    if expected[1] is None:
        assert math.isnan(ahead)
    else:
        assert ahead == expected[1]
        e1, e, j1, j = case
        total = lambda first, per, n: first + (n - 1) * per  # noqa: E731
        if ahead:
            assert total(j1, j, ahead) <= total(e1, e, ahead) and total(j1, j, ahead + 1) > total(e1, e, ahead + 1)


def test_break_even_equal_steady_state_and_missing_inputs():
    assert break_even(0.05, 0.001, 0.01, 0.001)[0] == 1
    assert break_even(0.01, 0.001, 0.05, 0.001)[0] == math.inf
    assert all(math.isnan(v) for v in break_even(float("nan"), 0.001, 0.01, 0.002))


def test_verdicts():
    assert verdict(1.1, 1.4) == "faster"
    assert verdict(0.5, 0.9) == "slower"
    assert verdict(0.9, 1.2) == "no significant difference"


def test_robust_cv_ignores_one_wild_value():
    assert robust_cv([1.0, 1.0, 1.0, 1.0, 50.0]) == 0.0
    assert robust_cv([9.0, 10.0, 11.0]) == pytest.approx(1.4826 * 1.0 / 10.0)
    assert math.isnan(robust_cv([1.0]))


def test_hierarchical_bootstrap_of_one_sample_per_process_matches_scipy():
    # With one round per process only the top level varies: the percentile CI of the median
    # must agree with scipy.stats.bootstrap's.
    rng = np.random.default_rng(1)
    medians = rng.lognormal(0.0, 0.2, 15)
    ours = percentile_ci(hierarchical_medians([[m] for m in medians], n_resamples=4000, seed=2)[:, 0])
    theirs = scipy_stats.bootstrap(
        (medians,), np.median, n_resamples=4000, method="percentile", random_state=np.random.default_rng(3)
    ).confidence_interval
    assert ours[0] == pytest.approx(theirs.low, rel=0.03)
    assert ours[1] == pytest.approx(theirs.high, rel=0.03)


def simulated_job(rng, ratio: float, processes: int, rounds: int) -> list[np.ndarray]:
    """Paired (eager, jit) samples: a per-process slowdown shared by both modes, plus noise."""
    groups = []
    for _ in range(processes):
        shared = rng.lognormal(0.0, 0.2)  # between-process spread of ~20%
        own = rng.lognormal(0.0, 0.05, 2)  # each mode's own process effect
        eager = 2e-3 * shared * own[0] * rng.lognormal(0.0, 0.03, rounds)
        jit = 2e-3 / ratio * shared * own[1] * rng.lognormal(0.0, 0.03, rounds)
        groups.append(np.column_stack([eager, jit]))
    return groups


def test_paired_bootstrap_ci_covers_a_known_ratio():
    rng = np.random.default_rng(0)
    hits, trials = 0, 60
    for t in range(trials):
        groups = simulated_job(rng, 1.5, processes=8, rounds=10)
        boot = hierarchical_medians(groups, n_resamples=500, seed=t)
        lo, hi = percentile_ci(boot[:, 0] / boot[:, 1])
        hits += lo <= 1.5 <= hi
    assert hits >= 0.85 * trials  # nominal 95%; a CI from one process's rounds would cover far less


def test_pairing_narrows_the_speedup_ci_and_one_process_is_narrower_still():
    rng = np.random.default_rng(5)
    groups = simulated_job(rng, 2.0, processes=8, rounds=20)
    boot = hierarchical_medians(groups, seed=0)
    paired = np.subtract(*percentile_ci(boot[:, 0] / boot[:, 1])[::-1])
    lo_e, hi_e = percentile_ci(boot[:, 0])
    lo_j, hi_j = percentile_ci(boot[:, 1])
    unpaired = lo_e and (hi_e / lo_j - lo_e / hi_j)
    assert paired < unpaired
    one = hierarchical_medians(groups[:1], seed=0)
    assert np.ptp(percentile_ci(one[:, 0])) < np.ptp((lo_e, hi_e))
    assert point_medians(groups)[0] == pytest.approx(np.median([np.median(g[:, 0]) for g in groups]))


def test_hierarchical_bootstrap_is_deterministic_and_checks_input():
    groups = [np.ones((3, 2)), 2 * np.ones((4, 2))]
    assert np.array_equal(hierarchical_medians(groups, seed=7), hierarchical_medians(groups, seed=7))
    with pytest.raises(ValueError):
        hierarchical_medians([np.ones((0, 2))])


def test_instability_reasons_read_cleanly():
    from jitexp.rows import instability

    row = {
        "median_s": 1.0,
        "process_median_min_s": 0.9,
        "process_median_max_s": 1.1,
        "n_processes": 5,
        "process_rel_spread": 0.1004,
        "within_process_rel_spread": 0.05,
        "compiles_during_timing": 0,
        "cpu_count": 2,
        "load_avg_start": 0.5,
        "load_avg_end": 0.5,
    }
    flagged = instability(row)
    assert flagged["unstable"] and flagged["unstable_reason"] == "process medians spread 10.0% (robust cv; limit 10%)"
    calm = instability({**row, "process_rel_spread": 0.05})
    assert calm == {"unstable": False, "unstable_reason": ""}


def test_paired_change_finds_a_consistent_shift_and_not_noise():
    from jitexp.stats import paired_change

    rng = np.random.default_rng(0)
    base = rng.lognormal(0, 0.2, 8)  # processes differ a lot; the pairs move together
    slower = paired_change(list(base), list(base * 1.2 * rng.lognormal(0, 0.02, 8)))
    assert slower["verdict"] == "slower" and slower["ratio_ci_low"] > 1.05 and slower["n_pairs"] == 8
    same = paired_change(list(base), list(base * rng.lognormal(0, 0.02, 8)))
    assert same["verdict"] == "no significant change" and same["ratio_ci_low"] < 1 < same["ratio_ci_high"]
    assert paired_change([1.0, 1.1], [3.0, 3.3])["verdict"] == "cannot tell (2 process pairs)"
    with pytest.raises(ValueError):
        paired_change([1.0], [1.0, 2.0])


def test_paired_change_is_the_median_of_the_pairs_ratios_not_a_ratio_of_medians():
    from jitexp.stats import paired_change

    base = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]  # processes at very different levels (steal, layout)
    new = [v * 1.1 for v in base]
    new[3] = base[3]  # the middle process alone saw no change: a ratio of medians would read 1.0
    change = paired_change(base, new)
    assert change["ratio"] == pytest.approx(1.1) and change["ratio_ci_low"] <= 1.1 <= change["ratio_ci_high"]
    assert change["p_value"] < 0.05 and change["verdict"] == "slower"
    assert np.isnan(paired_change([0.0], [1.0])["ratio"])  # a zero time has no ratio
    assert paired_change([*base, 0.0], [*new, 1.0])["n_pairs"] == 7  # nor a pair
