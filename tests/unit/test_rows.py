"""rows: synthetic worker results in, results/samples/processes/calls rows out (no processes, no JAX)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jitexp.analysis.rows import job_result
from jitexp.analysis.speedups import ci_met
from jitexp.config import ExperimentConfig, ModeConfig, WorkloadConfig
from jitexp.errors import Failure
from jitexp.records import EXTRA_FIELDS, Cold, Extras, JobRaw, ModeResult, ProcessResult
from jitexp.store.schema import COLUMNS, PROCESS_COLUMNS


def config(*modes: str) -> ExperimentConfig:
    workload = WorkloadConfig(fn="jitexp.workloads.add_one", args=[{"shape": [8]}], params={"k": 3})
    return ExperimentConfig(workload=workload, mode=ModeConfig(**{m: True for m in modes}), size=8)


def mode(
    seconds: float, rounds: int = 12, first_call_s: float = 0.05, position: int = 0, cold: Cold | None = None, **extras
) -> ModeResult:
    rng = np.random.default_rng(int(seconds * 1e6) + position)
    samples = seconds * (1 + 0.001 * rng.standard_normal(rounds))
    e = Extras()
    e.update(extras)
    return ModeResult(
        cold_position=position,
        cold=cold or Cold(first_call_s, 0.004, 0.006, 0.02, first_call_s - 0.03, 3),
        samples_s=samples,
        number=100,
        stop_reason="ci",
        compiles_during_timing=0,
        extras=e,
    )


def process(p: int, eager_s: float = 2e-3, jit_s: float = 1e-3) -> ProcessResult:
    return ProcessResult(
        p,
        {
            "eager": mode(eager_s, first_call_s=0.2, position=p % 2, flops=10.0),
            "jit": mode(jit_s, position=1 - p % 2, flops=10.0),
        },
        platform="cpu",
        device_kind="cpu",
        environment={"cpu_count": 64},
        measure_s=1.0,
    )


def test_paired_speedup_has_its_known_answer_ci_verdict_and_break_even():
    # six processes: the fewest whose paired speedup can have a 95% CI (signed-rank: 2 / 2**6 < 0.05)
    raw = JobRaw([process(p) for p in range(6)], "ci", load_avg_start=0.0, load_avg_end=0.0)
    result = job_result(config("eager", "jit"), raw, job_num=7, overrides="size=8")
    eager, jit = result.by_mode("eager"), result.by_mode("jit")
    assert jit["speedup"] == pytest.approx(2.0, rel=0.01)
    assert jit["speedup_ci_low"] <= jit["speedup"] <= jit["speedup_ci_high"] and jit["verdict"] == "faster"
    assert jit["baseline_mode"] == "eager" and "speedup" not in eager
    # the cold lines cross when 0.05 + 1e-3 (n - 1) < 0.2 + 2e-3 (n - 1): jit is ahead from the first call
    assert jit["break_even_calls"] == 1
    assert (jit["n_processes"], jit["ci_scope"], jit["status"]) == (6, "between_processes", "ok")
    assert jit["first_call_s"] == pytest.approx(0.05) and jit["first_call_compiles"] == 3
    # each part lands in its own column (the three event durations are distinct here: a swap shows)
    assert (jit["trace_s"], jit["lower_s"], jit["compile_s"]) == (0.004, 0.006, 0.02)
    assert jit["execute_s"] == pytest.approx(0.02) and eager["compile_s"] == 0.02
    assert jit["gflops_per_s"] == pytest.approx(10.0 / jit["median_s"] / 1e9)
    assert (jit["param_k"], jit["job_num"], jit["overrides"]) == (3, 7, "size=8")
    assert len(result.samples) == 6 * 2 * 12 and len(result.processes) == 12
    assert {p["cold_position"] for p in result.processes if p["mode"] == "jit"} == {0, 1}


def test_the_cold_call_and_its_parts_come_from_one_observed_process():
    # Five processes whose cold calls differ, with parts ordered unlike the totals: the per-part medians
    # (0.004, 0.006, 0.02, 0.012) or any one part from another process would not be the median process's call.
    colds = [
        Cold(0.090, 0.002, 0.009, 0.030, 0.049, 4),
        Cold(0.050, 0.006, 0.004, 0.010, 0.030, 2),
        Cold(0.070, 0.008, 0.006, 0.044, 0.012, 3),  # the median first call: its parts are the row's
        Cold(0.060, 0.004, 0.008, 0.020, 0.028, 5),
        Cold(0.080, 0.010, 0.002, 0.060, 0.008, 1),
    ]
    processes = [
        ProcessResult(p, {"jit": mode(1e-3, position=0, cold=cold)}, platform="cpu", device_kind="cpu")
        for p, cold in enumerate(colds)
    ]
    (row,) = job_result(config("jit"), JobRaw(processes, "ci")).rows
    assert (row["first_call_s"], row["trace_s"], row["lower_s"], row["compile_s"], row["execute_s"]) == (
        0.070,
        0.008,
        0.006,
        0.044,
        0.012,
    )
    assert row["first_call_compiles"] == 3
    assert row["first_call_ci95_low_s"] <= 0.070 <= row["first_call_ci95_high_s"]
    # processes.csv keeps every process's own call, unchanged
    by_process = {r["process"]: r for r in job_result(config("jit"), JobRaw(processes, "ci")).processes}
    for p, cold in enumerate(colds):
        got = tuple(by_process[p][k] for k in ("first_call_s", "trace_s", "lower_s", "compile_s", "execute_s"))
        assert got == (cold.first_call_s, cold.trace_s, cold.lower_s, cold.compile_s, cold.execute_s)
        assert by_process[p]["first_call_compiles"] == cold.first_call_compiles


@pytest.mark.parametrize("firsts", [(0.080, 0.060), (0.050, 0.090, 0.070, 0.060)])
def test_an_even_count_of_processes_gives_the_lower_median_cold_call(firsts):
    # two or four processes whose cold calls differ: the row's call is the lower of the two middle ones (0.060),
    # an observed call with its own parts, neither the upper one (0.080 / 0.070) nor their mean
    colds = [Cold(f, f / 10, f / 5, f / 4, f - f / 10 - f / 5 - f / 4, round(f * 100)) for f in firsts]
    processes = [
        ProcessResult(p, {"jit": mode(1e-3, position=0, cold=cold)}, platform="cpu", device_kind="cpu")
        for p, cold in enumerate(colds)
    ]
    (row,) = job_result(config("jit"), JobRaw(processes, "ci")).rows
    lower = Cold(0.060, 0.006, 0.012, 0.015, 0.060 - 0.006 - 0.012 - 0.015, 6)
    assert row["first_call_s"] == 0.060 and row["first_call_compiles"] == 6
    assert (row["trace_s"], row["lower_s"], row["compile_s"]) == pytest.approx(
        (lower.trace_s, lower.lower_s, lower.compile_s)
    )
    assert row["execute_s"] == pytest.approx(lower.execute_s)


def test_a_failed_mode_is_an_error_row_and_the_others_keep_their_numbers():
    processes = [process(p) for p in range(3)]
    for r in processes:
        r.modes["jit"] = ModeResult(Failure("trace", "jax.errors.TracerBoolConversionError", "bool", "use lax.cond"))
    result = job_result(config("eager", "jit"), JobRaw(processes, "error"))
    jit, eager = result.by_mode("jit"), result.by_mode("eager")
    assert (jit["status"], jit["error_phase"], jit["error_type"]) == (
        "error",
        "trace",
        "jax.errors.TracerBoolConversionError",
    )
    assert jit["hint"] == "use lax.cond" and "median_s" not in jit and "speedup" not in jit
    assert eager["status"] == "ok" and eager["median_s"] == pytest.approx(2e-3, rel=0.01) and eager["n_processes"] == 3


def test_a_timed_out_process_makes_every_mode_an_error_row():
    timeout = ProcessResult(1, error=Failure("execute", "Timeout", "no result after timing.timeout_s=1 s", "raise it"))
    result = job_result(config("eager", "jit"), JobRaw([process(0), timeout], "error"))
    for row in result.rows:
        assert (row["status"], row["error_phase"], row["error_type"]) == ("error", "execute", "Timeout")
    assert {r["process"] for r in result.processes} == {0}  # the dead process left no process row


def test_a_single_process_says_its_ci_is_within_the_process():
    result = job_result(config("jit"), JobRaw([process(0)], "max_processes"))
    (row,) = result.rows
    assert (row["n_processes"], row["ci_scope"], row["stop_reason"]) == (1, "within_process", "max_processes")
    assert row["ci95_low_s"] <= row["median_s"] <= row["ci95_high_s"]
    assert math.isnan(row["process_rel_spread"]) and "speedup" not in row


def test_ci_met_follows_the_paired_ratio():
    tight = [process(p) for p in range(6)]
    assert ci_met(tight, ("eager", "jit"), 0.02)
    loose = [process(p, jit_s=1e-3 * (1 + p)) for p in range(6)]  # the ratio moves 6x between processes
    assert not ci_met(loose, ("eager", "jit"), 0.02)


def test_every_worker_field_has_its_column():
    # device_time_error is said once per job, in the `unavailable` column (analysis.device.unavailable)
    assert set(EXTRA_FIELDS) - {"device_time_error"} <= set(COLUMNS)
    assert {"first_call_s", "trace_s", "lower_s", "compile_s", "execute_s", "first_call_compiles"} <= set(
        PROCESS_COLUMNS
    )
    with pytest.raises(KeyError, match="flopz"):
        Extras().update({"flopz": 1.0})


def test_ab_columns_per_metric_against_the_baseline():
    from jitexp.analysis.speedups import ab_columns

    base = {"steady": [1.0, 1.1, 0.9, 1.0, 1.05, 0.95], "compile": [None] * 6}
    new = {"steady": [1.3, 1.4, 1.2, 1.3, 1.35, 1.25], "compile": [0.1] * 6}
    cols = ab_columns("before", base, new)
    assert cols["ab_baseline"] == "before" and cols["ab_steady_verdict"] == "slower"
    assert cols["ab_steady_ratio"] == pytest.approx(1.3) and cols["ab_steady_n_pairs"] == 6
    assert not any(k.startswith("ab_compile") for k in cols)  # no pair with both values
    assert not any(k.startswith("ab_first_call") for k in cols)
