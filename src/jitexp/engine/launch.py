"""Where a task runs and running it: this process, an env's server, SLURM tasks or a fresh worker."""

from __future__ import annotations

from jitexp.config import ExperimentConfig
from jitexp.engine import envserver
from jitexp.engine.handover import Handover, with_retries
from jitexp.engine.processes import WORKER, FreshProcess, InProcess, Launcher
from jitexp.engine.slurm_tasks import SlurmTasks
from jitexp.records import ProcessResult, Task


def launcher(task: Task, cfg: ExperimentConfig) -> Launcher:
    """Where a task runs: in this process (isolate=none), in its env's server (envs), as SLURM tasks
    (distributed.processes > 1), else a fresh worker."""
    if cfg.distributed.processes > 1:
        return SlurmTasks(cfg.distributed.processes)
    if cfg.isolate == "none":
        return InProcess()
    if task.env is not None and cfg.envs:
        return envserver.server(f"envs.{task.env}", cfg.envs[task.env])
    return FreshProcess()


def run_task(task: Task, cfg: ExperimentConfig, handover: Handover | None = None) -> ProcessResult:
    """One task run by its launcher (a worker process's result, or this process's for isolate=none), or by the
    handover that prepared its worker; tried again while another process holds the device (timing.open_retries)."""
    chosen = handover or launcher(task, cfg)
    t = cfg.timing
    result = with_retries(lambda: chosen.launch(WORKER, task, t.timeout_s), t.open_retries, t.open_wait_s)
    if task.env is not None and cfg.envs:
        result.env = task.env
    return result
