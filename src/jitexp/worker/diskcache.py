"""The job's persistent compilation cache inside a worker: each program compiled once a job.

The processes that measure cold first calls compile each mode into an empty cache of its own (as a process that
never had a cache, plus the writes) and move the entries into the job's cache after; every other process, and the
sampling that follows a cold call, reads the programs from there (engine.jobcache makes and removes the folder).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import jax

from jitexp.records import INPUTS_FOLDER

CACHE_FLAGS = (
    "jax_enable_compilation_cache",
    "jax_compilation_cache_dir",
    "jax_persistent_cache_min_compile_time_secs",
    "jax_persistent_cache_enable_xla_caches",
)


def use(path: str | None) -> None:
    """Point JAX's persistent compilation cache at `path`, every compile cached (eager's ops too: a minimum
    compile time of 0), or turn it off (None)."""
    jax.config.update("jax_enable_compilation_cache", path is not None)
    if path is not None:
        jax.config.update("jax_compilation_cache_dir", path)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        # XLA's GPU kernel and autotune caches sit in the cache folder, and their paths enter the cache key: a
        # cold call's own folder would then key its programs apart from the job's (none are used on a CPU or TPU)
        jax.config.update("jax_persistent_cache_enable_xla_caches", "none")
    reset()


def reset() -> None:
    """Make JAX look at the cache flags again: it decides once per process whether the persistent cache is used
    (private API, jax 0.10)."""
    from jax._src import compilation_cache

    compilation_cache.reset_cache()


@contextmanager
def own_empty(job_dir: str | None) -> Iterator[None]:
    """A cold call's own empty cache; its entries join the job's cache after, and the job's cache is in use again.
    Without a job cache (None), the cache stays off."""
    if job_dir is None:
        yield
        return
    os.makedirs(job_dir, exist_ok=True)
    own = tempfile.mkdtemp(prefix=".cold-", dir=job_dir)  # JAX reads only its own entries' names in a cache folder
    use(own)
    try:
        yield
    finally:
        merge(own, job_dir)
        shutil.rmtree(own, ignore_errors=True)
        use(job_dir)


def merge(source: str, target: str) -> None:
    """Move the cache entries of `source` into `target`, keeping any that `target` already holds."""
    os.makedirs(target, exist_ok=True)
    for entry in Path(source).iterdir():
        if entry.is_file() and not entry.name.startswith(".") and not (Path(target) / entry.name).exists():
            os.replace(entry, Path(target) / entry.name)


def inputs_folder(cache_dir: str | None) -> str | None:
    """Where a job's processes keep and read their large inputs (None: each draws its own); engine.jobcache removes
    it with the job."""
    if cache_dir is None:
        return None
    folder = Path(cache_dir) / INPUTS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder)
