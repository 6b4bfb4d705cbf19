"""long_files: samples.csv, processes.csv and calls.csv rows from hand-made worker records (no processes, no JAX)."""

from __future__ import annotations

import math

import numpy as np

from jitexp.analysis.long_files import long_rows, sequence_rows, variant_long_rows
from jitexp.errors import Failure
from jitexp.records import Cold, ConfigProblem, ModeResult, Noise, ProcessResult

KEY = {"job_num": 4, "workload": "w", "size": 8}
ROW = {**KEY, "mode": "jit", "median_s": 1.0}  # a results.csv row: only its key columns repeat
COLD = Cold(first_call_s=0.5, trace_s=0.125, lower_s=0.0625, compile_s=0.25, execute_s=0.0625, first_call_compiles=2)
COLD_COLUMNS = {
    "first_call_s": 0.5,
    "trace_s": 0.125,
    "lower_s": 0.0625,
    "compile_s": 0.25,
    "execute_s": 0.0625,
    "first_call_compiles": 2,
}
NOISE = Noise(
    steal_cold=0.01,
    steal=0.02,
    run_queue_wait=0.03,
    idle=0.5,
    iowait=0.0,
    round_steal=[0.1, None],
    rounds_under_steal=1,
    host_probe={"host_probe_loop_s": 0.2},
)
NOISE_COLUMNS = {
    "steal": 0.02,
    "steal_cold": 0.01,
    "run_queue_wait": 0.03,
    "idle": 0.5,
    "iowait": 0.0,
    "rounds_under_steal": 1,
    "host_probe_loop_s": 0.2,
}


def sampled(*samples: float, cold: Cold | None = COLD, calls: list[dict] | None = None) -> ModeResult:
    return ModeResult(
        cold_position=1,
        cold=cold,
        calls=calls or [],
        samples_s=np.array(samples) if samples else None,
        number=10,
        stop_reason="ci",
        compiles_during_timing=0,
    )


def test_long_rows_has_a_sample_row_per_round_with_its_steal_and_a_process_row_per_cold_call():
    result = ProcessResult(
        3, modes={"jit": sampled(3.0, 1.0, 2.0)}, noise=NOISE, device_open_s=1.5, peak_rss_growth_bytes=4096
    )
    samples, procs, calls = long_rows([ROW, {**ROW, "mode": "eager"}], [result])
    ident = {**KEY, "mode": "jit", "process": 3}
    assert samples == [
        {**ident, "round": 0, "number": 10, "per_call_s": 3.0, "steal": 0.1},
        {**ident, "round": 1, "number": 10, "per_call_s": 1.0, "steal": None},  # a round without a tick
        {**ident, "round": 2, "number": 10, "per_call_s": 2.0, "steal": None},  # past the rounds it accounted
    ]
    assert procs == [
        {
            **ident,
            "cold_position": 1,
            **COLD_COLUMNS,
            "rounds": 3,
            "number": 10,
            "median_s": 2.0,
            "compiles_during_timing": 0,
            "stop_reason": "ci",
            "device_open_s": 1.5,
            "peak_rss_growth_bytes": 4096,  # the process's memory, on each of its mode rows (issue 59)
            "device_peak_bytes": None,
            **NOISE_COLUMNS,
        }
    ]
    assert calls == []


def test_long_rows_of_a_mode_without_samples_or_without_a_cold_call():
    result = ProcessResult(
        0,
        modes={
            "eager": sampled(cold=COLD, calls=[{"call": 1, "wall_s": 0.5}, {"call": 2, "wall_s": 0.25}]),
            "jit": sampled(2.0, cold=None),
        },
    )
    samples, procs, calls = long_rows([ROW], [result])
    assert [(s["mode"], s["round"], s["per_call_s"], s["steal"]) for s in samples] == [("jit", 0, 2.0, None)]
    eager, jit = procs  # jit's cold call was not measured here: its row has its samples, no cold call
    assert (eager["mode"], eager["rounds"]) == ("eager", 0) and math.isnan(eager["median_s"])
    assert (jit["mode"], jit["rounds"], jit["median_s"]) == ("jit", 1, 2.0) and "first_call_s" not in jit
    assert calls == [
        {**KEY, "mode": "eager", "probe": "cold", "call": 1, "wall_s": 0.5},
        {**KEY, "mode": "eager", "probe": "cold", "call": 2, "wall_s": 0.25},
    ]


def test_long_rows_of_empty_samples_has_no_median():
    (proc,) = long_rows([ROW], [ProcessResult(0, modes={"jit": ModeResult(cold=COLD, samples_s=np.array([]))})])[1]
    assert proc["rounds"] == 0 and math.isnan(proc["median_s"])


def test_variant_long_rows_tags_each_record_with_the_variant_that_measured_it():
    rows = [{**ROW, "variant": "b"}, {**ROW, "variant": "a", "job_num": 5}, {**ROW, "mode": "eager", "variant": "b"}]
    results = [
        ProcessResult(
            p,
            variants={
                "a": {"jit": sampled(1.0 + p, calls=[{"call": 1}])},
                "b": {"jit": sampled(3.0 + p, cold=None)},
            },
        )
        for p in range(2)
    ]
    samples, procs, calls = variant_long_rows(rows, results)
    assert [(s["variant"], s["job_num"], s["process"], s["per_call_s"]) for s in samples] == [
        ("b", 4, 0, 3.0),
        ("b", 4, 1, 4.0),
        ("a", 5, 0, 1.0),  # each variant's own rows give its key columns
        ("a", 5, 1, 2.0),
    ]
    assert [(p["variant"], p["process"], p["median_s"], "first_call_s" in p) for p in procs] == [
        ("b", 0, 3.0, False),  # b sampled without a cold call of its own here: a row, no cold columns
        ("b", 1, 4.0, False),
        ("a", 0, 1.0, True),
        ("a", 1, 2.0, True),
    ]
    assert calls == [{**KEY, "job_num": 5, "mode": "jit", "probe": "cold", "call": 1, "variant": "a"}] * 2


def test_sequence_rows_has_each_modes_calls_or_one_record_of_why_its_worker_failed():
    crash = Failure("execute", "SIGSEGV", "crash", "rerun")
    results = {
        "jit": ProcessResult(0, modes={"jit": sampled(calls=[{"call": 1, "compiles": 1}, {"call": 2, "compiles": 0}])}),
        "eager": ProcessResult(0, error=crash),
        "aot": ProcessResult(0, config_error=ConfigProblem("device", "tpu:9", "an index below 1")),
        "numpy": ProcessResult(0, modes={"numpy": sampled()}),  # measured, but no call recorded
    }
    ident = {**KEY, "probe": "sequence"}
    assert sequence_rows(results, KEY) == [
        {**ident, "mode": "jit", "call": 1, "compiles": 1},
        {**ident, "mode": "jit", "call": 2, "compiles": 0},
        {
            **ident,
            "mode": "eager",
            "call": 1,
            "status": "error",
            "error_phase": "execute",
            "error_type": "SIGSEGV",
            "error_message": "crash",
            "hint": "rerun",
        },
        {**ident, "mode": "aot", "call": 1, "status": "error", "error_phase": "config"},
        {**ident, "mode": "numpy", "call": 1},
    ]
    assert sequence_rows({}, KEY) == []
