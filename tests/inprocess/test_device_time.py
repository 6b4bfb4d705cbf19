"""Device time and the device's peaks on the CPU, in this process: what an accelerator's row gets, from the CPU's
own profiler trace (docs/results.md, "the device beside the wall clock")."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from jitexp import compose, run
from jitexp.worker import profiling
from jitexp.worker.peaks import peaks
from jitexp.worker.profiling import DEVICE_MAX_CALLS, DEVICE_MIN_CALLS, NO_EXECUTION, device_time, within_events
from jitexp.workloads.library import rnn_scan


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


def test_a_program_of_many_ops_is_traced_over_fewer_calls_not_a_million_events():
    # rnn_scan's 128 steps put ~2,500 events a call in the CPU's trace: its 1,000 calls of 0.1 ms were the export's
    # 1,000,000-event cap (the rest dropped, device_s read ~35% high) and ~20 s of a timing=quick job
    f = jax.jit(rnn_scan, static_argnums=4)
    args = (jnp.ones((32, 32)), jnp.ones((32, 32)), jnp.ones((32,)), jnp.ones((128, 1, 32)), 4)

    def loop(n: int):
        for _ in range(n):
            out = f(*args).block_until_ready()
        return 1e-4, out

    loop(1)
    got = device_time(loop, 1e-6)  # 0.1 s of 1 us calls would be DEVICE_MAX_CALLS
    assert DEVICE_MIN_CALLS <= got["device_time_calls"] < DEVICE_MAX_CALLS / 4
    assert got.get("device_s", 0) > 0 or got["device_time_error"] == NO_EXECUTION


def test_the_calls_traced_keep_the_trace_under_its_event_budget(monkeypatch):
    probed = []

    def traced(loop, calls, kept=(), warm=0):
        probed.append(calls)
        return 1e-3, {"traceEvents": [{}] * (calls * 400)}, {}

    monkeypatch.setattr(profiling, "traced", traced)
    assert within_events(lambda n: (0.0, None), 1000, budget=20_000, fewest=5) == 50  # 400 events a call
    assert within_events(lambda n: (0.0, None), 30, budget=20_000, fewest=5) == 30  # under the budget: as asked
    assert within_events(lambda n: (0.0, None), 1000, budget=100, fewest=5) == 5  # never under the fewest calls
    assert within_events(lambda n: (0.0, None), 5, budget=100, fewest=5) == 5 and probed == [1, 1, 1]  # no probe


def test_the_peaks_are_measured_once_per_device_and_dtype():
    cpu = jax.devices("cpu")[0]
    first, problem, _ = peaks(cpu, "float32")
    assert problem is None and first["peak_flops_per_s"] > 1e8 and first["peak_bytes_per_s"] > 1e8
    assert peaks(cpu, "float32")[0] is first  # the same measurement: in-process jobs do not probe again
