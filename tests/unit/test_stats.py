"""Summary statistics on arrays whose answers are known by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jitexp.analysis.stats import Z95, median_ci, summarize, tukey_outliers


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

from jitexp.analysis.stats import (  # noqa: E402
    ALPHA,
    EXACT_SIGNED_RANK_MAX_N,
    THRESHOLD,
    Unpaired,
    break_even,
    change_verdict,
    group_medians,
    hierarchical_medians,
    mode_samples,
    paired_change,
    percentile_ci,
    point_medians,
    rank_sum_cdf,
    robust_cv,
    settled_break_even,
    signed_rank_cdf,
    signed_rank_interval,
    verdict,
)


def test_break_even_hand_computed():
    # 0.05 + (n-1)*0.001 <= 0.01 + (n-1)*0.004  <=>  n-1 >= 13.33  =>  n = 15
    assert break_even(0.010, 0.004, 0.050, 0.001) == (15, pytest.approx(math.nan, nan_ok=True))
    # the neighbours on either side of that answer: a first call 1 ms cheaper crosses at n-1 = 13 (n = 14), one
    # 2 ms dearer at n-1 = 14 (n = 15 still), 3 ms dearer at n-1 = 14.33 (n = 16)
    assert break_even(0.010, 0.004, 0.049, 0.001)[0] == 14
    assert break_even(0.010, 0.004, 0.052, 0.001)[0] == 15
    assert break_even(0.010, 0.004, 0.053, 0.001)[0] == 16


def test_break_even_exact_integer_boundary():
    # gap 0.06, gain 0.004 per call: the lines meet exactly at n-1 = 15, so n = 16. In floats the lead after
    # 16 calls is -0.06 + 15 * 0.004 = -6.9e-18, not 0: without the rounding tolerance the answer would be 17.
    lead, gain = 0.01 - 0.07, 0.01 - 0.006
    assert lead + 15 * gain < 0  # the inputs do hit the rounding (else this test would prove nothing)
    assert break_even(0.01, 0.01, 0.07, 0.006)[0] == 16
    # the same tolerance when the compiled steady state is slower: a lead of 0.029 lost by 0.001 per call is level
    # at n-1 = 29 (n = 30), where the float sum is -3.5e-18; without the tolerance the answer would be 29
    assert 0.03 - 0.001 + 29 * (0.001 - 0.002) < 0
    assert break_even(0.03, 0.001, 0.001, 0.002) == (math.inf, 30)


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


@pytest.mark.parametrize(
    ("verdict_", "calls", "ahead", "expected"),
    [
        ("faster", 15.0, math.nan, (15.0, math.nan)),
        ("faster", math.inf, math.nan, (math.inf, math.nan)),
        ("no significant difference", 126.0, math.nan, (math.inf, math.nan)),  # matmul 256 in issue 50
        ("no significant difference", 1.0, math.nan, (1.0, math.nan)),  # its first call is cheaper: kept
        ("no significant difference", math.inf, 3.0, (math.inf, math.nan)),
        ("slower", 8.0, math.nan, (math.inf, math.nan)),  # medians and CI disagree: the CI's word wins
        ("slower", math.inf, 3.0, (math.inf, 3.0)),
        (None, 4.0, math.nan, (math.inf, math.nan)),
        (None, math.nan, math.nan, (math.nan, math.nan)),
    ],
)
def test_settled_break_even_says_never_unless_faster(verdict_, calls, ahead, expected):
    got = settled_break_even(verdict_, calls, ahead)
    assert [v if not math.isnan(v) else "nan" for v in got] == [v if not math.isnan(v) else "nan" for v in expected]


def test_break_even_equal_steady_state_and_missing_inputs():
    assert break_even(0.05, 0.001, 0.01, 0.001)[0] == 1
    assert break_even(0.01, 0.001, 0.05, 0.001)[0] == math.inf
    assert all(math.isnan(v) for v in break_even(float("nan"), 0.001, 0.01, 0.002))


def test_verdicts():
    assert verdict(1.1, 1.4) == "faster"
    assert verdict(0.5, 0.9) == "slower"
    assert verdict(0.9, 1.2) == "no significant difference"


def test_change_threshold_is_symmetric_in_log():
    # 5% slower is a ratio above 1.05; 5% faster one below 1/1.05 = 0.95238, not below 1 - 0.05 = 0.95: a ratio
    # between the two is faster, as its inverse (1.0513) is slower
    between = 0.951
    assert 1 - THRESHOLD < between < 1 / (1 + THRESHOLD)
    assert change_verdict(between, 0.001) == "faster"
    assert change_verdict(1 / between, 0.001) == "slower"
    # the threshold itself, on either side, is within the noise (strict inequalities)
    assert change_verdict(1 + THRESHOLD, 0.001) == "no significant change"
    assert change_verdict(1 / (1 + THRESHOLD), 0.001) == "no significant change"
    assert change_verdict(0.953, 0.001) == change_verdict(1 / 0.953, 0.001) == "no significant change"
    # and a ratio outside it only counts when significant and finite
    assert change_verdict(0.5, ALPHA) == change_verdict(math.nan, 0.001) == "no significant change"


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
    from jitexp.analysis.instability import instability

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
    from jitexp.analysis.stats import paired_change

    rng = np.random.default_rng(0)
    base = rng.lognormal(0, 0.2, 8)  # processes differ a lot; the pairs move together
    slower = paired_change(list(base), list(base * 1.2 * rng.lognormal(0, 0.02, 8)))
    assert slower["verdict"] == "slower" and slower["ratio_ci_low"] > 1.05 and slower["n_pairs"] == 8
    same = paired_change(list(base), list(base * rng.lognormal(0, 0.02, 8)))
    assert same["verdict"] == "no significant change" and same["ratio_ci_low"] < 1 < same["ratio_ci_high"]
    assert paired_change([1.0, 1.1], [3.0, 3.3])["verdict"] == "cannot tell (2 process pairs)"
    with pytest.raises(ValueError):
        paired_change([1.0], [1.0, 2.0])


def test_paired_change_is_a_paired_estimate_not_a_ratio_of_medians():
    from jitexp.analysis.stats import paired_change

    base = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]  # processes at very different levels (steal, layout)
    new = [v * 1.1 for v in base]
    new[3] = base[3]  # the middle process alone saw no change: a ratio of medians would read 1.0
    # Walsh averages of the log ratios: one 0, six log(1.1)/2, twenty-one log(1.1): their median is log(1.1)
    change = paired_change(base, new)
    assert change["ratio"] == pytest.approx(1.1) and change["ratio_ci_low"] <= 1.1 <= change["ratio_ci_high"]
    assert change["p_value"] < 0.05 and change["verdict"] == "slower"
    assert np.isnan(paired_change([0.0], [1.0])["ratio"])  # a zero time has no ratio
    assert paired_change([*base, 0.0], [*new, 1.0])["n_pairs"] == 7  # nor a pair


# ---- rank intervals: Hodges-Lehmann estimates and the CIs that invert their own tests ----------------

import itertools  # noqa: E402

from hypothesis import event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from jitexp.analysis.stats import (  # noqa: E402
    rank_sum_interval,
    two_sample_change,
)


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_signed_rank_null_distribution_by_enumeration(n):
    sums = [sum(r for r, s in zip(range(1, n + 1), signs) if s) for signs in itertools.product((0, 1), repeat=n)]
    counts = np.bincount(sums, minlength=n * (n + 1) // 2 + 1)
    assert np.allclose(signed_rank_cdf(n), np.cumsum(counts) / 2**n)


@pytest.mark.parametrize("m, n", [(1, 1), (1, 4), (3, 3), (4, 6), (6, 4)])
def test_rank_sum_null_distribution_by_enumeration(m, n):
    # U = pairs (x, y) with y above x: over every way to place the m x's among the m + n ranks
    u = [sum(n - (pos - i) for i, pos in enumerate(xs)) for xs in itertools.combinations(range(m + n), m)]
    counts = np.bincount(u, minlength=m * n + 1)
    assert np.allclose(rank_sum_cdf(m, n), np.cumsum(counts) / math.comb(m + n, m))


def test_p_values_are_scipys_exact_ones_without_ties():
    rng = np.random.default_rng(11)
    for n in (2, 6, 8, 12, 30, EXACT_SIGNED_RANK_MAX_N):
        d = rng.normal(0.2, 1.0, n)
        assert signed_rank_interval(d)[3] == pytest.approx(scipy_stats.wilcoxon(d, method="exact").pvalue, rel=1e-9)
    for m, n in ((2, 3), (6, 6), (8, 8), (5, 12), (12, 12), (25, 30)):
        x, y = rng.normal(0, 1, m), rng.normal(0.5, 1, n)
        ours = rank_sum_interval(x, y)[3]
        assert ours == pytest.approx(scipy_stats.mannwhitneyu(y, x, method="exact").pvalue, rel=1e-9)
    d = rng.normal(0.2, 1.0, 80)  # the normal approximation with continuity correction above 50 pairs
    theirs = scipy_stats.wilcoxon(d, method="approx", correction=True).pvalue
    assert signed_rank_interval(d)[3] == pytest.approx(theirs, rel=1e-3)


def test_hodges_lehmann_estimates_and_intervals_by_hand():
    est, lo, hi, p = signed_rank_interval([0.0, 1.0, 2.0])  # Walsh averages 0, .5, 1, 1, 1.5, 2
    assert est == 1.0 and (lo, hi) == (-math.inf, math.inf)  # 3 pairs: no 95% interval exists
    assert p == pytest.approx(2 * 2 / 8)  # one Walsh average <= 0: 2 P(T <= 1), T of 3 ranks
    d = [0.3, -0.1, 0.5, 0.2, 0.4, 0.25]  # 6 pairs: c = 0, the CI is the smallest and largest Walsh average
    est, lo, hi, p = signed_rank_interval(d)
    assert (lo, hi) == (-0.1, 0.5) and p == pytest.approx(4 / 64)  # one Walsh average (-0.1) below 0
    walsh = sorted((a + b) / 2 for a, b in itertools.combinations_with_replacement(d, 2))
    assert est == pytest.approx(np.median(walsh))
    d8 = np.linspace(0.05, 0.4, 8)  # 8 pairs: c = 3, the 4th smallest and 4th largest Walsh averages
    walsh = sorted((a + b) / 2 for a, b in itertools.combinations_with_replacement(d8, 2))
    assert signed_rank_interval(d8)[1:3] == (walsh[3], walsh[-4])
    est, lo, hi, _ = rank_sum_interval([0.0, 1.0, 2.0], [1.0, 2.0, 3.0])  # differences -1, 0, 0, 1, 1, 1, 2, 2, 3
    assert est == 1.0 and (lo, hi) == (-math.inf, math.inf)
    change = two_sample_change(np.exp([0.0, 1.0, 2.0]), np.exp([1.0, 2.0, 3.0]))
    assert change["ratio"] == pytest.approx(math.e) and change["verdict"] == "cannot tell (3 processes per side)"
    assert all(math.isnan(v) for v in signed_rank_interval([])[:3])


def test_too_few_pairs_give_the_whole_range_and_cannot_tell():
    change = paired_change([1.0] * 5, [2.0] * 5)  # 5 pairs: the smallest two-sided p is 2 / 32 > 0.05
    assert (change["ratio"], change["ratio_ci_low"], change["ratio_ci_high"]) == (2.0, 0.0, math.inf)
    assert change["verdict"] == "cannot tell (5 process pairs)" and change["p_value"] == pytest.approx(2 / 32)
    six = paired_change([1.0] * 6, [2.0] * 6)
    assert six["ratio_ci_low"] == six["ratio_ci_high"] == 2.0 and six["verdict"] == "slower"


def test_between_run_sd_widens_the_interval_and_keeps_p_in_step():
    rng = np.random.default_rng(3)
    base, new = rng.lognormal(0, 0.05, 12), 1.2 * rng.lognormal(0, 0.05, 12)
    plain = two_sample_change(base, new)
    wide = two_sample_change(base, new, between_run_sd=0.1)
    assert plain["ratio"] == wide["ratio"] and plain["verdict"] == "slower"
    assert wide["ratio_ci_low"] < plain["ratio_ci_low"] and wide["ratio_ci_high"] > plain["ratio_ci_high"]
    est, lo, hi = (math.log(wide[k]) for k in ("ratio", "ratio_ci_low", "ratio_ci_high"))
    assert est - lo == pytest.approx(hi - est)  # symmetric about the estimate on the log scale
    se_within = (math.log(plain["ratio_ci_high"]) - math.log(plain["ratio_ci_low"])) / (2 * Z95)
    se = math.sqrt(se_within**2 + 2 * 0.1**2)
    assert hi - est == pytest.approx(Z95 * se)
    assert wide["p_value"] == pytest.approx(2 * scipy_stats.norm.sf(abs(est) / se))
    assert wide["p_value"] > plain["p_value"] and (wide["n_base"], wide["n_new"]) == (12, 12)
    few = two_sample_change(base[:3], new[:3], between_run_sd=0.1)
    assert (few["ratio_ci_low"], few["ratio_ci_high"], few["p_value"]) == (0.0, math.inf, 1.0)


TIMES, JITTERS = (1e-3, 1.5e-3, 2e-3), (1.0, 1.1)  # tied values; a jitter of 1.0 with a shift of 1.0: a zero
shifts = st.sampled_from([1.0, 1.03, 1.3, 3.0])
alphas = st.sampled_from([0.01, 0.05, 0.1])
tied = st.sampled_from([0.0, 0.5, 1.0])  # the share of values drawn from the tied ones
seeds = st.integers(0, 2**32 - 1)


def values(rng: np.random.Generator, n: int, low: float, high: float, tied_from: tuple, share: float) -> list[float]:
    """n values: each from `tied_from` with probability `share`, else uniform in [low, high]."""
    return np.where(rng.random(n) < share, rng.choice(tied_from, n), rng.uniform(low, high, n)).tolist()


# Hypothesis draws each list's size, the share of tied values and a seed, and NumPy the values from the seed: a handful
# of draws an example, where a list of floats drew two or more a value (most of these properties' time went to drawing:
# 0.55 s a run of 300, now 0.25). Half the sizes are small, where the exact intervals are coarsest (hypothesis's lists
# were 7 long on average, rarely over 22); the rest reach the limits. Planted in analysis/stats.py (zeros counted on
# neither side, the critical count one too high or from searchsorted's other side, the interval one order statistic
# in, a one-sided p, half the between-run p, the 1 - alpha/4 quantile), each is caught as often as by the float lists,
# or more (docs/benchmarks.md, issue 60).


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 12) | st.integers(1, 70), share=tied, seed=seeds, alpha=alphas, shift=shifts)
def test_a_paired_ci_excludes_1_exactly_when_p_is_below_alpha(n, share, seed, alpha, shift):
    rng = np.random.default_rng(seed)
    base, jitter = values(rng, n, 1e-3, 2e-3, TIMES, share), values(rng, n, 0.8, 1.25, JITTERS, share)
    new = [a * j * shift for a, j in zip(base, jitter)]
    change = paired_change(base, new, alpha=alpha)
    excludes = change["ratio_ci_low"] > 1 or change["ratio_ci_high"] < 1
    event(f"significant: {excludes}")
    assert excludes == (change["p_value"] < alpha)
    assert change["ratio_ci_low"] <= change["ratio"] <= change["ratio_ci_high"]


@settings(max_examples=300, deadline=None)
@given(
    sizes=st.tuples(st.integers(1, 6) | st.integers(1, 40), st.integers(1, 6) | st.integers(1, 40)),
    share=tied,
    seed=seeds,
    alpha=alphas,
    shift=shifts,
    sd=st.sampled_from([0.0, 0.0, 0.02, 0.3]),
)
def test_a_two_sample_ci_excludes_1_exactly_when_p_is_below_alpha(sizes, share, seed, alpha, shift, sd):
    rng = np.random.default_rng(seed)
    base, new = (values(rng, n, 1e-3, 2e-3, TIMES, share) for n in sizes)
    change = two_sample_change(base, [v * shift for v in new], alpha=alpha, between_run_sd=sd)
    with np.errstate(divide="ignore"):
        low, high = np.log([change["ratio_ci_low"], change["ratio_ci_high"]])
    if sd > 0 and np.isfinite(high - low) and min(abs(low), abs(high)) < 1e-12 * max(1.0, high - low):
        return  # the normal-theory bound sits on 1 itself: rounding, not a disagreement
    excludes = change["ratio_ci_low"] > 1 or change["ratio_ci_high"] < 1
    event(f"significant: {excludes}")
    assert excludes == (change["p_value"] < alpha)
    assert change["ratio_ci_low"] <= change["ratio"] <= change["ratio_ci_high"]
    assert (change["n_base"], change["n_new"]) == (len(base), len(new))


def test_the_speedup_interval_over_processes_and_within_one():
    from jitexp.analysis.speedups import process_medians, speedup_interval

    rng = np.random.default_rng(8)
    groups = simulated_job(rng, 2.0, processes=8, rounds=10)
    medians = process_medians(groups)
    speedup, lo, hi = speedup_interval(medians[:, 0], medians[:, 1])
    est, llo, lhi, _ = signed_rank_interval(np.log(medians[:, 0] / medians[:, 1]))
    assert (speedup, lo, hi) == pytest.approx((math.exp(est), math.exp(llo), math.exp(lhi)))
    assert lo <= 2.0 <= hi and lo <= speedup <= hi
    assert speedup_interval(medians[:4, 0], medians[:4, 1])[1:] == (0.0, math.inf)  # 4 processes: no 95% interval
    boot = hierarchical_medians(groups[:1], seed=0)
    one = speedup_interval(medians[:1, 0], medians[:1, 1], boot[:, 0] / boot[:, 1])
    assert one == (pytest.approx(medians[0, 0] / medians[0, 1]), *percentile_ci(boot[:, 0] / boot[:, 1]))


# ---- the gaps mutation testing found (scripts/mutation.sh analysis/stats.py) -----------------------------------


def test_tukey_outliers_counts_only_beyond_the_fences():
    from jitexp.analysis.stats import tukey_outliers

    # sorted five values: q1 = 4, q3 = 6 (linear percentiles), IQR 2, fences at 4 - 3 = 1 and 6 + 3 = 9
    assert tukey_outliers([1.0, 4.0, 5.0, 6.0, 9.0]) == 0  # on a fence is not beyond it
    assert tukey_outliers([0.9, 4.0, 5.0, 6.0, 9.1]) == 2
    assert tukey_outliers([0.9, 4.0, 5.0, 6.0, 9.1], k=2.0) == 0
    assert tukey_outliers([0, 0, 0, 100]) == 1  # four values are enough (q3 25, upper fence 62.5)
    assert tukey_outliers([0, 0, 100]) == 0  # three are not


def test_summarize_reports_each_figure_of_a_known_sample():
    s = summarize(np.arange(11.0))  # 0..10
    assert (s.p10_s, s.median_s, s.p90_s, s.iqr_s, s.min_s, s.max_s) == (1.0, 5.0, 9.0, 5.0, 0.0, 10.0)
    assert s.std_s == pytest.approx(np.arange(11.0).std(ddof=1)) and s.cv == pytest.approx(s.std_s / 5.0)
    one = summarize([0.5])
    assert (one.std_s, one.cv, one.n_samples) == (0.0, 0.0, 1)  # one sample: no spread, not NaN
    assert summarize([0.4, 0.6]).std_s == pytest.approx(0.1414213562) and summarize([0.4, 0.6]).cv > 0
    assert math.isnan(summarize([0.0, 0.0]).cv)  # no mean to divide by
    with pytest.raises(ValueError, match="^summarize needs at least one sample$"):
        summarize([])


def test_robust_cv_of_two_values_and_of_a_zero_median():
    assert robust_cv([9.0, 11.0]) == pytest.approx(1.4826 * 1.0 / 10.0)
    assert math.isnan(robust_cv([0.0, 0.0, 0.0]))


def test_percentile_ci_takes_the_central_level_of_the_replicates():
    assert percentile_ci(np.arange(1001.0)) == pytest.approx((25.0, 975.0))
    assert percentile_ci(np.arange(1001.0), level=0.9) == pytest.approx((50.0, 950.0))


def test_hierarchical_bootstrap_within_one_process_resamples_its_rounds():
    # one process: only the rounds vary, so its replicates are the plain bootstrap of the rounds' median, for
    # paired rounds (modes resampled together) and for unpaired ones (each mode on its own)
    rng = np.random.default_rng(4)
    rounds = rng.lognormal(0.0, 0.2, (15, 2))
    rounds[:, 1] *= 3  # the second mode three times slower: a replicate is per mode
    theirs = scipy_stats.bootstrap(
        (rounds[:, 0],), np.median, n_resamples=4000, method="percentile", random_state=np.random.default_rng(5)
    ).confidence_interval
    for group in (rounds, Unpaired([rounds[:, 0], rounds[:, 1]])):
        reps = hierarchical_medians([group], n_resamples=4000, seed=2)
        assert reps.shape == (4000, 2)
        assert np.median(reps[:, 1]) / np.median(reps[:, 0]) == pytest.approx(3, rel=0.15)
        low, high = percentile_ci(reps[:, 0])
        assert low == pytest.approx(theirs.low, rel=0.05) and high == pytest.approx(theirs.high, rel=0.05)
    # the default seed is 0: the same replicates on every call
    assert np.array_equal(hierarchical_medians([rounds]), hierarchical_medians([rounds], seed=0))
    with pytest.raises(ValueError, match="^every process needs at least one round$"):
        hierarchical_medians([Unpaired([[], [1.0]])])


def test_mode_samples_and_group_medians_per_mode():
    group = [[1, 10], [2, 20], [3, 30]]  # integers: counted as floats
    assert [list(a) for a in mode_samples(group)] == [[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]]
    assert list(group_medians(group)) == [2.0, 20.0]
    assert list(group_medians(Unpaired([[1.0, 5.0, 9.0], [4.0, 6.0]]))) == [5.0, 5.0]


def test_the_normal_approximations_above_the_exact_range_agree_with_the_exact_distributions():
    # signed rank at n = 60 and rank sum at 40 + 40 are beyond the exact tables: their normal approximation
    # (with continuity correction) must be close to the exact distribution, computed here with Python integers.
    # Computed afresh: a table cached by an earlier test (or, under mutation testing, by the process the test was
    # forked from) would not run the approximation at all
    signed_rank_cdf.cache_clear()
    rank_sum_cdf.cache_clear()
    n = 60
    counts = [1] + [0] * (n * (n + 1) // 2)
    for r in range(1, n + 1):
        counts = [c + (counts[i - r] if i >= r else 0) for i, c in enumerate(counts)]
    exact = np.cumsum(counts) / 2.0**n
    approx = signed_rank_cdf(n)
    assert approx.shape == exact.shape and n > EXACT_SIGNED_RANK_MAX_N
    assert np.abs(approx - exact).max() < 2e-3
    assert approx[len(approx) // 2] == pytest.approx(0.5, abs=0.01)
    m = 40
    approx = rank_sum_cdf(m, m)
    assert approx.shape == (m * m + 1,) and approx[0] < 1e-6 and approx[-1] > 1 - 1e-6
    assert approx[m * m // 2] == pytest.approx(0.5, abs=0.01)
    # P(U <= c) at the normal quantile 1.96 sd below the mean is about 2.5%
    sd = math.sqrt(m * m * (2 * m + 1) / 12)
    assert approx[int(m * m / 2 - 1.96 * sd)] == pytest.approx(0.025, abs=0.003)


def test_signed_rank_interval_of_nothing():
    est, low, high, p = signed_rank_interval([math.nan, math.inf])
    assert math.isnan(est) and math.isnan(low) and math.isnan(high) and p == 1.0


def test_paired_change_uses_its_threshold_and_alpha():
    base = np.full(8, 1.0)
    new = base * np.array([1.06, 1.07, 1.08, 1.06, 1.07, 1.08, 1.06, 1.07])  # 6-8% slower in every pair
    assert paired_change(base, new)["verdict"] == "slower"
    assert paired_change(base, new, threshold=0.1)["verdict"] == "no significant change"  # within 10%
    # one pair faster, its log ratio the second smallest: p = 2 * 3 / 256 = 0.023, significant at 0.05, not at 0.02
    mixed = base * np.array([1.10, 1 / 1.15, 1.20, 1.21, 1.22, 1.23, 1.24, 1.25])
    assert paired_change(base, mixed)["p_value"] == pytest.approx(6 / 256)
    assert paired_change(base, mixed)["verdict"] == "slower"
    assert paired_change(base, mixed, alpha=0.02)["verdict"] == "no significant change"
    # five pairs: 2 / 2**5 = 0.0625 can never pass 0.05, but can pass 0.1
    assert paired_change(base[:5], new[:5])["verdict"].startswith("cannot tell")
    assert paired_change(base[:5], new[:5], alpha=0.1)["verdict"] == "slower"
    with pytest.raises(ValueError, match=r"^paired_change needs the same number \(>= 1\) of values on each side$"):
        paired_change([1.0], [1.0, 2.0])


def test_break_even_at_its_edges():
    # lines that meet after 2 calls, where -lead / gain rounds to 1.0000000000000002: the first guess (3) is walked
    # back to 2, the tolerance holding the float sum -2.8e-17
    assert -(0.3 - 0.4) / (0.2 - 0.1) > 1
    assert break_even(0.3, 0.2, 0.4, 0.1)[0] == 2
    assert break_even(0.01, 0.005, 0.012, 0.001)[0] == 2  # behind after call 1, ahead from call 2
    assert break_even(0.0, 0.002, 0.0, 0.001)[0] == 1  # equal first calls (no tolerance at all): ahead from 1
    # the tolerance is relative to the first calls: 1e-11 s at first calls of ~1 ms is a real difference (4 calls,
    # not 3), far above the rounding of such numbers
    assert break_even(0.001, 0.0001, 0.0011, 0.00005)[0] == 3
    assert break_even(0.001, 0.0001, 0.0011 + 1e-11, 0.00005)[0] == 4
    # a gain of 2**-30 s a call against a 1 s dearer first call: the answer is found at once, not counted up to
    assert break_even(0.0, 2**-30, 1.0, 0.0)[0] == 2**30 + 1
    assert break_even(1.0, 0.0, 0.0, 2**-30) == (math.inf, 2**30 + 1)  # and the other way: ahead that long


def test_rank_sum_interval_and_two_sample_change_with_an_empty_side_or_their_own_threshold_and_alpha():
    from jitexp.analysis.stats import rank_sum_interval, two_sample_change

    for base, new in (([], [1.0]), ([1.0], []), ([], [])):
        est, low, high, p = rank_sum_interval(base, new)
        assert math.isnan(est) and math.isnan(low) and math.isnan(high) and p == 1.0
    base = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0]
    new = [v * 1.07 for v in base]  # 7% slower, every process: p = 2 / C(12, 6) = 0.0022
    assert two_sample_change(base, new)["verdict"] == "slower"
    assert two_sample_change(base, new, threshold=0.1)["verdict"] == "no significant change"
    # three processes a side: p = 2 / C(6, 3) = 0.1, never below 0.05, below 0.2
    assert two_sample_change(base[:3], new[:3])["verdict"] == "cannot tell (3 processes per side)"
    assert two_sample_change(base[:3], new[:3], alpha=0.2)["verdict"] == "slower"


def test_undetectable_names_the_counts_that_can_never_reach_significance():
    from jitexp.analysis.stats import undetectable

    assert [undetectable(n) for n in (0, 1, 2, 5, 6)] == [
        "0 process pairs",
        "1 process pair",
        "2 process pairs",
        "5 process pairs",  # 2 / 2**5 = 0.0625
        None,  # 2 / 2**6 = 0.031
    ]
    assert undetectable(5, alpha=0.1) is None
    assert [undetectable(n, n) for n in (1, 2, 3, 4)] == [
        "1 process per side",
        "2 processes per side",
        "3 processes per side",  # 2 / C(6, 3) = 0.1
        None,  # 2 / C(8, 4) = 0.029
    ]
    assert undetectable(3, 4) == "3 vs 4 processes per side" and undetectable(0, 9) == "0 vs 9 processes per side"


def test_change_verdict_at_alpha_itself_is_not_significant():
    assert change_verdict(2.0, ALPHA) == "no significant change"
    assert change_verdict(2.0, ALPHA - 1e-9) == "slower" and change_verdict(0.5, ALPHA - 1e-9) == "faster"


def test_signed_rank_interval_of_ties_and_of_an_even_count_of_walsh_averages():
    # all ratios 1 (log 0): zeros count on both sides, p = 1; nothing is significant
    assert signed_rank_interval([0.0] * 8)[3] == 1.0
    # three values have six Walsh averages (0.1, 0.15, 0.2, 0.25, 0.3, 0.4): the estimate is the mean of the middle two
    assert signed_rank_interval([0.1, 0.2, 0.4])[0] == pytest.approx(0.225)


def test_ratio_bounds_keep_a_log_interval_that_excludes_zero_off_one():
    from jitexp.analysis.stats import _ratio_bounds

    assert _ratio_bounds(-0.1, 0.2) == (math.exp(-0.1), math.exp(0.2))
    assert _ratio_bounds(0.1, 0.2) == (math.exp(0.1), math.exp(0.2))
    assert _ratio_bounds(-0.2, -0.1) == (math.exp(-0.2), math.exp(-0.1))
    # a bound a hair from 0 would round to exactly 1 and seem to touch it: it stays the next float off 1
    assert _ratio_bounds(1e-17, 0.2) == (math.nextafter(1.0, 2.0), math.exp(0.2))
    assert _ratio_bounds(-0.2, -1e-17) == (math.exp(-0.2), math.nextafter(1.0, 0.0))
    assert _ratio_bounds(0.0, 0.0) == (1.0, 1.0)  # an interval at 0 itself is not moved


def test_undetectable_at_its_edges():
    from jitexp.analysis.stats import undetectable

    assert undetectable(6, alpha=2 / 64) == "6 process pairs"  # the smallest p must be below alpha, not at it
    assert undetectable(4, 4, alpha=2 / 70) == "4 processes per side"
    assert undetectable(6, alpha=0.04) is None  # 2 / 64 = 0.031
    assert undetectable(5, 3) is None  # 2 / C(8, 3) = 0.036
    assert undetectable(1, 40) is None and undetectable(40, 1) is None  # 2 / 41 = 0.049: one process can be enough
    assert undetectable(3, 0) == "3 vs 0 processes per side"


def test_break_even_when_the_compiled_mode_is_ahead_for_one_call_only():
    # 2 ms cheaper first call, 4 ms dearer each call after: level or ahead at call 1 only
    assert break_even(0.012, 0.001, 0.01, 0.005) == (math.inf, 1)


def test_verdict_of_an_interval_on_1_or_without_a_bound():
    # a bound on 1 itself is not beyond it
    assert verdict(1.0, 1.5) == verdict(0.5, 1.0) == "no significant difference"
    # no interval: a lower bound of 0 (or none) or an upper bound that is not finite, whatever the other bound
    cannot = "cannot tell (fewer than 6 processes for a 95% interval)"
    assert verdict(0.0, math.inf) == verdict(0.0, 0.5) == verdict(1.5, math.inf) == verdict(math.nan, 0.5) == cannot
