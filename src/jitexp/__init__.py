"""jitexp: what jax.jit does to your functions, measured honestly.

Python API (mirrors the CLI): `measure(fn, *args, **options) -> Measurement` on a function object,
`compose(overrides) -> ExperimentConfig`, `run(cfg) -> JobResult`, `load_results(dir) -> DataFrame`,
`speedup_table(df)`, `make_report(dir)`; `%load_ext jitexp` for the `%jitexp` IPython magic.
Importing jitexp does not import JAX, and neither do run() and measure(): JAX runs in their worker
processes (and in this one with isolate="none"); a user's own module imported to check it may bring it in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .config import DeviceConfig, ExperimentConfig, ModeConfig, TimingConfig, WorkloadConfig
from .errors import ConfigError
from .records import Inputs

__version__ = "0.1.0"

# run/compose/report/load_results pull in Hydra, pandas or matplotlib: loaded on first use.
_LAZY = {
    "load_results": "results",
    "run": "runner",
    "JobResult": "records",
    "compose": "preflight",
    "speedup_table": "tables",
    "errors_table": "tables",
    "scaling_table": "tables",
    "make_report": "report",
    "format_sweep_summary": "report",
    "compare": "comparison",
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
    "measure",
    "Measurement",
    "load_ipython_extension",
]

if TYPE_CHECKING:
    from .api import Measurement, measure
    from .comparison import compare
    from .ipython import load_ipython_extension
    from .preflight import compose
    from .records import JobResult
    from .report import format_sweep_summary, make_report
    from .results import load_results
    from .runner import run
    from .tables import errors_table, scaling_table, speedup_table


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'jitexp' has no attribute {name!r}")
