"""The machine's own noise: the worker's CPU steal / idle / iowait shares and run-queue wait, and the host probe.

On a VM the hypervisor gives the vCPUs to other tenants ("steal"), which moved the same jitted
matmul by 2.2x between fresh processes here (JAX_NOTES). Workers read these counters around
their cold calls and each round, so the rows say which numbers the machine moved. Shares are of
the worker's own CPUs (/proc/stat's per-CPU lines: its pinned cores, else the CPU its timing
thread was on), not of the whole machine; the run-queue wait (/proc/thread-self/schedstat) is the
thread's own, whatever kept it waiting. Without the counters every share is None (an empty
column, never a zero).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

STAT = "/proc/stat"
STAT_ENV = "JITEXP_PROC_STAT"  # another file in /proc/stat's format (tests feed fake counters)
# /proc/stat's cpuN lines: user nice system idle iowait irq softirq steal [guest guest_nice];
# guest time is already counted in user, so the total is the first eight.
IDLE, IOWAIT, STEAL = 3, 4, 7
# Jiffies are 10 ms per CPU: a share over fewer ticks than this (0.1 s of one CPU) says little.
MIN_TICKS = 10


class Reading(NamedTuple):
    """The counters that say how much of the worker's own CPU it had: one reading, taken around each round.

    cpus: each CPU's eight /proc/stat counters (jiffies); on: the CPUs this reading counts for the
    worker (its affinity set when pinned, else the CPU its timing thread was on); wait_ns: the
    thread's run-queue wait so far (ready but not running, from any cause), None where unavailable.
    """

    cpus: dict[int, tuple[int, ...]]
    on: frozenset[int]
    wait_ns: int | None
    wall_ns: int


def cpu_times(path: str | None = None, thread: int | None = None) -> Reading | None:
    """The worker's counters now, or None where /proc/stat has no per-CPU steal accounting; `thread` (a native
    thread id in this process) reads that thread's CPU and run-queue wait instead of the calling thread's."""
    try:
        with open(path or os.environ.get(STAT_ENV) or STAT) as stat:
            lines = [line.split() for line in stat if line.startswith("cpu")]
    except OSError:
        return None
    cpus = {int(f[0][3:]): tuple(int(v) for v in f[1:9]) for f in lines if f[0][3:].isdigit() and len(f) >= 9}
    if not cpus:
        return None
    return Reading(cpus, own_cpus(cpus, thread), run_queue_wait_ns(thread), time.perf_counter_ns())


def own_cpus(cpus: Mapping[int, object], thread: int | None = None) -> frozenset[int]:
    """The CPUs whose counters are the worker's: its affinity set when pinned to fewer than all, else the
    CPU its timing thread is on now (a neighbour's or the driver's steal on another CPU is not its own)."""
    allowed = frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else frozenset(cpus)
    if allowed and allowed < frozenset(cpus):
        return allowed & frozenset(cpus)
    now = current_cpu(thread)
    return frozenset([now]) if now is not None and now in cpus else frozenset(cpus)


def _thread_file(name: str, thread: int | None) -> str:
    """/proc's file `name` of the calling thread, or of native thread `thread` of this process."""
    return f"/proc/thread-self/{name}" if thread is None else f"/proc/self/task/{thread}/{name}"


def current_cpu(thread: int | None = None) -> int | None:
    """The CPU the calling thread (or `thread`) last ran on (/proc/thread-self/stat field 39), None where unknown."""
    try:
        with open(_thread_file("stat", thread)) as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[36])
    except (OSError, IndexError, ValueError):
        return None


def run_queue_wait_ns(thread: int | None = None) -> int | None:
    """Nanoseconds the calling thread (or `thread`) has waited on a run queue (ready, not running), None where
    unavailable."""
    try:
        with open(_thread_file("schedstat", thread)) as stat:  # on-CPU ns, run-queue wait ns, timeslices
            return int(stat.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None


@dataclass(frozen=True)
class Shares:
    """Fractions of the worker's CPUs' time between two readings, and of wall time spent on the run queue."""

    steal: float
    idle: float
    iowait: float
    ticks: int  # jiffies in the interval on the worker's CPUs (100 per second per CPU)
    run_queue: float | None = None  # run-queue wait / wall time (None: not available)


def shares(before: Reading | None, after: Reading | None, min_ticks: int = MIN_TICKS) -> Shares | None:
    """Steal, idle and iowait shares of the CPUs the worker was on at either reading, and its run-queue share,
    between two readings; None when either is missing or fewer than min_ticks passed on those CPUs."""
    if before is None or after is None:
        return None
    mine = (before.on | after.on) & before.cpus.keys() & after.cpus.keys()
    delta = [sum(after.cpus[c][k] - before.cpus[c][k] for c in mine) for k in range(8)]
    total = sum(delta)
    if total <= 0 or total < min_ticks:
        return None
    wall = after.wall_ns - before.wall_ns
    queue = (
        (after.wait_ns - before.wait_ns) / wall
        if before.wait_ns is not None and after.wait_ns is not None and wall > 0
        else None
    )
    return Shares(delta[STEAL] / total, delta[IDLE] / total, delta[IOWAIT] / total, total, queue)


def round_steal(readings: Sequence[Reading | None], min_ticks: int = MIN_TICKS) -> list[float | None]:
    """Per round, the steal share around it: over the round, widened by neighbouring rounds to at least
    min_ticks jiffies (a round lasts a few 10 ms ticks: alone, its share would be 0 or 1/2 or 1).

    None where a reading is missing (no steal accounting) or no tick passed in all the rounds.
    """
    n = len(readings) - 1
    if n < 1 or any(r is None for r in readings):
        return [None] * max(n, 0)
    out: list[float | None] = []
    for i in range(n):
        lo, hi = i, i + 1
        while _ticks(readings[lo], readings[hi]) < min_ticks and (lo > 0 or hi < n):
            lo, hi = max(lo - 1, 0), min(hi + 1, n)
        s = shares(readings[lo], readings[hi], min_ticks=1)
        out.append(s.steal if s is not None else None)
    return out


def _ticks(before: Reading | None, after: Reading | None) -> int:
    s = shares(before, after, min_ticks=0)
    return s.ticks if s is not None else 0


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


PROBE_COLUMNS = tuple(f"host_probe_{name}_s" for name in PROBES)
