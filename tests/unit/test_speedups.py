"""speedups: per-process medians, the speedup interval, the A/B columns and whether a job is within its CI target,
from hand-made worker records (no processes, no JAX)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from jitexp.analysis.speedups import (
    ab_columns,
    ci_met,
    pair_values,
    paired,
    paired_groups,
    process_medians,
    speedup_interval,
    variant_pairs,
    vs_numpy,
)
from jitexp.analysis.stats import Unpaired
from jitexp.errors import Failure
from jitexp.records import Cold, ConfigProblem, ModeResult, ProcessResult

CRASH = Failure("execute", "SIGSEGV", "crash", "")


def mode(*samples: float, cold: Cold | None = None, error: Failure | None = None) -> ModeResult:
    return ModeResult(error=error, cold=cold, samples_s=np.array(samples) if samples else None)


def proc(p: int, error: Failure | None = None, **modes: ModeResult) -> ProcessResult:
    return ProcessResult(p, modes=dict(modes), error=error)


def variants(p: int, **by_variant: dict[str, ModeResult]) -> ProcessResult:
    return ProcessResult(p, variants=dict(by_variant))


def cold(first_call_s: float, compile_s: float) -> Cold:
    return Cold(first_call_s, 0.0, 0.0, compile_s, 0.0, 1)


# ---- paired_groups, process_medians ----------------------------------------------------------------------------


def test_paired_groups_keeps_the_modes_every_sampled_process_has_as_columns_of_its_rounds():
    results = [
        proc(0, eager=mode(2.0, 4.0), jit=mode(1.0, 3.0), aot=mode(5.0, 5.0)),
        proc(1, eager=mode(6.0, 8.0), jit=mode(7.0, 9.0), aot=mode()),  # aot not sampled here
        proc(2, error=CRASH),  # a failed process neither counts nor vetoes
        ProcessResult(3, config_error=ConfigProblem("device", "tpu:9", "a device index below 1")),
    ]
    live, groups = paired_groups(results, ("eager", "jit", "aot", "numpy"))
    assert live == ["eager", "jit"]
    assert [g.tolist() for g in groups] == [[[2.0, 1.0], [4.0, 3.0]], [[6.0, 7.0], [8.0, 9.0]]]


def test_paired_groups_unpaired_keeps_each_modes_samples_apart_and_nothing_sampled_gives_nothing():
    live, groups = paired_groups([proc(0, eager=mode(2.0, 4.0, 6.0), jit=mode(1.0))], ("eager", "jit"), unpaired=True)
    assert live == ["eager", "jit"]
    (group,) = groups
    assert isinstance(group, Unpaired) and [a.tolist() for a in group] == [[2.0, 4.0, 6.0], [1.0]]
    assert paired_groups([proc(0, error=CRASH)], ("jit",)) == ([], [])
    assert paired_groups([proc(0, eager=mode(1.0))], ("jit",)) == ([], [])  # no process sampled jit


def test_process_medians_has_a_row_per_process_and_a_column_per_mode():
    same_rounds = [np.array([[1.0, 10.0], [3.0, 30.0], [8.0, 20.0]]), np.array([[5.0, 1.0], [6.0, 2.0], [7.0, 3.0]])]
    assert process_medians(same_rounds).tolist() == [[3.0, 20.0], [6.0, 2.0]]
    other_rounds = [np.array([[1.0, 10.0], [3.0, 30.0]]), np.array([[5.0, 1.0], [6.0, 2.0], [7.0, 3.0]])]
    assert process_medians(other_rounds).tolist() == [[2.0, 20.0], [6.0, 2.0]]
    # unpaired modes of equal length too: a median per mode, never across modes
    unpaired = [Unpaired([np.array([1.0, 2.0, 9.0]), np.array([4.0, 5.0, 6.0])])]
    assert process_medians(unpaired).tolist() == [[2.0, 5.0]]


# ---- speedup_interval -------------------------------------------------------------------------------------------


def test_the_speedup_over_processes_is_the_hodges_lehmann_ratio_with_the_signed_rank_interval():
    # log2 of the ratios 0..5: the Walsh averages' median is 2.5; with 6 processes the 95% CI is their extremes
    speedup, lo, hi = speedup_interval(np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0]), np.ones(6))
    assert speedup == pytest.approx(2**2.5) and (lo, hi) == pytest.approx((1.0, 32.0))


def test_a_ratio_without_a_log_is_left_out_of_the_speedup():
    base = np.array([0.0, 2.0, 2.0, 2.0, 2.0, 2.0, 8.0, 2.0, math.nan])
    new = np.array([1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    speedup, lo, hi = speedup_interval(base, new, np.array([5.0]))  # 6 finite ratios: the replicates are not used
    assert speedup == pytest.approx(2.0) and (lo, hi) == pytest.approx((2.0, 8.0))


def test_a_ratio_without_a_log_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        speedup_interval(np.array([1.0, 0.0, 0.0, -1.0, 2.0, 2.0]), np.array([0.0, 0.0, 1.0, 1.0, 1.0, 1.0]))


def test_two_processes_have_a_speedup_but_no_interval_even_with_replicates():
    assert speedup_interval(np.array([2.0, 2.0]), np.ones(2), np.array([1.0, 3.0])) == (2.0, 0.0, math.inf)


def test_one_process_gives_its_ratio_of_medians_and_the_percentile_interval_of_its_replicates():
    replicates = np.linspace(1.0, 5.0, 401)
    speedup, lo, hi = speedup_interval(np.array([3.0]), np.array([2.0]), replicates)
    assert speedup == 1.5 and (lo, hi) == pytest.approx((1.1, 4.9))
    # its only ratio has no log: no estimate, the interval still from the replicates
    speedup, lo, hi = speedup_interval(np.array([3.0]), np.array([0.0]), replicates)
    assert math.isnan(speedup) and (lo, hi) == pytest.approx((1.1, 4.9))


# ---- ci_met -----------------------------------------------------------------------------------------------------


def test_ci_met_without_any_sampled_process_has_nothing_to_refine():
    assert ci_met([proc(0, error=CRASH)], ("jit",), 0.0)
    assert ci_met([proc(0, error=CRASH), proc(1, error=CRASH)], ("eager", "jit"), 0.0)


@pytest.mark.parametrize(("target", "met"), [(0.5, True), (0.49, False)])
def test_ci_met_of_one_mode_compares_the_half_width_of_the_bootstrap_interval_with_its_median(target, met):
    # rounds 1 and 3: the replicated medians are 1, 2 and 3, so the 95% interval is 1-3 around the median 2
    assert ci_met([proc(0, jit=mode(1.0, 3.0))], ("jit",), target) == met


@pytest.mark.parametrize(("target", "met"), [(0.2963, True), (0.2962, False)])
def test_ci_met_of_one_mode_draws_1000_bootstrap_replicates(target, met):
    # their 95% interval (seed 0) is 1.05-1.85 around the median of process medians 1.35: half-width 0.29630 medians
    rounds = [[1.0, 1.25, 1.5], [1.1, 1.7, 2.0], [0.9, 1.3, 1.6], [1.2, 1.4, 2.2]]
    assert ci_met([proc(p, jit=mode(*r)) for p, r in enumerate(rounds)], ("jit",), target) == met


def test_ci_met_of_constant_samples_is_met_at_a_zero_target():
    assert ci_met([proc(0, jit=mode(2.0, 2.0, 2.0))], ("jit",), 0.0)
    assert ci_met([proc(p, eager=mode(2.0, 2.0), jit=mode(1.0, 1.0)) for p in range(6)], ("eager", "jit"), 0.0)


@pytest.mark.parametrize(("target", "met"), [(1.5, True), (1.49, False)])
def test_ci_met_of_paired_modes_compares_the_half_width_of_the_speedup_interval_with_the_speedup(target, met):
    # ratios 2, 2, 2, 2, 2, 8: speedup 2, interval 2-8, half-width 3 = 1.5 speedups
    results = [proc(p, eager=mode(8.0 if p == 5 else 2.0), jit=mode(1.0)) for p in range(6)]
    assert ci_met(results, ("eager", "jit"), target * (1 + 1e-12)) == met


def test_ci_met_checks_every_mode_against_the_baseline():
    good = [proc(p, eager=mode(2.0), jit=mode(1.0), aot=mode(1.0 + p)) for p in range(6)]
    assert not ci_met(good, ("eager", "jit", "aot"), 0.1)  # aot's speedup varies 6x
    assert ci_met(good, ("eager", "jit"), 0.1)


@pytest.mark.parametrize(("target", "met"), [(0.5, True), (0.49, False)])
def test_ci_met_of_one_process_uses_the_interval_of_its_resampled_rounds(target, met):
    # rounds (2, 1) and (6, 1) resampled together: ratios 2, 4, 6 around the speedup 4: half-width 2 = 0.5 speedups
    assert ci_met([proc(0, eager=mode(2.0, 6.0), jit=mode(1.0, 1.0))], ("eager", "jit"), target) == met


@pytest.mark.parametrize(("target", "met"), [(0.0705, True), (0.0704, False)])
def test_ci_met_of_one_process_draws_1000_replicates_of_its_rounds(target, met):
    # their 95% interval (seed 0) is 2.0-2.31 around the speedup 2.2: half-width 0.07045 speedups
    eager = mode(2.3, 2.0, 2.0, 2.2, 2.9, 2.2, 2.7, 2.2, 2.1)
    assert ci_met([proc(0, eager=eager, jit=mode(*[1.0] * 9))], ("eager", "jit"), target) == met


def test_ci_met_of_unpaired_modes_resamples_each_modes_rounds_on_its_own():
    # paired, round 1 is 2x and round 2 is 2x: every replicate's ratio is 2; unpaired, the rounds mix
    results = [proc(0, eager=mode(2.0, 4.0), jit=mode(1.0, 2.0))]
    assert ci_met(results, ("eager", "jit"), 0.0)
    assert not ci_met(results, ("eager", "jit"), 0.0, unpaired=True)


def test_ci_met_of_two_processes_has_no_interval_even_when_one_ratio_has_no_log():
    # process 1's eager median is 0, which leaves one ratio with a log: the processes are still two, whose rounds
    # give no interval as one process's would
    results = [proc(0, eager=mode(2.0, 2.0), jit=mode(1.0, 1.0)), proc(1, eager=mode(0.0, 0.0), jit=mode(1.0, 1.0))]
    assert not ci_met(results, ("eager", "jit"), 1.0)


# ---- ci_met with variants ---------------------------------------------------------------------------------------


def test_ci_met_with_variants_needs_each_variant_within_target():
    tight = {"jit": mode(1.0, 1.0)}
    assert ci_met([variants(0, a=tight, b=tight)], ("jit",), 0.0)
    assert not ci_met([variants(0, a=tight, b={"jit": mode(1.0, 3.0)})], ("jit",), 0.49)
    assert not ci_met([variants(0, a={"jit": mode(1.0, 3.0)}, b=tight)], ("jit",), 0.49)


def test_ci_met_with_variants_skips_the_ratio_of_fewer_than_two_process_pairs():
    one = [variants(0, a={"jit": mode(1.0, 1.0)}, b={"jit": mode(2.0, 2.0)})]
    assert ci_met(one, ("jit",), 0.0)
    # b failed everywhere: no steady pair at all
    failed = [variants(p, a={"jit": mode(1.0, 1.0)}, b={"jit": mode(error=CRASH)}) for p in range(2)]
    assert ci_met(failed, ("jit",), 0.0)


def test_ci_met_with_variants_of_two_process_pairs_has_no_ratio_interval():
    two = [variants(p, a={"jit": mode(1.0, 1.0)}, b={"jit": mode(2.0, 2.0)}) for p in range(2)]
    assert not ci_met(two, ("jit",), 1.0)


@pytest.mark.parametrize(("target", "met"), [(1.5, True), (1.49, False)])
def test_ci_met_with_variants_compares_the_half_width_of_the_steady_ratio_interval_with_the_ratio(target, met):
    # b / a per process 2, 2, 2, 2, 2, 8: ratio 2, interval 2-8: half-width 3 = 1.5 ratios; a alone is tight
    results = [variants(p, a={"jit": mode(1.0)}, b={"jit": mode(8.0 if p == 5 else 2.0)}) for p in range(6)]
    assert ci_met(results, ("jit",), target * (1 + 1e-12)) == met


def test_ci_met_with_variants_of_an_exact_ratio_is_met_at_a_zero_target():
    results = [variants(p, a={"jit": mode(1.0, 1.0)}, b={"jit": mode(2.0, 2.0)}) for p in range(6)]
    assert ci_met(results, ("jit",), 0.0)


def test_ci_met_with_variants_goes_on_to_the_next_mode_after_one_without_pairs():
    # b's eager failed everywhere: no eager pair; its jit against a's still counts
    results = [
        variants(
            p,
            a={"eager": mode(2.0), "jit": mode(1.0)},
            b={"eager": mode(error=CRASH), "jit": mode(8.0 if p == 5 else 2.0)},
        )
        for p in range(6)
    ]
    assert ci_met(results, ("eager", "jit"), 1.5 * (1 + 1e-12))
    assert not ci_met(results, ("eager", "jit"), 1.49)


def test_ci_met_with_variants_compares_every_variant_with_the_first():
    def varied(p: int) -> dict[str, ModeResult]:
        return {"jit": mode(8.0 if p == 5 else 2.0)}

    results = [variants(p, a={"jit": mode(1.0)}, b=varied(p), c=varied(p)) for p in range(6)]
    assert ci_met(results, ("jit",), 1.5 * (1 + 1e-12))
    assert not ci_met(results, ("jit",), 1.49)  # c against b would be exact: each is compared with a


# ---- pair_values, variant_pairs ---------------------------------------------------------------------------------


def test_pair_values_takes_the_median_sample_and_the_cold_call_of_each_pair():
    measured = [
        mode(3.0, 1.0, 2.0, cold=cold(0.5, 0.25)),
        None,
        mode(error=CRASH, cold=cold(0.5, 0.25)),  # a failed mode's figures are not its values
        mode(4.0, 2.0),  # no cold call
        mode(cold=cold(0.75, 0.125)),  # no samples
        ModeResult(samples_s=np.array([])),
    ]
    assert pair_values(measured) == {
        "steady": [2.0, None, None, 3.0, None, None],
        "first_call": [0.5, None, None, None, 0.75, None],
        "compile": [0.25, None, None, None, 0.125, None],
    }
    assert pair_values([]) == {"steady": [], "first_call": [], "compile": []}


def test_variant_pairs_has_a_pair_per_process_even_where_the_variant_or_mode_is_missing():
    results = [
        variants(0, a={"jit": mode(1.0, cold=cold(0.5, 0.25))}, b={"jit": mode(2.0)}),
        variants(1, a={"eager": mode(3.0)}),  # a ran no jit here
        variants(2, b={"jit": mode(4.0)}),  # no a at all
    ]
    assert variant_pairs(results, "a", "jit") == {
        "steady": [1.0, None, None],
        "first_call": [0.5, None, None],
        "compile": [0.25, None, None],
    }
    assert variant_pairs(results, "b", "jit")["steady"] == [2.0, None, 4.0]


# ---- paired, vs_numpy, ab_columns -------------------------------------------------------------------------------


def test_paired_columns_carry_the_interval_its_verdict_and_the_break_even_of_the_two_modes():
    baseline = {"mode": "eager", "median_s": 0.5, "first_call_s": 1.0}
    row = {"mode": "jit", "median_s": 0.25, "first_call_s": 3.0}
    # 2 s behind after the first call, 0.25 s gained per call: level after call 9
    cols = paired(baseline, row, (2.0, 1.5, 2.5))
    assert math.isnan(cols.pop("ahead_until_calls"))  # only when the mode's steady state is slower
    assert cols == {
        "baseline_mode": "eager",
        "speedup": 2.0,
        "speedup_ci_low": 1.5,
        "speedup_ci_high": 2.5,
        "verdict": "faster",
        "break_even_calls": 9.0,
    }
    slower = paired(baseline, {"mode": "jit", "median_s": 1.0, "first_call_s": 0.25}, (0.5, 0.25, 0.75))
    # 0.75 s ahead after call 1, 0.5 s lost per later call: still ahead (level) at call 2, behind from call 3
    assert (slower["verdict"], slower["break_even_calls"], slower["ahead_until_calls"]) == ("slower", math.inf, 2.0)


def test_paired_without_a_first_call_has_no_break_even():
    cols = paired({"mode": "eager", "median_s": 0.5}, {"mode": "jit", "median_s": 0.25}, (2.0, 0.0, math.inf))
    assert math.isnan(cols["break_even_calls"]) and math.isnan(cols["ahead_until_calls"])
    assert cols["verdict"] == "cannot tell (fewer than 6 processes for a 95% interval)"


def test_vs_numpy_columns_carry_the_interval_and_its_verdict():
    assert vs_numpy((3.0, 2.5, 3.5)) == {
        "speedup_vs_numpy": 3.0,
        "speedup_vs_numpy_ci_low": 2.5,
        "speedup_vs_numpy_ci_high": 3.5,
        "verdict_vs_numpy": "faster",
    }
    assert vs_numpy((0.5, 0.25, 0.75))["verdict_vs_numpy"] == "slower"


def test_ab_columns_leave_out_a_pair_without_a_positive_finite_value_on_either_side():
    ok = [1.0, 2.0, 4.0]
    base = {"steady": [None, 1.0, math.nan, 1.0, 0.0, 1.0, *ok], "first_call": ok}
    new = {"steady": [2.0, None, 2.0, math.inf, 2.0, -1.0, *ok], "first_call": [2.0 * v for v in ok]}
    cols = ab_columns("a", base, new)
    assert cols["ab_baseline"] == "a"
    assert (cols["ab_steady_n_pairs"], cols["ab_steady_ratio"]) == (3, 1.0)
    assert (cols["ab_first_call_n_pairs"], cols["ab_first_call_ratio"]) == (3, 2.0)
    assert cols["ab_first_call_verdict"] == "cannot tell (3 process pairs)"
    assert "n_pairs" not in cols and not any(k.startswith("ab_compile") for k in cols)  # compile on neither side
    assert ab_columns("a", {"compile": [1.0]}, {}) == {"ab_baseline": "a"}


@pytest.mark.parametrize(
    ("a", "b"), [(None, 1.0), (1.0, None), (math.nan, 1.0), (1.0, math.inf), (0.0, 1.0), (1.0, 0.0), (1.0, -1.0)]
)
def test_ab_columns_of_no_valid_pair_has_no_metric_columns(a, b):
    assert ab_columns("a", {"steady": [a]}, {"steady": [b]}) == {"ab_baseline": "a"}


def test_ab_columns_go_on_to_the_next_metric_after_one_without_pairs():
    cols = ab_columns("a", {"steady": [None, None], "compile": [1.0, 2.0]}, {"compile": [2.0, 4.0]})
    assert (cols["ab_compile_n_pairs"], cols["ab_compile_ratio"]) == (2, 2.0)
    assert not any(k.startswith("ab_steady") for k in cols)


def test_ab_columns_keep_values_between_0_and_1():
    cols = ab_columns("a", {"steady": [0.5, 0.25]}, {"steady": [0.25, 0.125]})
    assert (cols["ab_steady_n_pairs"], cols["ab_steady_ratio"]) == (2, 0.5)
