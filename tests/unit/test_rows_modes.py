"""rows.mode_rows: one results.csv row per mode from hand-made processes whose samples are constant, so every
median, ratio and rate is exact: the paired speedups against the first mode and against numpy, the cold call, the
extras, the first error."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from helpers import measured as measured_in
from jitexp.analysis.rows import mode_rows
from jitexp.config import ExperimentConfig, ModeConfig, WorkloadConfig
from jitexp.config.schema import TimingConfig
from jitexp.errors import Failure
from jitexp.records import ModeResult, ProcessResult

BASE = {"job_num": 1, "workload": "fn", "size": 8}


def config(*modes: str, interleave: str = "rounds") -> ExperimentConfig:
    return ExperimentConfig(
        workload=WorkloadConfig(fn="pkg.fn", numpy_fn="pkg.np_fn"),
        mode=ModeConfig(**{m: True for m in modes}),
        timing=TimingConfig(interleave=interleave),
    )


measured = functools.partial(measured_in, rounds=8)


def processes(n: int, **modes: ModeResult) -> list[ProcessResult]:
    return [ProcessResult(p, dict(modes)) for p in range(n)]


def test_each_mode_is_paired_with_the_first_and_with_numpy():
    results = processes(
        6,
        eager=measured(4e-3, first=0.5),
        jit=measured(1e-3, first=2.0, flops=8e3, bytes_accessed=4e3, eager_ops=5, op_dispatch_s=1e-4),
        aot=measured(1e-3, first=1.0, eager_ops=5, op_dispatch_s=1e-4),
        numpy=measured(2e-3, first=0.3),
    )
    # process 0's extras are the row's: another process's own analysis does not reach it
    results[1] = ProcessResult(1, {**results[1].modes, "jit": measured(1e-3, first=2.0, flops=1.0)})
    eager, jit, aot, numpy = mode_rows(config("eager", "jit", "aot", "numpy"), results, "ci", BASE)
    assert [r["mode"] for r in (eager, jit, numpy)] == ["eager", "jit", "numpy"]
    assert all(r["status"] == "ok" and r["job_num"] == 1 for r in (eager, jit, numpy))
    assert (jit["median_s"], jit["n_processes"], jit["ci_scope"], jit["stop_reason"]) == (
        1e-3,
        6,
        "between_processes",
        "ci",
    )
    assert (jit["flops"], jit["bytes_accessed"]) == (8e3, 4e3)
    # to the last digits: a billion, not a billion and one
    assert jit["gflops_per_s"] == pytest.approx(8e-3, rel=1e-12)
    assert jit["gbytes_per_s"] == pytest.approx(4e-3, rel=1e-12)
    assert "gflops_per_s" not in eager and "gbytes_per_s" not in numpy
    # against eager, the first mode: jit 4x, numpy 2x; only a compiled mode gets an explanation
    assert "speedup" not in eager
    assert (jit["baseline_mode"], numpy["baseline_mode"]) == ("eager", "eager")
    assert (jit["speedup"], numpy["speedup"]) == pytest.approx((4.0, 2.0))
    assert jit["verdict"] == "faster" and "explanation" in jit and "explanation" in aot
    assert "explanation" not in numpy and aot["speedup"] == pytest.approx(4.0)
    # the cold lines cross where 0.5 + 4e-3 (n - 1) = 2.0 + 1e-3 (n - 1): n - 1 = 500
    assert jit["break_even_calls"] == 501
    # against numpy: numpy's time over the mode's, the numpy row itself none
    assert (eager["speedup_vs_numpy"], jit["speedup_vs_numpy"]) == pytest.approx((0.5, 2.0))
    assert (eager["verdict_vs_numpy"], jit["verdict_vs_numpy"]) == ("slower", "faster")
    assert "speedup_vs_numpy" not in numpy


def test_a_compiled_mode_against_another_compiled_one_gets_no_explanation():
    results = processes(6, jit=measured(2e-3, eager_ops=5, op_dispatch_s=1e-4), aot=measured(1e-3))
    jit, aot = mode_rows(config("jit", "aot"), results, "ci", BASE)
    assert (aot["baseline_mode"], aot["speedup"]) == ("jit", pytest.approx(2.0))
    assert "explanation" not in aot and "speedup" not in jit and "speedup_vs_numpy" not in aot


def test_numpy_as_the_only_other_mode_is_both_the_baseline_pair_and_the_numpy_pair():
    eager, numpy = mode_rows(
        config("eager", "numpy"), processes(6, eager=measured(3e-3), numpy=measured(1e-3)), "ci", BASE
    )
    assert numpy["speedup"] == pytest.approx(3.0) and "speedup_vs_numpy" not in numpy
    assert eager["speedup_vs_numpy"] == pytest.approx(1 / 3) and "speedup" not in eager


def test_modes_sampled_in_processes_of_their_own_may_have_different_round_counts():
    # timing.interleave=processes: no round pairs a mode's sample with another's
    results = processes(6, eager=measured(2e-3, rounds=5), jit=measured(1e-3, rounds=9))
    eager, jit = mode_rows(config("eager", "jit", interleave="processes"), results, "ci", BASE)
    assert (eager["n_samples"], jit["n_samples"]) == (30, 54)
    assert jit["speedup"] == pytest.approx(2.0)


def test_one_process_has_a_within_process_ci():
    (row,) = mode_rows(config("jit"), processes(1, jit=measured(1e-3)), "max_processes", BASE)
    assert (row["n_processes"], row["ci_scope"], row["stop_reason"]) == (1, "within_process", "max_processes")
    assert (row["median_s"], row["ci95_low_s"], row["ci95_high_s"]) == (1e-3, 1e-3, 1e-3)


def test_one_process_pairs_its_modes_with_the_rounds_resampled():
    results = processes(1, eager=measured(3e-3), jit=measured(1e-3), numpy=measured(6e-3))
    eager, jit, numpy = mode_rows(config("eager", "jit", "numpy"), results, "ci", BASE)
    # every round of each mode took the same time: each replicate's ratio is the ratio itself
    assert (jit["speedup"], jit["speedup_ci_low"], jit["speedup_ci_high"]) == pytest.approx((3.0, 3.0, 3.0))
    assert (numpy["speedup"], numpy["speedup_ci_low"], numpy["speedup_ci_high"]) == pytest.approx((0.5, 0.5, 0.5))
    assert (jit["speedup_vs_numpy_ci_low"], jit["speedup_vs_numpy_ci_high"]) == pytest.approx((6.0, 6.0))
    assert (eager["speedup_vs_numpy_ci_low"], eager["speedup_vs_numpy_ci_high"]) == pytest.approx((2.0, 2.0))


def test_a_mode_with_no_flops_or_bytes_gets_no_rates():
    (row,) = mode_rows(config("jit"), processes(2, jit=measured(1e-3, flops=0.0, bytes_accessed=0.0)), "ci", BASE)
    assert "gflops_per_s" not in row and "gbytes_per_s" not in row
    assert (row["n_processes"], row["ci_scope"]) == (2, "between_processes")


def test_the_cold_call_is_the_median_processes_and_its_ci_spans_the_processes():
    firsts = [0.9, 0.5, 0.7, 0.6, 0.8]
    results = [ProcessResult(p, {"jit": measured(1e-3, first=f)}) for p, f in enumerate(firsts)]
    results.append(ProcessResult(5, {"jit": ModeResult(samples_s=np.full(8, 1e-3), number=10)}))  # no cold call
    (row,) = mode_rows(config("jit"), results, "ci", BASE)
    assert (row["first_call_s"], row["first_call_compiles"]) == (0.7, 2)
    assert (row["trace_s"], row["lower_s"], row["compile_s"]) == (0.1, 0.1, 0.1)
    assert row["execute_s"] == pytest.approx(0.4)
    # five calls: the median's 95% CI by binomial ranks is the smallest to the largest
    assert (row["first_call_ci95_low_s"], row["first_call_ci95_high_s"]) == (0.5, 0.9)


def test_a_mode_with_no_cold_call_anywhere_has_no_cold_columns():
    results = processes(2, jit=ModeResult(samples_s=np.full(8, 1e-3), number=10))
    (row,) = mode_rows(config("jit"), results, "ci", BASE)
    assert "first_call_s" not in row and "first_call_ci95_low_s" not in row and row["median_s"] == 1e-3


def failure(message: str) -> Failure:
    return Failure("execute", "ValueError", message, "")


@pytest.mark.parametrize(
    "errors, message",
    [
        # per process: (the process's own error, the jit mode's error)
        ([(None, None), (None, "jit 1"), ("process 2", None)], "jit 1"),
        ([(None, None), ("process 1", "jit 1"), (None, "jit 2")], "process 1"),
        ([(None, "jit 0"), ("process 1", None)], "jit 0"),
    ],
)
def test_a_mode_reports_the_first_error_that_hit_it_or_its_process(errors, message):
    results = [
        ProcessResult(
            p,
            {"eager": measured(2e-3), "jit": ModeResult(failure(mode)) if mode else measured(1e-3)},
            error=failure(proc) if proc else None,
        )
        for p, (proc, mode) in enumerate(errors)
    ]
    eager, jit = mode_rows(config("eager", "jit"), results, "error", BASE)
    assert (jit["status"], jit["error_message"]) == ("error", message)
    assert "median_s" not in jit and "speedup" not in jit


def test_an_error_in_one_mode_leaves_the_others_row_ok():
    results = [ProcessResult(p, {"eager": measured(2e-3), "jit": ModeResult(failure("no"))}) for p in range(2)]
    eager, jit = mode_rows(config("eager", "jit"), results, "error", BASE)
    assert eager["status"] == "ok" and "error_message" not in eager and eager["median_s"] == 2e-3
    assert jit["status"] == "error"


def test_when_every_process_failed_each_mode_is_an_error_row_with_no_statistics():
    results = [ProcessResult(p, error=failure("worker died")) for p in range(2)]
    rows = mode_rows(config("eager", "jit"), results, "error", BASE)
    assert [(r["mode"], r["status"], r["error_message"]) for r in rows] == [
        ("eager", "error", "worker died"),
        ("jit", "error", "worker died"),
    ]
    assert not any("median_s" in r or "n_processes" in r for r in rows)
