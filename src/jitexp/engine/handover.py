"""A device that one process may hold at a time (a TPU): the next worker prepared while the current one measures.

Opening a TPU takes seconds and only one process may hold it, so a job's processes hand it over one to the next.
`Handover` runs a job's fresh workers: once the current worker says it has opened its device, and that device is one
to prepare for (`prepares`) and a process may follow it (`follows`), the next worker is forked (the forkserver's
imports, then the workload's) while the current one measures; it waits (records.Task.gated) and opens the device only
when the driver releases it, after the current worker has exited and let go. The job's last possible process prepares
none (a neighbour forking and importing beside its rounds for nothing: docs/decisions.md). `with_retries` tries again
a process refused the device at open.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from jitexp.config import ExperimentConfig
from jitexp.engine import processes
from jitexp.engine.processes import Running, Target
from jitexp.errors import DEVICE_BUSY
from jitexp.records import ProcessResult, Task


def prepares(cfg: ExperimentConfig, platform: str | None) -> bool:
    """Whether the next worker is prepared while a worker on `platform` (what it opened) measures:
    timing.prepare_next, or (null) on an accelerator, where one process may hold a TPU at a time."""
    if cfg.timing.prepare_next is not None:
        return cfg.timing.prepare_next
    return platform not in (None, "cpu")


def hands_over(cfg: ExperimentConfig) -> bool:
    """The job's processes run through a Handover: fresh workers of this interpreter (not in-process, not as SLURM
    tasks, not in an env's server: each of those has a launcher of its own) and a preparation not ruled out."""
    plain = cfg.isolate == "process" and cfg.distributed.processes == 1 and not cfg.envs
    return plain and cfg.timing.prepare_next is not False


class Handover:
    """A launcher (processes.Launcher) that prepares each next worker: `launch` releases the prepared one with its
    task (or starts one), forks the one after once the first has opened a device to prepare for, and returns the
    first's result once it has exited. `close()` ends a prepared worker the job did not need."""

    def __init__(self, cfg: ExperimentConfig) -> None:
        self.cfg = cfg
        self._next: Running | None = None
        self.prepared = 0  # launches that found their worker already forked
        self.follows = True  # a process may follow the next one launched (ProcessPlan.may_follow)
        self.on_phase: Callable[[str], None] | None = None  # told each phase the running worker enters (the status)

    def launch(self, target: Target, task: Task, timeout_s: float) -> ProcessResult:
        gated = dataclasses.replace(task, gated=True)  # its process, modes, calls and extras come with the go
        running, self._next = self._next, None
        if running is None:
            running = processes.start(target, gated)
        else:
            self.prepared += 1
        running.go(task)

        def opened(platform: str) -> None:
            if self._next is None and self.follows and prepares(self.cfg, platform):  # forks, imports while it measures
                self._next = processes.start(target, dataclasses.replace(gated))

        return running.wait(timeout_s, on_open=opened, on_phase=self.on_phase)

    def close(self) -> None:
        """End the prepared worker the job did not need."""
        if self._next is not None:
            self._next.kill()
            self._next = None


def busy(result: ProcessResult) -> bool:
    """The process was refused its device at open (another process held it)."""
    return result.error is not None and result.error.error_type == DEVICE_BUSY


def with_retries(
    launch: Callable[[], ProcessResult], retries: int, wait_s: float, sleep: Callable[[float], None] = time.sleep
) -> ProcessResult:
    """`launch()` again, `wait_s` apart, while its process is refused the device, at most `retries` more times; the
    last refusal (saying how often it was tried) is the result then."""
    result = launch()
    for _ in range(retries):
        if not busy(result):
            return result
        sleep(wait_s)
        result = launch()
    if busy(result) and result.error is not None:
        tries = retries + 1
        result.error.error_message += f" (tried {tries} time{'s' if tries != 1 else ''}, {wait_s:g} s apart)"
    return result
