"""The machine's own noise: CPU steal / idle / iowait shares from /proc/stat, and the fixed host probe.

On a VM the hypervisor gives the vCPUs to other tenants ("steal"), which moved the same jitted
matmul by 2.2x between fresh processes here (JAX_NOTES). Workers read these counters around
their cold calls and each round, so the rows say which numbers the machine moved. Without
/proc/stat or without steal accounting every share is None (an empty column, never a zero).
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

STAT = "/proc/stat"
STAT_ENV = "JITEXP_PROC_STAT"  # another file in /proc/stat's format (tests feed fake counters)
# /proc/stat's cpu line: user nice system idle iowait irq softirq steal [guest guest_nice];
# guest time is already counted in user, so the total is the first eight.
IDLE, IOWAIT, STEAL = 3, 4, 7
# Jiffies are 10 ms per CPU: a share over fewer ticks than this (0.1 s of one CPU) says little.
MIN_TICKS = 10


def cpu_times(path: str | None = None) -> tuple[int, ...] | None:
    """The aggregate cpu line's first eight counters (jiffies), or None where steal is not accounted."""
    try:
        with open(path or os.environ.get(STAT_ENV) or STAT) as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu" or len(fields) < 9:
        return None
    return tuple(int(v) for v in fields[1:9])


@dataclass(frozen=True)
class Shares:
    """Fractions of all CPU time between two readings."""

    steal: float
    idle: float
    iowait: float
    ticks: int  # jiffies in the interval, all CPUs together (100 per second per CPU)


def shares(before: Sequence[int] | None, after: Sequence[int] | None, min_ticks: int = MIN_TICKS) -> Shares | None:
    """Steal, idle and iowait shares between two `cpu_times` readings; None when either is missing or
    fewer than min_ticks passed."""
    if before is None or after is None:
        return None
    delta = [b - a for a, b in zip(before, after)]
    total = sum(delta)
    if total <= 0 or total < min_ticks:
        return None
    return Shares(delta[STEAL] / total, delta[IDLE] / total, delta[IOWAIT] / total, total)


def round_steal(readings: Sequence[Sequence[int] | None], min_ticks: int = MIN_TICKS) -> list[float | None]:
    """Per round, the steal share around it: over the round, widened by neighbouring rounds to at least
    min_ticks jiffies (a round lasts a few 10 ms ticks: alone, its share would be 0 or 1/2 or 1).

    None where a reading is missing (no steal accounting) or no tick passed in all the rounds.
    """
    n = len(readings) - 1
    if n < 1 or any(r is None for r in readings):
        return [None] * max(n, 0)
    totals = [sum(r) for r in readings]  # type: ignore[arg-type]
    out: list[float | None] = []
    for i in range(n):
        lo, hi = i, i + 1
        while totals[hi] - totals[lo] < min_ticks and (lo > 0 or hi < n):
            lo, hi = max(lo - 1, 0), min(hi + 1, n)
        s = shares(readings[lo], readings[hi], min_ticks=1)
        out.append(s.steal if s is not None else None)
    return out


def mostly_under_steal(per_round: Sequence[float | None], overall: float | None, max_steal: float) -> bool:
    """A process measured mostly under steal: most of its rounds marked (steal around them above
    max_steal), and its share over all its rounds above max_steal too."""
    known = [s for s in per_round if s is not None]
    if overall is None or not known:
        return False
    marked = sum(s > max_steal for s in known)
    return overall > max_steal and marked > len(known) / 2


# ---- the host probe ---------------------------------------------------------------------------

PROBES = ("dispatch", "copy", "matmul")


def host_probe(repeats: int = 7) -> dict[str, float]:
    """Medians of three fixed reference measurements on the CPU (about 50 ms in all): host_probe_<name>_s.

    dispatch: a jitted add on 8 floats, call to result (dispatch-bound); copy: a 4 MiB NumPy copy
    (memory-bound); matmul: a jitted 256x256 float32 matmul (compute-bound). The same kernels in
    every worker of every run, so a change in them is the host's, not the workload's.
    """
    import jax
    import numpy as np

    cpu = jax.devices("cpu")[0]
    small = jax.device_put(np.ones(8, np.float32), cpu)
    square = jax.device_put(np.linspace(0, 1, 256 * 256, dtype=np.float32).reshape(256, 256), cpu)
    src, dst = np.ones(2**19, np.float64), np.empty(2**19, np.float64)
    add = jax.jit(lambda x: x + 1)
    matmul = jax.jit(lambda a: a @ a)
    jax.block_until_ready((add(small), matmul(square)))  # compiled outside the timed calls

    def timed(fn: Any, inner: int) -> float:
        samples = []
        for _ in range(repeats):
            start = time.perf_counter_ns()
            for _ in range(inner):
                fn()
            samples.append((time.perf_counter_ns() - start) / 1e9 / inner)
        return float(np.median(samples))

    return {
        "host_probe_dispatch_s": timed(lambda: add(small).block_until_ready(), 50),
        "host_probe_copy_s": timed(lambda: np.copyto(dst, src), 3),
        "host_probe_matmul_s": timed(lambda: matmul(square).block_until_ready(), 3),
    }


PROBE_COLUMNS = tuple(f"host_probe_{name}_s" for name in PROBES)
