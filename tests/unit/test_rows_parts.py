"""rows' parts fed hand-made worker records: the steady-state columns of one mode (_steady), the disk-cache probe's
columns (cache_columns) and the profile worker's (profile_outputs)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jitexp.analysis.rows import _steady, cache_columns, profile_outputs
from jitexp.errors import Failure
from jitexp.records import Cold, ModeResult, ProcessResult, Profile


def sampled(samples: list[float], number: int = 10, compiles: int | None = 0) -> ModeResult:
    return ModeResult(samples_s=np.array(samples), number=number, compiles_during_timing=compiles)


def test_steady_columns_of_two_processes_against_hand_counted_values():
    results = [
        ProcessResult(0, {"jit": sampled([1.0, 1.0, 1.0, 1.0, 9.0], number=10, compiles=2)}),
        ProcessResult(1, {"jit": sampled([2.0, 2.0, 3.0, 3.0], number=25, compiles=None)}),
        ProcessResult(2, {"jit": ModeResult(Failure("execute", "ValueError", "bad", ""))}),  # no samples: left out
        ProcessResult(3, {"eager": sampled([7.0, 7.0])}),  # no such mode: left out
    ]
    # the replicates' 2.5th and 97.5th percentiles are 1.0 and 3.0: a half-width of (3 - 1) / 2 / 2.0 = 0.5
    row = _steady(results, "jit", 2.0, np.array([1.0, 1.0, 3.0, 3.0]), 0.5)
    assert (row["median_s"], row["ci95_low_s"], row["ci95_high_s"]) == (2.0, 1.0, 3.0)
    assert row["rel_ci_halfwidth"] == 0.5 and row["ci_target_met"] is True
    assert row["number"] == 17 and isinstance(row["number"], int)  # the median of 10 and 25, whole calls
    assert row["n_outliers"] == 1  # the 9.0, beyond its process's quartiles 1.0 and 1.0
    assert row["compiles_during_timing"] == 2
    # process medians 1.0 and 2.5: robust cv = 1.4826 * MAD 0.75 / median 1.75
    assert row["process_rel_spread"] == pytest.approx(1.4826 * 0.75 / 1.75)
    # within: robust cv 0 (MAD 0) and 1.4826 * 0.5 / 2.5, their median
    assert row["within_process_rel_spread"] == pytest.approx(1.4826 * 0.5 / 2.5 / 2)
    assert (row["process_median_min_s"], row["process_median_max_s"]) == (1.0, 2.5)
    # the pooled samples' summary: 1, 1, 1, 1, 2, 2, 3, 3, 9
    assert (row["n_samples"], row["min_s"], row["max_s"]) == (9, 1.0, 9.0)
    assert row["mean_s"] == pytest.approx(23 / 9)
    assert (row["p10_s"], row["iqr_s"]) == (1.0, 2.0)
    assert set(row) == {
        "n_samples",
        "mean_s",
        "std_s",
        "min_s",
        "max_s",
        "p10_s",
        "p90_s",
        "iqr_s",
        "cv",
        "median_s",
        "ci95_low_s",
        "ci95_high_s",
        "rel_ci_halfwidth",
        "ci_target_met",
        "number",
        "n_outliers",
        "compiles_during_timing",
        "process_rel_spread",
        "within_process_rel_spread",
        "process_median_min_s",
        "process_median_max_s",
    }


def test_steady_of_one_process_has_no_spread_between_processes_and_misses_a_tighter_target():
    results = [ProcessResult(0, {"jit": sampled([4.0, 4.0, 4.0, 4.0, 5.0], number=3, compiles=None)})]
    row = _steady(results, "jit", 4.0, np.array([3.0, 3.0, 5.0, 5.0]), 0.2)
    assert row["rel_ci_halfwidth"] == 0.25 and row["ci_target_met"] is False
    assert math.isnan(row["process_rel_spread"]) and row["within_process_rel_spread"] == 0.0
    assert (row["number"], row["compiles_during_timing"], row["n_outliers"]) == (3, 0, 1)
    assert (row["process_median_min_s"], row["process_median_max_s"]) == (4.0, 4.0)


def cold(first: float, trace: float = 0.1, lower: float = 0.2, compile: float = 0.3) -> Cold:
    return Cold(first, trace, lower, compile, first - trace - lower - compile, 1)


def probe(modes: dict[str, ModeResult]) -> ProcessResult:
    return ProcessResult(0, modes)


def test_cache_columns_pair_the_cold_and_the_warm_probe_per_mode():
    cold_probe = probe(
        {
            "eager": ModeResult(),  # no cold call: no columns (and the modes after it still get theirs)
            "jit": ModeResult(cold=cold(2.0, 0.1, 0.2, 1.5)),
            "aot": ModeResult(cold=cold(3.0)),
            "numpy": ModeResult(cold=cold(1.0)),  # the warm probe has no such mode
        }
    )
    warm_probe = probe(
        {
            "jit": ModeResult(cold=cold(0.5, 0.11, 0.22, 0.05), cache_hits=1, cache_misses=0),
            "aot": ModeResult(cold=cold(2.9), cache_hits=2, cache_misses=1),
            "eager": ModeResult(cold=cold(1.0)),
        }
    )
    out = cache_columns(cold_probe, warm_probe)
    assert out == {
        "jit": {
            "cache_cold_first_call_s": 2.0,
            "cache_warm_first_call_s": 0.5,
            "cache_cold_compile_s": 1.5,
            "cache_warm_compile_s": 0.05,
            "cache_warm_trace_s": 0.11,
            "cache_warm_lower_s": 0.22,
            "cache_hit": True,
        },
        "aot": {
            "cache_cold_first_call_s": 3.0,
            "cache_warm_first_call_s": 2.9,
            "cache_cold_compile_s": 0.3,
            "cache_warm_compile_s": 0.3,
            "cache_warm_trace_s": 0.1,
            "cache_warm_lower_s": 0.2,
            "cache_hit": False,
        },
    }


@pytest.mark.parametrize(
    "hits, misses, hit",
    [(1, 0, True), (3, 0, True), (0, 0, False), (None, 0, False), (None, None, False), (2, None, False), (1, 1, False)],
)
def test_a_cache_hit_is_a_hit_with_no_miss(hits, misses, hit):
    warm = probe({"jit": ModeResult(cold=cold(0.5), cache_hits=hits, cache_misses=misses)})
    assert cache_columns(probe({"jit": ModeResult(cold=cold(2.0))}), warm)["jit"]["cache_hit"] is hit


def test_cache_columns_skip_a_mode_whose_warm_call_is_missing():
    warm = probe({"jit": ModeResult(Failure("compile", "ValueError", "no", ""))})  # failed: no cold call
    assert cache_columns(probe({"jit": ModeResult(cold=cold(2.0)), "aot": ModeResult(cold=cold(2.0))}), warm) == {}


def row(mode: str) -> dict:
    return {"job_num": 2, "workload": "fn", "size": 8, "mode": mode}


def test_profile_outputs_fill_each_profiled_mode_and_say_why_another_is_not():
    profile = Profile(
        calls=4,
        wall_s=2.0,
        execute_s=0.3,
        events=[{"name": "fusion", "dur_s": 0.1}, {"name": "copy", "dur_s": 0.2}],
        files={"trace.json.gz": b"abc", "host.xplane.pb": b"de"},
    )
    result = ProcessResult(
        0,
        {
            "eager": ModeResult(profile=Profile(1, 1.0, 1.0, [{"name": "x"}], {"e": b"x"})),  # not a compiled mode
            "aot": ModeResult(Failure("compile", "ValueError", "aot broke", "")),
            "jit": ModeResult(profile=profile),
        },
    )
    rows = [row("eager"), row("aot"), row("jit"), row("numpy")]
    events, files = profile_outputs(result, rows)
    assert rows[2] == {**row("jit"), "profile_calls": 4, "profile_step_s": 0.5, "profile_execute_s": 0.3}
    assert rows[1] == {**row("aot"), "profile_error": "aot broke"}
    assert rows[0] == row("eager") and rows[3] == row("numpy")
    assert events == [
        {"job_num": 2, "workload": "fn", "size": 8, "mode": "jit", "name": "fusion", "dur_s": 0.1},
        {"job_num": 2, "workload": "fn", "size": 8, "mode": "jit", "name": "copy", "dur_s": 0.2},
    ]
    assert files == {"profile/jit/trace.json.gz": b"abc", "profile/jit/host.xplane.pb": b"de"}


def test_a_failed_profile_worker_gives_its_error_to_every_compiled_mode():
    failed = ProcessResult(
        0,
        {"jit": ModeResult(Failure("trace", "E", "mode broke", ""))},
        error=Failure("execute", "Timeout", "worker died", ""),
    )
    rows = [row("jit"), row("aot")]
    assert profile_outputs(failed, rows) == ([], {})
    assert [r["profile_error"] for r in rows] == ["worker died", "worker died"]


def test_a_compiled_mode_the_profile_worker_did_not_profile_says_so():
    rows = [row("jit"), row("aot")]
    assert profile_outputs(ProcessResult(0, {"jit": ModeResult()}), rows) == ([], {})
    assert [r["profile_error"] for r in rows] == ["not profiled", "not profiled"]


def test_no_profile_worker_leaves_the_rows_alone():
    rows = [row("jit")]
    assert profile_outputs(None, rows) == ([], {}) and rows == [row("jit")]
