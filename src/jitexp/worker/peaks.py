"""The device's measured ceilings for the roofline: a matmul probe (FLOP/s, in the job's dtype) and a copy probe
(bytes/s), once per job in process 0, on the job's own device, after everything else it measures.

Each probe's calls are dispatched back to back and blocked once at the end, so the host's dispatch overlaps the
device's work: the figure is the device's throughput, as close to its peak as these sizes reach (docs/decisions.md).
"""

from __future__ import annotations

import time
from typing import Any

from jitexp.errors import first_line

ACCELERATOR_SIZES = (8192, 512 * 2**20)  # matmul side, copy bytes: ~1.1 TFLOP and 1 GiB moved a call
CPU_SIZES = (512, 32 * 2**20)  # a few ms on a laptop's cores
CALLS, REPEATS = 8, 3

_found: dict[tuple, tuple[dict[str, float], str | None]] = {}  # per device and dtype, for in-process jobs


def peaks(device: Any, dtype: str) -> tuple[dict[str, float], str | None]:
    """({peak_flops_per_s, peak_bytes_per_s}, why one is missing or None), measured once per device and dtype."""
    key = (device.platform, device.id, dtype)
    if key not in _found:
        _found[key] = _measure(device, dtype)
    return _found[key]


def _measure(device: Any, dtype: str) -> tuple[dict[str, float], str | None]:
    import jax
    import jax.numpy as jnp

    side, copy_bytes = CPU_SIZES if device.platform == "cpu" else ACCELERATOR_SIZES
    out: dict[str, float] = {}
    problems = []
    try:
        a = jax.device_put(jnp.ones((side, side), dtype), device)
        out["peak_flops_per_s"] = 2 * side**3 / _per_call(jax.jit(lambda m: m @ m), a)
        del a
    except Exception as exc:  # a dtype the device cannot multiply, or memory the job left no room for
        problems.append(f"matmul probe: {type(exc).__name__}: {first_line(exc)}")
    try:
        v = jax.device_put(jnp.ones((copy_bytes // 4,), jnp.float32), device)
        out["peak_bytes_per_s"] = 2 * copy_bytes / _per_call(jax.jit(lambda x: x * 2), v)  # read and write
        del v
    except Exception as exc:
        problems.append(f"copy probe: {type(exc).__name__}: {first_line(exc)}")
    return out, "; ".join(problems) or None


def _per_call(f: Any, x: Any) -> float:
    """The best of REPEATS runs of CALLS calls dispatched back to back, seconds per call."""
    f(x).block_until_ready()  # compiled, and the output's buffer allocated, before any timing
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(CALLS):
            out = f(x)
        out.block_until_ready()
        best = min(best, (time.perf_counter() - start) / CALLS)
        del out
    return best
