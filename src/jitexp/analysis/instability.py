"""The machine's noise over a job's processes and the instability flag: steal, load, spread and compiles while
timed, with pyperf's thresholds; a NumPy twin whose BLAS threads stalled."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from jitexp.analysis.formatting.values import format_seconds
from jitexp.records import NOISE_COLUMNS, ProcessResult

# pyperf warns when std >= 10% of the mean and when min or max lies more than 50% from the mean.
MAX_SPREAD = 0.10
MAX_EXTREME = 0.50


def noise_columns(processes: list[ProcessResult], replaced: int) -> dict[str, Any]:
    """The machine's noise over a job's kept processes: steal median and maximum, replacements, host probe medians."""
    out: dict[str, Any] = {"n_steal_replaced": replaced}
    steal = [r.noise.steal for r in processes if r.noise.steal is not None]
    if steal:
        out.update(steal_median=float(np.median(steal)), steal_max=float(max(steal)))
    waits = [r.noise.run_queue_wait for r in processes if r.noise.run_queue_wait is not None]
    if waits:
        out["run_queue_wait_median"] = float(np.median(waits))
    probes: dict[str, list[float]] = {}
    for r in processes:
        for name, value in r.noise.host_probe.items():
            probes.setdefault(name, []).append(value)
    out.update({name: float(np.median(values)) for name, values in probes.items()})
    return out


def kept_against_all(procs: list[dict], variant: str | None, mode: str) -> dict[str, float]:
    """The kept processes' median against all processes' (replaced ones included): replacing processes measured
    under steal keeps the faster ones, so an absolute median reads low by this much (paired ratios do not)."""
    mine = [
        p
        for p in procs
        if (p.get("variant") or None) == (variant or None) and p["mode"] == mode and np.isfinite(p["median_s"])
    ]
    kept = [p["median_s"] for p in mine if not p["replaced"]]
    every = [p["median_s"] for p in mine]
    if not kept or len(every) == len(kept):
        return {}
    return {"kept_vs_all_processes": float(np.median(kept) / np.median(every))}


def process_noise(r: ProcessResult) -> dict[str, Any]:
    """processes.csv's noise columns of one process (None: not accounted)."""
    return {**{k: getattr(r.noise, k) for k in NOISE_COLUMNS}, **r.noise.host_probe}


def _pct(value: float, limit: float) -> str:
    """A percentage that never reads as equal to the limit it exceeds (10.4% rather than 10%)."""
    text = f"{value:.0%}"
    return text if text != f"{limit:.0%}" else f"{value:.1%}"


def instability(row: dict, max_steal: float = 0.05) -> dict:
    """Flag a steady state that may not be one, with pyperf's thresholds (and CPU steal); the reasons say why."""
    reasons = []
    steal = row.get("steal_median")
    if steal is not None and steal > max_steal:
        reasons.append(f"CPU steal {_pct(steal, max_steal)} of the time (median process; limit {max_steal:.0%})")
    wait = row.get("run_queue_wait_median")
    if wait is not None and wait > max_steal:
        reasons.append(f"waited to run {_pct(wait, max_steal)} of the time (median process; limit {max_steal:.0%})")
    if row.get("compiles_during_timing", 0) > 0:
        reasons.append(f"{row['compiles_during_timing']} compile(s) while timed")
    spread = row.get("process_rel_spread", math.nan)
    if row.get("n_processes", 0) >= 3 and spread > MAX_SPREAD:
        reasons.append(f"process medians spread {_pct(spread, MAX_SPREAD)} (robust cv; limit {MAX_SPREAD:.0%})")
    median = row["median_s"]
    extreme = max(row["process_median_max_s"] / median - 1, 1 - row["process_median_min_s"] / median)
    if row.get("n_processes", 0) >= 2 and extreme > MAX_EXTREME:
        reasons.append(f"a process median lies {_pct(extreme, MAX_EXTREME)} from the median (limit {MAX_EXTREME:.0%})")
    within = row.get("within_process_rel_spread", math.nan)
    if within > MAX_SPREAD:
        reasons.append(
            f"samples within a process spread {_pct(within, MAX_SPREAD)} (robust cv; limit {MAX_SPREAD:.0%})"
        )
    cpus = row.get("cpu_count") or 1
    load = max(row.get("load_avg_start") or 0, row.get("load_avg_end") or 0)
    if other_load(load, cpus) > 0:
        reasons.append(
            f"other work on the machine (load average {load:.1f}: more than the job's own worker, "
            f"at most {own_load(cpus)} on {cpus} CPU(s))"
        )
    stall = blas_stall(row)
    if stall:
        reasons.append(stall)
    return {"unstable": bool(reasons), "unstable_reason": "; ".join(reasons)}


BLAS_STALL = 2.0  # a NumPy twin this many times slower with its BLAS threads than with one: they stalled
# ...and slower by at least this much a call: a stalled thread waits for a wake-up (tens of microseconds to scheduler
# ticks), while a call of a few microseconds reads 2x in a busy moment between the rounds and the probe with no thread
# waiting (a 16x16 matmul, which OpenBLAS runs on one thread, read "stalled" on a loaded 2-core VM: CI, 2026-12-07)
BLAS_STALL_MIN_S = 20e-6


def blas_stall(row: Mapping[str, Any]) -> str:
    """Why a NumPy twin's time is its BLAS threads waiting, not its work (issue 57: `jit 190x faster than numpy`
    where 40 us was true): its median over its time with one BLAS thread (worker.blas) is BLAS_STALL or more, and
    BLAS_STALL_MIN_S a call more; "" when it is not, or the row has no such probe."""
    one, median = row.get("numpy_one_thread_s"), row.get("median_s")
    if row.get("mode") != "numpy" or not _positive(one) or not _positive(median):
        return ""
    ratio = float(median) / float(one)  # type: ignore[arg-type]
    if ratio < BLAS_STALL or float(median) - float(one) < BLAS_STALL_MIN_S:  # type: ignore[arg-type]
        return ""
    threads = row.get("numpy_blas_threads")
    return (
        f"its BLAS threads stalled: {format_seconds(median)} a call with {threads} threads, "
        f"{format_seconds(one)} with 1 ({ratio:.0f}x; limit {BLAS_STALL:.0f}x): no verdict against it"
    )


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def own_load(cpus: int) -> int:
    """The most a job adds to the load average itself: one worker at a time, whose XLA thread pool keeps
    up to one thread per CPU runnable, plus its timing thread (the driver and forkserver sleep meanwhile)."""
    return cpus + 1


def other_load(load: float, cpus: int) -> float:
    """The part of a load average the job's own worker cannot account for: someone else's work (0 when none)."""
    return max(load - own_load(cpus), 0.0)
