"""run(config) -> JobResult: plan the worker processes, collect every raw result, hand them to `rows`.

Orchestration only: the statistics and rows are `rows.py`'s, the process handling
`processes.py`'s, what runs in a worker `worker.py`'s. Callable from Python without Hydra. The
driver imports no JAX: measurements run in fresh worker processes (`isolate=process`) or, for
debugging, in this process (`isolate=none`).
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from jitexp.analysis.rows import job_result
from jitexp.analysis.speedups import ci_met
from jitexp.config import ExperimentConfig, from_dict, input_bytes, sizing
from jitexp.engine import envserver, pyenvs
from jitexp.engine.handover import Handover, hands_over, with_retries
from jitexp.engine.jobcache import job_cache
from jitexp.engine.mode_processes import merged_pairs
from jitexp.engine.processes import WORKER, FreshProcess, InProcess, Launcher
from jitexp.engine.progress import Status, Sweep
from jitexp.engine.slurm_tasks import SlurmTasks, check_srun
from jitexp.errors import ConfigError, Interrupted
from jitexp.machine import load_avg
from jitexp.provenance import code_provenance
from jitexp.records import INTERRUPTED, JobRaw, JobResult, ModeResult, Noise, Payload, ProcessResult, Task


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
    handover = Handover(cfg)
    shown = sweep is not None and cfg.isolate == "process"
    t = cfg.timing
    status = Status(cfg.mode.names, t.processes, cfg.progress if shown else False, sweep, t.max_processes)
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
        result = _probed(
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
    return result


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
    with _timed(probes, "cache_probe"):
        cache = disk_cache_probe(cfg)
    load_end = load_avg()
    with _timed(probes, "retrace_probe"):
        retrace = retrace_probe(cfg)
    raw = JobRaw(processes, stop_reason, cache, retrace, load_start, load_end, replaced, code)
    with _timed(probes, "profile_probe"):
        raw.profile = profile_probe(cfg, cache_dir)
    raw.wall_s, raw.prepared = time.perf_counter() - started, handover.prepared
    raw.probes, raw.processes_s = {k: v for k, v in probes.items() if v > 0.001}, measured - started
    return job_result(cfg, raw, job_num=job_num, overrides=overrides)


@contextmanager
def _timed(into: dict[str, float], name: str) -> Iterator[None]:
    start = time.perf_counter()
    try:
        yield
    finally:
        into[name] = time.perf_counter() - start


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
    """Results of the job's processes (appended to `results` as they finish), why no more were started, and the processes replaced under steal.

    `timing.processes` fresh processes at least; more, up to `timing.max_processes`, while a
    CI is wider than `timing.target_rel_ci` and the job has run less than `timing.job_time_s`
    (with variants, it and `timing.max_time_s` count per variant: `per_variant_budgets`).
    A process measured mostly under CPU steal is replaced by a new one while both limits allow,
    until a replacement is stolen from too (the steal persists: no more replacing in this job).
    With envs, each count and the budget are per env, processes alternate between the envs in
    whole rounds (`pyenvs.env_of`; a replacement runs in its env), and rounds are added until the
    A/B pairs could be significant; a failure ends the job after its round, so every env has rows,
    and a mode that failed in an env is left out of that env's later processes only. With
    timing.interleave=processes, the modes take the envs' place: each process measures one mode, the
    counts and the budget are per mode, a failure ends the job after its round, and the CI is judged
    on the pairs (`mode_processes.merged_pairs`). The first timing.cold_processes processes (of each env or mode)
    measure the cold first calls; the rest read the programs from the job's compilation cache at `cache_dir`.
    """
    cfg = per_variant_budgets(cfg)
    t = cfg.timing
    if cfg.isolate == "none":
        task = Task(cfg, 0, cfg.mode.names, max(cfg.calls, 1), True, fresh=False, payload=payload)
        return [run_task(task, cfg)], "isolate=none", []
    results = [] if results is None else results
    replaced: list[ProcessResult] = []
    separate = cfg.timing.interleave == "processes"
    names: list[str | None] = list(cfg.mode.names if separate else cfg.envs or [None])
    # the modes each slot (an env, or with separate modes a mode) still measures
    modes: dict[str | None, tuple[str, ...]] = {
        name: (name,) if separate and name is not None else cfg.mode.names for name in names
    }
    stand_in: dict[str | None, ProcessResult] = {}
    failed = False
    last_replaced = steal_persists = False
    start = time.perf_counter()
    while True:
        p = len(results) // len(names)  # the process's number in its env (its pair, with envs)
        slot = pyenvs.env_of(len(results), names)
        env = None if separate else slot
        task = Task(
            cfg,
            p,
            modes[slot],
            max(cfg.calls, 1) if p == 0 else 1,
            extras=p == 0,
            payload=payload,
            env=env,
            cold=cold_here(t.cold_processes, p, results[0].platform if results else None),
            cache_dir=cache_dir,
        )
        # separate modes: a mode that failed starts no more processes; its failure stands in for them
        prepared = handover if handover is not None and hands_over(cfg) else None
        if status is not None:
            status.started(len(results))
        if slot in stand_in:
            result = stand_in[slot]
        else:
            result = run_task(task, cfg, prepared) if prepared is not None else run_task(task, cfg)
        if status is not None:
            status.finished(result)
        started = (len(results) + len(replaced)) // len(names) + 1
        budget = time.perf_counter() - start < t.job_time_s * len(names)
        # a replacement stolen from too: the steal persists, and replacing would only spend the budget
        steal_persists = steal_persists or (result.noise.under_steal and last_replaced)
        last_replaced = (
            result.noise.under_steal and not steal_persists and not failed and started < t.max_processes and budget
        )
        if last_replaced:
            replaced.append(result)  # the next process takes its place (and its index and env)
            continue
        results.append(result)
        if result.config_error is not None:
            return results, "error", replaced  # a user's mistake: run() says it in one line, at once
        modes[slot] = tuple(m for m in modes[slot] if not result.mode_failed(m))
        if separate and not modes[slot] and not result.failed and slot not in stand_in:
            failure = {m: ModeResult(r.error) for m, r in result.modes.items()}  # the failure alone, no cold call
            stand_in[slot] = dataclasses.replace(result, modes=failure, measure_s=0.0, noise=Noise())  # ran nothing
        failed = failed or result.failed or (not modes[slot] if not separate else not any(modes.values()))
        if len(results) % len(names):
            continue  # with envs: whole rounds, one process of each env (after a failure too: every env gets rows)
        if failed:
            return results, "error", replaced
        n = len(results) // len(names)
        if n < t.processes:
            continue
        if n >= t.max_processes:
            return results, "max_processes", replaced
        if time.perf_counter() - start >= t.job_time_s * len(names):
            return results, "budget", replaced
        if (
            ci_met(merged_pairs(results, cfg.mode.names), cfg.mode.names, t.target_rel_ci, unpaired=True)
            if separate
            else pyenvs.enough(results, names, cfg.mode.names, t.target_rel_ci)
        ):
            return results, "ci", replaced


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


def disk_cache_probe(cfg: ExperimentConfig, env: str | None = None) -> tuple[ProcessResult, ProcessResult] | None:
    """With cache_probe=true: a cold first call of each compiled mode writing a fresh cache directory (under
    compilation_cache_dir when set), then one in another fresh worker reading it back."""
    modes = tuple(m for m in cfg.mode.names if m in ("jit", "aot"))
    if not cfg.cache_probe or not modes:
        return None
    root = Path(cfg.compilation_cache_dir).expanduser() if cfg.compilation_cache_dir else None
    if root is not None:
        root.mkdir(parents=True, exist_ok=True)
    probe_dir = tempfile.mkdtemp(prefix="jitexp-cache-probe-", dir=root)
    task = Task(cfg, 0, modes, extras=False, fresh=cfg.isolate != "none", kind="cache", env=env, cache_dir=probe_dir)
    try:
        cold = run_task(task, cfg)
        warm = run_task(task, cfg)
    finally:
        shutil.rmtree(probe_dir, ignore_errors=True)
    return cold, warm


def profile_probe(cfg: ExperimentConfig, cache_dir: str | None = None) -> ProcessResult | None:
    """With profile=true: one more worker, after the timed ones, runs each compiled mode's steady calls under
    jax.profiler.trace (jitexp.worker.profiling), its programs from the job's cache."""
    modes = tuple(m for m in cfg.mode.names if m in ("jit", "aot"))
    if not cfg.profile or not modes:
        return None
    task = Task(cfg, 0, modes, extras=False, fresh=cfg.isolate != "none", kind="profile", cache_dir=cache_dir)
    return run_task(task, cfg)


def retrace_probe(cfg: ExperimentConfig, env: str | None = None) -> dict[str, ProcessResult]:
    """With a `sequence`: each mode but numpy calls the variants in order, in a fresh worker of its own."""
    if not cfg.sequence:
        return {}
    return {
        mode: run_task(Task(cfg, 0, (mode,), extras=False, fresh=cfg.isolate != "none", kind="sequence", env=env), cfg)
        for mode in cfg.mode.names
        if mode != "numpy"
    }
