"""The job's persistent compilation cache folder: made before its first process, removed after its last.

Each program is compiled once a job: the processes that measure cold first calls write their programs here
(worker.diskcache), and every later process reads them. A folder the user named (compilation_cache_dir) is kept,
so the jobs of a sweep that name one share it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jitexp.config import ExperimentConfig
from jitexp.records import INPUTS_FOLDER


def wanted(cfg: ExperimentConfig) -> bool:
    """The cache is on for fresh worker processes of one task each (not in-process: the caller's own JAX; not SLURM
    tasks, whose ranks would need one shared folder)."""
    return cfg.compilation_cache and cfg.isolate == "process" and cfg.distributed.processes == 1


@contextmanager
def job_cache(cfg: ExperimentConfig) -> Iterator[str | None]:
    """The folder for this job's processes (None: the cache is off), removed afterwards unless the user named it."""
    if not wanted(cfg):
        yield None
        return
    if cfg.compilation_cache_dir is not None:
        path = Path(cfg.compilation_cache_dir).expanduser()
        path.mkdir(parents=True, exist_ok=True)
        try:
            yield str(path)
        finally:
            shutil.rmtree(path / INPUTS_FOLDER, ignore_errors=True)  # the programs stay; the job's inputs go with it
        return
    folder = tempfile.mkdtemp(prefix="jitexp-cache-")
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
