"""Fresh worker processes from a forkserver that has imported JAX: start one, collect its plain result.

One forkserver per jitexp process, reused by every job of a sweep. It preloads
`jitexp.worker` (and so JAX) but never creates a backend: forking a process whose XLA client
threads exist is unsafe. A worker costs ~0.2 s instead of ~2 s for a cold `import jax`.
Environment variables (JAX_*, XLA_FLAGS) are read when the server starts.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from dataclasses import dataclass, field
from typing import Any

from .config import ExperimentConfig

PRELOAD = ["jitexp.worker"]
_context: Any = None


@dataclass
class Task:
    """One process's share of a job: the config, which process it is, and what it records."""

    cfg: ExperimentConfig
    process: int = 0
    modes: tuple[str, ...] = ()  # the modes to measure (a mode that failed to compile is not retried)
    calls: int = 1  # calls from cold to time one by one (>= 1: the cold first call)
    extras: bool = True  # check against eager, cost analysis, dispatch probes (the first process)
    fresh: bool = True  # a fresh process: the first mode's first call needs no clear_caches
    sys_path: list[str] = field(default_factory=list)
    cwd: str = ""


def context() -> Any:
    """The forkserver context, configured once."""
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        _context.set_forkserver_preload(PRELOAD)
    return _context


def run_worker(task: Task, timeout_s: float) -> dict:
    """Measure `task` in a fresh process; a crash or a timeout comes back as an error dict."""
    ctx = context()
    task.sys_path = list(sys.path)
    task.cwd = os.getcwd()
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_entry, args=(task, send), daemon=True)
    proc.start()
    send.close()
    try:
        if receive.poll(timeout_s):
            try:
                result = receive.recv()
            except EOFError:  # the worker died before it sent anything
                result = None
        else:
            result = None
            if proc.is_alive():
                proc.kill()
                proc.join()
                return {"process": task.process, "modes": {}, "config_error": None,
                        "error": _failure("timeout", "Timeout", f"no result after timing.timeout_s={timeout_s:g} s",
                                          "raise timing.timeout_s, or use a smaller size")}
        proc.join()
    finally:
        receive.close()
    if result is not None:
        return result
    return {"process": task.process, "modes": {}, "config_error": None,
            "error": _failure("crash", _exit_name(proc.exitcode), f"the worker process exited with code {proc.exitcode}",
                              "run with isolate=none to see the traceback")}


def _entry(task: Task, conn: Any) -> None:
    from .worker import entry  # preloaded by the forkserver: no import cost here

    entry(task, conn)


def _exit_name(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit {code}"


def _failure(phase: str, error_type: str, message: str, hint: str) -> dict:
    return {"status": "error", "error_phase": phase, "error_type": error_type, "error_message": message, "hint": hint}
