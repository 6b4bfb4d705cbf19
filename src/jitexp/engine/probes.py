"""The probe workers a job runs after its timed processes: the disk cache, the retrace sequence, the profile."""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jitexp.config import ExperimentConfig
from jitexp.engine.launch import run_task
from jitexp.records import ProcessResult, Task


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


@contextmanager
def timed(into: dict[str, float], name: str) -> Iterator[None]:
    """The seconds the block took, in `into[name]`."""
    start = time.perf_counter()
    try:
        yield
    finally:
        into[name] = time.perf_counter() - start
