"""run(config) -> JobResult: plan the worker processes, collect every raw result, hand them to `rows`.

The job's plan: check it fits (check_memory), collect its processes (collect: each step is
`process_plan.ProcessPlan`'s, where a task runs `launch.py`'s), run its probes (`probes.py`), hand every
result to `analysis.rows`. The process handling is `processes.py`'s, what runs in a worker `jitexp.worker`'s.
Callable from Python without Hydra. The driver imports no JAX: measurements run in fresh worker processes
(`isolate=process`) or, for debugging, in this process (`isolate=none`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping

from jitexp.analysis.rows import job_result
from jitexp.config import ExperimentConfig, from_dict, input_bytes, sizing
from jitexp.engine import envserver, pyenvs
from jitexp.engine.handover import Handover, hands_over
from jitexp.engine.jobcache import job_cache
from jitexp.engine.launch import launcher, run_task
from jitexp.engine.mode_processes import merged_pairs
from jitexp.engine.probes import disk_cache_probe, profile_probe, retrace_probe, timed
from jitexp.engine.process_plan import COLD_ON_A_CPU, ProcessPlan, cold_here, per_variant_budgets
from jitexp.engine.processes import WORKER
from jitexp.engine.progress import Status, Sweep
from jitexp.engine.slurm_tasks import check_srun
from jitexp.errors import ConfigError, Interrupted
from jitexp.machine import load_avg
from jitexp.provenance import code_provenance
from jitexp.records import INTERRUPTED, JobRaw, JobResult, Payload, ProcessResult, Task

__all__ = [  # what callers import from here (the steps live in launch, probes and process_plan)
    "COLD_ON_A_CPU",
    "WORKER",
    "check_memory",
    "cold_here",
    "collect",
    "disk_cache_probe",
    "launcher",
    "per_variant_budgets",
    "profile_probe",
    "retrace_probe",
    "run",
    "run_task",
]


def run(
    cfg: ExperimentConfig | Mapping,
    *,
    job_num: int = 0,
    overrides: str = "",
    payload: Payload | None = None,
    sweep: Sweep | None = None,
) -> JobResult:
    """Measure one case in its modes; config mistakes raise ConfigError, failures become error rows.

    An ExperimentConfig is trusted as validated (compose() and from_dict() return such); a
    mapping is validated here. A payload (jitexp.measure) carries the function and its arguments. With `sweep`
    (the command line's jobs) the job shows a status line or a line per process (cfg.progress; engine.progress).
    """
    if not isinstance(cfg, ExperimentConfig):
        cfg = from_dict(cfg)
    check_memory(cfg, payload)
    check_srun(cfg.distributed.processes)
    for name, path in (cfg.envs or {}).items():
        envserver.server(f"envs.{name}", path)  # each env's server, before anything runs (one line if it cannot)
    load_start = load_avg()
    started = time.perf_counter()
    code = code_provenance([cfg.workload.fn, cfg.workload.setup])
    handover, status = Handover(cfg), _status(cfg, sweep)
    handover.on_phase = status.phase
    with job_cache(cfg) as cache_dir:
        try:
            processes, stop_reason, replaced = collect(cfg, payload, handover, cache_dir, status)
        finally:
            handover.close()
            status.close()
        if stop_reason == INTERRUPTED:  # the rows of the processes that finished, no probes: the caller keeps them
            raw = JobRaw(processes, stop_reason, load_avg_start=load_start, load_avg_end=load_avg(), provenance=code)
            raw.wall_s = raw.processes_s = time.perf_counter() - started
            raise Interrupted(job_result(cfg, raw, job_num=job_num, overrides=overrides), len(processes))
        return _probed(
            cfg,
            processes,
            stop_reason,
            replaced,
            cache_dir,
            load_start,
            started,
            code,
            handover,
            job_num=job_num,
            overrides=overrides,
        )


def _status(cfg: ExperimentConfig, sweep: Sweep | None) -> Status:
    """The job's progress: a status line or a line per process for the command line's jobs (`sweep`) in worker
    processes, else nothing shown."""
    shown = sweep is not None and cfg.isolate == "process"
    t = cfg.timing
    return Status(cfg.mode.names, t.processes, cfg.progress if shown else False, sweep, t.max_processes)


def _probed(
    cfg: ExperimentConfig,
    processes: list[ProcessResult],
    stop_reason: str,
    replaced: list[ProcessResult],
    cache_dir: str | None,
    load_start: float | None,
    started: float,
    code: dict,
    handover: Handover,
    *,
    job_num: int,
    overrides: str,
) -> JobResult:
    """The job's probe workers (disk cache, retrace, profile) after its timed processes, then its rows."""
    problem = next((r.config_error for r in processes if r.config_error is not None), None)
    if problem is not None:
        raise ConfigError(problem.key, problem.value, problem.expected)
    if cfg.envs:
        raws = {
            env: JobRaw(
                mine,
                stop_reason,
                disk_cache_probe(cfg, env),
                retrace_probe(cfg, env),
                load_start,
                load_avg(),
                [r for r in replaced if r.env == env],
                code,
            )
            for env, mine in pyenvs.split(processes, list(cfg.envs)).items()
        }
        return pyenvs.job_result(cfg, raws, job_num=job_num, overrides=overrides)
    if cfg.timing.interleave == "processes":
        processes = merged_pairs(processes, cfg.mode.names)
    probes: dict[str, float] = {}
    measured = time.perf_counter()
    with timed(probes, "cache_probe"):
        cache = disk_cache_probe(cfg)
    load_end = load_avg()
    with timed(probes, "retrace_probe"):
        retrace = retrace_probe(cfg)
    raw = JobRaw(processes, stop_reason, cache, retrace, load_start, load_end, replaced, code)
    with timed(probes, "profile_probe"):
        raw.profile = profile_probe(cfg, cache_dir)
    raw.wall_s, raw.prepared = time.perf_counter() - started, handover.prepared
    raw.probes, raw.processes_s = {k: v for k, v in probes.items() if v > 0.001}, measured - started
    return job_result(cfg, raw, job_num=job_num, overrides=overrides)


def check_memory(cfg: ExperimentConfig, payload: Payload | None = None) -> None:
    """Refuse, before anything is allocated, a job whose inputs cannot fit in available memory.

    A payload's arguments count once per mode and once more for the checks, as a setup's do in the worker.
    """
    if payload is not None:
        sets = len(cfg.mode.names) + 1
        gib = payload.arg_bytes / 2**30
        what = f"the arguments' arrays ({gib:.1f} GiB, {sets - 1} mode(s) and a check)"
        sizing.check_memory("args", None, payload.arg_bytes * sets, what)
    sizing.check_memory("size", cfg.size, input_bytes(cfg), "the inputs", " to build")


def collect(
    cfg: ExperimentConfig,
    payload: Payload | None = None,
    handover: Handover | None = None,
    cache_dir: str | None = None,
    status: Status | None = None,
) -> tuple[list[ProcessResult], str, list[ProcessResult]]:
    """_collect(...); on Ctrl-C after one or more processes finished, those (stop_reason `interrupted`), where their
    rows stand alone: one process measures every mode of the job (not with envs or timing.interleave=processes,
    whose rounds pair processes)."""
    finished: list[ProcessResult] = []
    try:
        return _collect(cfg, payload, handover, cache_dir, status, finished)
    except KeyboardInterrupt:
        whole = not cfg.envs and cfg.timing.interleave != "processes"
        if not finished or any(r.config_error is not None for r in finished):
            raise
        if not whole:
            raise Interrupted(None, len(finished)) from None  # nothing to keep: the caller says what was discarded
        return finished, INTERRUPTED, []


def _collect(
    cfg: ExperimentConfig,
    payload: Payload | None = None,
    handover: Handover | None = None,
    cache_dir: str | None = None,
    status: Status | None = None,
    results: list[ProcessResult] | None = None,
) -> tuple[list[ProcessResult], str, list[ProcessResult]]:
    """Results of the job's processes (appended to `results` as they finish), why no more were started, and the
    processes replaced under steal.

    `timing.processes` fresh processes at least; more, up to `timing.max_processes`, while a CI is wider than
    `timing.target_rel_ci` and the job has run less than `timing.job_time_s` (with variants, it and
    `timing.max_time_s` count per variant: `per_variant_budgets`). A process measured mostly under CPU steal is
    replaced while both limits allow, until a replacement is stolen from too. With envs, each count and the budget
    are per env, processes alternate between the envs in whole rounds, and rounds are added until the A/B pairs
    could be significant; a failure ends the job after its round, and a mode that failed in an env is left out of
    that env's later processes only. With timing.interleave=processes, the modes take the envs' place and the CI is
    judged on the pairs. The first timing.cold_processes processes (of each env or mode) measure the cold first
    calls; the rest read the programs from the job's compilation cache at `cache_dir`. The steps:
    engine.process_plan.ProcessPlan.
    """
    cfg = per_variant_budgets(cfg)
    if cfg.isolate == "none":
        task = Task(cfg, 0, cfg.mode.names, max(cfg.calls, 1), True, fresh=False, payload=payload)
        return [run_task(task, cfg)], "isolate=none", []
    plan = ProcessPlan(cfg, [] if results is None else results)
    prepared = handover if handover is not None and hands_over(cfg) else None
    while True:
        result = _next_process(plan, plan.next_task(payload, cache_dir), prepared, status)
        if plan.replaces(result):
            continue
        plan.record(result)
        stop = plan.stop_reason(result)
        if stop is not None:
            return plan.results, stop, plan.replaced


def _next_process(plan: ProcessPlan, task: Task, prepared: Handover | None, status: Status | None) -> ProcessResult:
    """One process's result, shown on the status line: run by its launcher (or the handover that prepared its
    worker), or the failure that stands in for a mode that failed (separate modes)."""
    if status is not None:
        status.started(len(plan.results))
    if plan.slot in plan.stand_in:
        result = plan.stand_in[plan.slot]
    elif prepared is not None:
        prepared.follows = plan.may_follow()  # the job's last process prepares no neighbour to measure beside
        result = run_task(task, plan.cfg, prepared)
    else:
        result = run_task(task, plan.cfg)
    if status is not None:
        status.finished(result)
    return result
