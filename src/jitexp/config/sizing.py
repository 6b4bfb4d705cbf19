"""What a job's inputs weigh, and the one memory guard that refuses a job before it allocates."""

from __future__ import annotations

import math
from typing import Any

from jitexp.config.schema import ExperimentConfig
from jitexp.errors import ConfigError
from jitexp.machine import available_memory

ITEMSIZE = {
    "float16": 2,
    "bfloat16": 2,
    "float32": 4,
    "float64": 8,
    "int8": 1,
    "int16": 2,
    "int32": 4,
    "int64": 8,
    "uint8": 1,
    "uint32": 4,
    "bool": 1,
    "complex64": 8,
    "complex128": 16,
}


def array_specs(cfg: ExperimentConfig) -> list[dict]:
    """The array specs among the workload's arguments and keyword arguments (not literals; none under setup)."""
    specs = [a for a in cfg.workload.args or [] if "value" not in a]
    return specs + [v for v in cfg.workload.kwargs.values() if isinstance(v, dict) and "value" not in v]


def needs_x64(cfg: ExperimentConfig) -> bool:
    """float64 anywhere (the job's dtype or an argument's) turns on x64 for the job."""
    wide = {"float64", "int64", "complex128"}
    return cfg.dtype in wide or any(a.get("dtype") in wide for a in array_specs(cfg))


def input_bytes(cfg: ExperimentConfig) -> int:
    """Peak host bytes to build the job's array specs: each array, its float working copy, its device copy.

    (A setup function's inputs are estimated in the worker, from the shapes it returns.)
    """
    total = 0
    for arg in array_specs(cfg):
        count = math.prod(arg.get("shape", []))
        size = ITEMSIZE.get(arg.get("dtype", cfg.dtype), 8)
        total += count * (2 * size + (8 if size >= 8 else 4))
    return total


def check_memory(key: str, value: Any, need: int, what: str, purpose: str = "") -> None:
    """The one memory guard: refuse, before it allocates, a job whose arrays need more than the memory available.

    `what` says what needs it ("the inputs", "workload.setup's arrays (2 mode(s), a check ...)"); the error names
    the key the user sets to make it smaller; `purpose` follows the figure (" to build"). Memory that cannot be
    read refuses nothing.
    """
    available = available_memory()
    if available is not None and need > available:
        raise ConfigError(
            key,
            value,
            f"{what} need about {need / 2**30:.1f} GiB{purpose}, and {available / 2**30:.1f} GiB of memory is available",
        )
