"""jitexp: what jax.jit does to your functions, measured honestly.

Python API (mirrors the CLI): `measure(fn, *args, **options) -> Measurement` on a function object,
`compose(overrides) -> ExperimentConfig`, `run(cfg) -> JobResult`, `load_results(dir) -> DataFrame`,
`speedup_table(df)`, `make_report(dir)`, `compare(base, new)`, `history(runs)`, `bisect(good, bad, command)`,
`fit(overrides, key=...) -> FitResult` (the largest value of one key that fits in memory),
`tune(overrides) -> TuneResult` (a hydra/sweeper=tune study);
`%load_ext jitexp` for the `%jitexp` IPython magic.
Importing jitexp does not import JAX, and neither do run() and measure(): JAX runs in their worker
processes (and in this one with isolate="none"); a user's own module imported to check it may bring it in.
"""

from __future__ import annotations

import os as _os
import sys as _sys

# the console scripts, and the module whose main() handles a KeyboardInterrupt itself
_GUARDED = {"jitexp": "jitexp.cli", "jitexp-history": "jitexp.bisection"}
_COMMANDS = ("jitexp", "jitexp-report", "jitexp-compare", "jitexp-history")
_PROG = _os.path.basename(getattr(_sys.modules.get("__main__"), "__file__", None) or "")


def _early_ctrl_c(signum: int, frame: FrameType | None) -> None:
    """A jitexp command's Ctrl-C: one line and exit 130 (Python's own handler printed a KeyboardInterrupt traceback).
    Under a main() that says what it kept itself (jitexp's, jitexp-history bisect's), Python's KeyboardInterrupt."""
    f = frame
    while f is not None:
        if f.f_code.co_name == "main" and f.f_globals.get("__name__") == _GUARDED.get(_PROG):
            raise KeyboardInterrupt
        f = f.f_back
    if _PROG == "jitexp":  # before cli.main's guard: nothing ran yet
        _sys.stderr.write(
            "\njitexp: interrupted (Ctrl-C)\njitexp: stopped before any job started: nothing was measured or written\n"
        )
        _sys.stderr.flush()
        _os._exit(130)
    _sys.stderr.write(f"\n{_PROG}: interrupted (Ctrl-C); the folder it writes may hold only part of its files\n")
    raise SystemExit(130)  # not os._exit: an atomic write's temporary file is removed on the way out


# only in a jitexp console script's process (its __main__ is that script): a notebook or a library caller keeps its
# own Ctrl-C. _signal, not signal: the latter imports enum, and this runs first of all of jitexp.
if _PROG in _COMMANDS:
    import _signal

    _signal.signal(_signal.SIGINT, _early_ctrl_c)

from typing import TYPE_CHECKING, Any  # noqa: E402

if TYPE_CHECKING:
    from types import FrameType

from jitexp.errors import ConfigError  # noqa: E402

__version__ = "0.1.0"

# run/compose/report/load_results pull in Hydra, pandas or matplotlib, the config classes OmegaConf: loaded on first
# use (the `jitexp` command's Ctrl-C guard is in place before OmegaConf loads).
_LAZY = {
    "ExperimentConfig": "config",
    "WorkloadConfig": "config",
    "ModeConfig": "config",
    "DeviceConfig": "config",
    "TimingConfig": "config",
    "Inputs": "records",
    "load_results": "store.folders",
    "run": "engine.runner",
    "JobResult": "records",
    "compose": "engine.preflight",
    "speedup_table": "report.run.tables",
    "errors_table": "report.run.tables",
    "scaling_table": "report.run.tables",
    "make_report": "report.run.build",
    "format_sweep_summary": "report.run.terminal",
    "compare": "report.compare.gate",
    "history": "report.history.timeline",
    "bisect": "bisection",
    "fit": "engine.fit",
    "FitResult": "engine.fit",
    "tune": "engine.tune_api",
    "TuneResult": "engine.tune_api",
    "measure": "api",
    "Measurement": "api",
    "load_ipython_extension": "ipython",
}

__all__ = [
    "ExperimentConfig",
    "WorkloadConfig",
    "ModeConfig",
    "DeviceConfig",
    "TimingConfig",
    "ConfigError",
    "Inputs",
    "load_results",
    "run",
    "JobResult",
    "compose",
    "speedup_table",
    "errors_table",
    "scaling_table",
    "make_report",
    "format_sweep_summary",
    "compare",
    "history",
    "bisect",
    "fit",
    "FitResult",
    "tune",
    "TuneResult",
    "measure",
    "Measurement",
    "load_ipython_extension",
]

if TYPE_CHECKING:
    from jitexp.api import Measurement, measure
    from jitexp.bisection import bisect
    from jitexp.config import DeviceConfig, ExperimentConfig, ModeConfig, TimingConfig, WorkloadConfig
    from jitexp.engine.fit import FitResult, fit
    from jitexp.engine.preflight import compose
    from jitexp.engine.runner import run
    from jitexp.engine.tune_api import TuneResult, tune
    from jitexp.ipython import load_ipython_extension
    from jitexp.records import Inputs, JobResult
    from jitexp.report.compare.gate import compare
    from jitexp.report.history.timeline import history
    from jitexp.report.run.build import make_report
    from jitexp.report.run.tables import errors_table, scaling_table, speedup_table
    from jitexp.report.run.terminal import format_sweep_summary
    from jitexp.store.folders import load_results


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'jitexp' has no attribute {name!r}")
