"""Device time and the device's peaks on the CPU, in this process: what an accelerator's row gets, from the CPU's
own profiler trace (docs/results.md, "the device beside the wall clock")."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from jitexp import compose, run
from jitexp.worker.peaks import peaks
from jitexp.worker.profiling import NO_EXECUTION, device_time


def test_a_jitted_matmul_has_device_time_beside_its_wall_time():
    result = run(compose(["timing=quick", "isolate=none", "workload=matmul", "mode=[eager,jit]", "size=256"]))
    jit, eager = result.by_mode("jit"), result.by_mode("eager")
    assert jit["status"] == "ok" and jit["device_time_calls"] >= 5
    assert 0 < jit["device_s"] <= jit["device_trace_wall_s"] * 1.01  # busy time within its own traced call
    assert jit["host_overhead_s"] == pytest.approx(jit["device_trace_wall_s"] - jit["device_s"])
    assert jit["flops_ceiling"] == "probe"  # no nominal peak for a CPU: the matmul probe
    assert jit["device_peak_flops_share"] == pytest.approx(jit["flops"] / jit["device_s"] / jit["peak_flops_per_s"])
    assert "device_s" not in eager  # eager is many programs: no one device time per call


def test_device_time_reads_the_traced_loops_execution_or_says_why_not():
    x = jnp.ones((512, 512), jnp.float32)
    f = jax.jit(lambda a: a @ a)

    def loop(n: int):
        for _ in range(n):
            out = f(x).block_until_ready()
        return 1e-3, out

    got = device_time(loop, 1e-3)
    assert got["device_time_calls"] == 100  # about 0.1 s of 1 ms calls
    assert got["device_trace_wall_s"] == 1e-3  # the loop's own figure per call
    assert got.get("device_s", 0) > 0 or got["device_time_error"] == NO_EXECUTION


def test_the_peaks_are_measured_once_per_device_and_dtype():
    cpu = jax.devices("cpu")[0]
    first, problem, _ = peaks(cpu, "float32")
    assert problem is None and first["peak_flops_per_s"] > 1e8 and first["peak_bytes_per_s"] > 1e8
    assert peaks(cpu, "float32")[0] is first  # the same measurement: in-process jobs do not probe again
