"""A job's worker processes, step by step: which task comes next (its slot, its modes, whether it measures the cold
calls), whether a process measured under steal is replaced, what a failure leaves to measure, and when to stop.

Pure bookkeeping over the ProcessResults that engine.runner.collect hands it; it starts no process. A slot is an env
(envs), a mode (timing.interleave=processes) or the job itself; each count and the budget are per slot.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

from jitexp.analysis.speedups import ci_met
from jitexp.config import ExperimentConfig
from jitexp.engine import pyenvs
from jitexp.engine.mode_processes import merged_pairs
from jitexp.records import ModeResult, Noise, Payload, ProcessResult, Task

COLD_ON_A_CPU = 6  # the fewest processes whose cold calls give a 95% Wilcoxon interval (a gate compares them)


def cold_here(cold_processes: int | None, process: int, platform: str | None) -> bool:
    """Whether process number `process` measures the cold first calls: the first timing.cold_processes, or (null)
    the first COLD_ON_A_CPU on a CPU and the first on an accelerator (`platform`: what the job's first process
    opened)."""
    if cold_processes is not None:
        return process < cold_processes
    return process == 0 or (platform in (None, "cpu") and process < COLD_ON_A_CPU)


def per_variant_budgets(cfg: ExperimentConfig) -> ExperimentConfig:
    """A variants job's sampling and job budgets count per variant (as an envs job's count per env):
    each variant shares a process's rounds and the job's processes, so each gets what a plain job gets."""
    n = len(cfg.variants or {})
    if n < 2:
        return cfg
    t = cfg.timing
    return dataclasses.replace(
        cfg, timing=dataclasses.replace(t, max_time_s=t.max_time_s * n, job_time_s=t.job_time_s * n)
    )


@dataclass
class ProcessPlan:
    """The processes of one job so far (`results`, appended in order; `replaced`: those measured under steal that
    another took the place of) and what decides the next one."""

    cfg: ExperimentConfig
    results: list[ProcessResult] = field(default_factory=list)
    replaced: list[ProcessResult] = field(default_factory=list)
    failed: bool = False
    last_replaced: bool = False
    steal_persists: bool = False
    start: float = field(default_factory=time.perf_counter)

    def __post_init__(self) -> None:
        self.separate = self.cfg.timing.interleave == "processes"
        self.names: list[str | None] = list(self.cfg.mode.names if self.separate else self.cfg.envs or [None])
        # the modes each slot (an env, or with separate modes a mode) still measures
        self.modes: dict[str | None, tuple[str, ...]] = {
            name: (name,) if self.separate and name is not None else self.cfg.mode.names for name in self.names
        }
        # separate modes: a mode that failed starts no more processes; its failure stands in for them
        self.stand_in: dict[str | None, ProcessResult] = {}

    @property
    def slot(self) -> str | None:
        """The slot of the next process: the envs (or modes) take turns in whole rounds."""
        return pyenvs.env_of(len(self.results), self.names)

    def next_task(self, payload: Payload | None, cache_dir: str | None) -> Task:
        """The next process's task: its number in its slot, the modes the slot still measures, the first process's
        extra calls and probes, and whether it measures the cold first calls (cold_here)."""
        p = len(self.results) // len(self.names)
        cold = cold_here(self.cfg.timing.cold_processes, p, self.results[0].platform if self.results else None)
        extra_calls = max(self.cfg.calls, 1) if p == 0 else 1
        env = None if self.separate else self.slot
        modes = self.modes[self.slot]
        return Task(
            self.cfg, p, modes, extra_calls, extras=p == 0, payload=payload, env=env, cold=cold, cache_dir=cache_dir
        )

    def may_follow(self) -> bool:
        """Whether another process can start after the next one: not when the next one ends a round that reaches
        timing.max_processes (stop_reason's count; a replacement under steal stays under it too)."""
        after = len(self.results) + 1
        return after % len(self.names) != 0 or after // len(self.names) < self.cfg.timing.max_processes

    def replaces(self, result: ProcessResult) -> bool:
        """Whether a process measured mostly under CPU steal is replaced by a new one (kept in `replaced`): while the
        process count and the job's budget allow, until a replacement is stolen from too (the steal persists)."""
        t = self.cfg.timing
        started = (len(self.results) + len(self.replaced)) // len(self.names) + 1
        budget = time.perf_counter() - self.start < t.job_time_s * len(self.names)
        self.steal_persists = self.steal_persists or (result.noise.under_steal and self.last_replaced)
        self.last_replaced = (
            result.noise.under_steal and not self.steal_persists and not self.failed and started < t.max_processes
        ) and budget
        if self.last_replaced:
            self.replaced.append(result)  # the next process takes its place (and its index and env)
        return self.last_replaced

    def record(self, result: ProcessResult) -> None:
        """A kept process: a mode that failed in its slot is left out of the slot's later processes (with separate
        modes its failure stands in for them); the job has failed once a slot (separate: every mode) has none left."""
        slot = self.slot
        self.results.append(result)
        self.modes[slot] = tuple(m for m in self.modes[slot] if not result.mode_failed(m))
        if self.separate and not self.modes[slot] and not result.failed and slot not in self.stand_in:
            failure = {m: ModeResult(r.error) for m, r in result.modes.items()}  # the failure alone, no cold call
            self.stand_in[slot] = dataclasses.replace(result, modes=failure, measure_s=0.0, noise=Noise())
        left = not any(self.modes.values()) if self.separate else not self.modes[slot]
        self.failed = self.failed or result.failed or left

    def stop_reason(self, result: ProcessResult) -> str | None:
        """Why no more processes start after the last one recorded, or None: a user's mistake (`error`, at once);
        else only after a whole round, a failure (`error`), then past timing.processes the process count
        (`max_processes`), the budget (`budget`) or a CI narrow enough (`ci`)."""
        if result.config_error is not None:
            return "error"  # a user's mistake: run() says it in one line, at once
        if len(self.results) % len(self.names):
            return None  # with envs: whole rounds, one process of each env (after a failure too: every env gets rows)
        if self.failed:
            return "error"
        n, t = len(self.results) // len(self.names), self.cfg.timing
        if n < t.processes:
            return None
        if n >= t.max_processes:
            return "max_processes"
        if time.perf_counter() - self.start >= t.job_time_s * len(self.names):
            return "budget"
        return "ci" if self._ci_met() else None

    def _ci_met(self) -> bool:
        """Each mode's CI narrow enough (timing.target_rel_ci): on the pairs with separate modes, per env with envs."""
        names, target = self.cfg.mode.names, self.cfg.timing.target_rel_ci
        if self.separate:
            return ci_met(merged_pairs(self.results, names), names, target, unpaired=True)
        return pyenvs.enough(self.results, self.names, names, target)
