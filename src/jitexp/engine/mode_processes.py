"""timing.interleave=processes: each mode measured in fresh processes of its own, paired by index.

Built when a jit step sampled between eager steps in one process read ~1.2x slower than in a loop of jit steps
alone (a flax train step; docs/benchmarks.md), before the cause was found (a CPU left idle while the slow mode
ran) and the time-based re-warm removed it (docs/decisions.md). With this policy no mode runs beside another: processes alternate between the modes
in rounds, forward then backward (eager, jit, jit, eager, ...: `pyenvs.env_of`), so drift reaches every mode
alike, and process i of each mode is pair i. Pair i becomes one record with every mode's results, so that the
statistics and rows treat it as they treat a process that measured every mode (`analysis.rows`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TypeVar

from jitexp.engine.pyenvs import split
from jitexp.records import ModeResult, Noise, ProcessResult


def merged_pairs(results: Sequence[ProcessResult], modes: Sequence[str]) -> list[ProcessResult]:
    """The job's processes (one mode each, in running order) as pairs: pair i holds process i of every mode."""
    sides = split(results, list(modes))
    pairs = min(len(side) for side in sides.values())
    return [merge({mode: sides[mode][i] for mode in modes}, i) for i in range(pairs)]


def merge(pair: Mapping[str, ProcessResult], index: int) -> ProcessResult:
    """One record of a pair's processes (by the mode each measured): their modes together, a process that crashed
    or timed out as its own mode's failure (the other modes keep their results); the larger noise and memory."""
    first = next((p for p in pair.values() if p.error is None), next(iter(pair.values())))  # its platform, environment
    modes: dict[str, ModeResult] = {}
    for mode, process in pair.items():
        modes.update({mode: ModeResult(process.error)} if process.error is not None else process.modes)
    return dataclasses.replace(
        first,
        process=index,
        modes=modes,
        error=None,
        config_error=next((p.config_error for p in pair.values() if p.config_error is not None), None),
        measure_s=sum(p.measure_s for p in pair.values()),
        setup_s=_largest([p.setup_s for p in pair.values()]),
        peak_rss_growth_bytes=_largest([p.peak_rss_growth_bytes for p in pair.values()]),
        device_peak_bytes=_largest([p.device_peak_bytes for p in pair.values()]),
        noise=_noise([p.noise for p in pair.values()]),
        phases=_summed([p.phases for p in pair.values()]),
        phase_compiles={k: int(v) for k, v in _summed([p.phase_compiles for p in pair.values()]).items()},
        driver_wall_s=sum(p.wall_s for p in pair.values()),
        cache_hits=_total([p.cache_hits for p in pair.values()]),
        cache_misses=_total([p.cache_misses for p in pair.values()]),
    )


def _summed(parts: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """A pair's phases: each phase's seconds added over its processes (their wall times add up too)."""
    out: dict[str, float] = {}
    for part in parts:
        for name, seconds in part.items():
            out[name] = out.get(name, 0.0) + seconds
    return out


def _total(values: Sequence[int | None]) -> int | None:
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _noise(noises: Sequence[Noise]) -> Noise:
    """The pair's noise: the larger steal and run-queue share of its processes (either disturbs the pair's ratio)."""
    return Noise(
        steal_cold=_largest([n.steal_cold for n in noises]),
        steal=_largest([n.steal for n in noises]),
        run_queue_wait=_largest([n.run_queue_wait for n in noises]),
        idle=_largest([n.idle for n in noises]),
        iowait=_largest([n.iowait for n in noises]),
        round_steal=[],  # per round of one process: a pair's modes have rounds of their own
        rounds_under_steal=_largest([n.rounds_under_steal for n in noises]),
        under_steal=any(n.under_steal for n in noises),
        host_probe=noises[0].host_probe,
    )


T = TypeVar("T", int, float)


def _largest(values: Sequence[T | None]) -> T | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None
