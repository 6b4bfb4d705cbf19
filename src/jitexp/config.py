"""Config schemas (dataclasses), their validation, and their ConfigStore registration.

Imports neither JAX nor files: `jitexp --help` and `--cfg job` stay fast.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from omegaconf import MISSING, DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from .errors import ConfigError

DTYPES = ("float32", "float16", "bfloat16", "float64")
MODES = ("eager", "jit", "aot")  # the order modes are measured, reported and paired in
ISOLATES = ("process", "none")
PLATFORMS = ("cpu", "gpu", "tpu", "auto")
INITS = ("normal", "uniform", "zeros", "ones", "arange")
ARG_DTYPES = DTYPES + ("int8", "int16", "int32", "int64", "uint8", "uint32", "bool", "complex64", "complex128")
ARRAY_KEYS = ("shape", "dtype", "init", "scale", "start")


@dataclass
class WorkloadConfig:
    """What to run: a function by import path, its arguments as data, its default statics."""

    fn: str = MISSING
    name: Optional[str] = None  # defaults to the function's name
    args: List[Any] = field(default_factory=list)
    static_argnums: List[int] = field(default_factory=list)
    params: Dict[str, Any] = field(default_factory=dict)
    description: str = ""


@dataclass
class ModeConfig:
    """How to run it: which modes a job measures together (each conf/mode file sets its own flag).

    `mode=jit` selects one; `mode=[eager,jit]` (Hydra's multi-select) several, measured
    interleaved and paired in the same processes.
    """

    eager: bool = False  # op-by-op dispatch: the function called as written
    jit: bool = False  # jax.jit(fn, static_argnums=...)
    aot: bool = False  # jax.jit(fn).lower(*args).compile(), then calls of the Compiled object
    static_argnums: Optional[List[int]] = None  # null: the workload's default

    @property
    def names(self) -> tuple[str, ...]:
        """The selected modes in measuring order (eager first: it is the baseline)."""
        return tuple(m for m in MODES if getattr(self, m))


@dataclass
class DeviceConfig:
    platform: str = "cpu"
    index: int = 0


@dataclass
class TimingConfig:
    """The sampling policy; docs/measurement.md explains each knob."""

    warmup: int = 3  # calls per mode before calibration
    min_samples: int = 10  # rounds per process, at least (a round takes one sample of every mode)
    max_samples: int = 200
    min_sample_time_s: float = 0.01  # calls per sample are calibrated so a sample lasts this long
    max_time_s: float = 0.5  # sampling budget of one process
    target_rel_ci: float = 0.02  # stop when the median's 95% CI half-width is within this fraction
    processes: int = 5  # fresh worker processes per job, at least
    max_processes: int = 8  # more are added while the CI is wider than target_rel_ci...
    job_time_s: float = 15.0  # ...and the job has run for less than this
    timeout_s: float = 600.0  # a worker running longer is killed; the job becomes an error row
    dispatch_probes: int = 10


@dataclass
class ExperimentConfig:
    """One job: a workload in a mode at a size/dtype on a device, timed by a policy."""

    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    mode: ModeConfig = field(default_factory=ModeConfig)
    device: DeviceConfig = field(default_factory=DeviceConfig)
    timing: TimingConfig = field(default_factory=TimingConfig)
    size: int = 1000
    dtype: str = "float32"
    seed: int = 0
    calls: int = 0  # > 0: also record the first `calls` calls from cold in calls.csv
    check: bool = True  # compare jit/aot outputs with eager
    compilation_cache_dir: Optional[str] = None  # null: persistent cache off
    cpu_async_dispatch: Optional[bool] = None  # null: JAX's default
    isolate: str = "process"  # "process": fresh worker processes; "none": in this process (debugging)

    @property
    def workload_name(self) -> str:
        return self.workload.name or self.workload.fn.rsplit(".", 1)[-1]

    @property
    def static_argnums(self) -> tuple[int, ...]:
        """The statics in force: the mode's override, else the workload's default."""
        chosen = self.mode.static_argnums
        return tuple(self.workload.static_argnums if chosen is None else chosen)


def _choice(key: str, value: Any, choices: tuple) -> None:
    if value not in choices:
        raise ConfigError(key, value, choices)


def _positive(key: str, value: float, *, allow_zero: bool = False) -> None:
    ok = value >= 0 if allow_zero else value > 0
    if not (ok and math.isfinite(value)):
        raise ConfigError(key, value, "must be >= 0" if allow_zero else "must be > 0")


def validate(cfg: ExperimentConfig) -> ExperimentConfig:
    """Check values the schema's types cannot; raise ConfigError naming key, value and choices."""
    _choice("dtype", cfg.dtype, DTYPES)
    _choice("device.platform", cfg.device.platform, PLATFORMS)
    _positive("device.index", cfg.device.index, allow_zero=True)
    _positive("size", cfg.size)
    _positive("calls", cfg.calls, allow_zero=True)
    t = cfg.timing
    for key in ("min_samples", "max_samples", "min_sample_time_s", "max_time_s", "target_rel_ci",
                "processes", "max_processes", "job_time_s", "timeout_s", "dispatch_probes"):
        _positive(f"timing.{key}", getattr(t, key))
    _positive("timing.warmup", t.warmup, allow_zero=True)
    if t.max_samples < t.min_samples:
        raise ConfigError("timing.max_samples", t.max_samples, f"must be >= timing.min_samples ({t.min_samples})")
    if t.max_processes < t.processes:
        raise ConfigError("timing.max_processes", t.max_processes, f"must be >= timing.processes ({t.processes})")
    if not cfg.workload.fn or cfg.workload.fn.count(".") < 1 or not all(
            part.isidentifier() for part in cfg.workload.fn.split(".")):
        raise ConfigError("workload.fn", cfg.workload.fn, "an import path like package.module.function")
    if not cfg.mode.names:
        raise ConfigError("mode", [], "select at least one mode: eager, jit, aot (several as mode=[eager,jit])")
    _choice("isolate", cfg.isolate, ISOLATES)
    for i, arg in enumerate(cfg.workload.args):
        _validate_arg(f"workload.args[{i}]", arg, cfg)
    n_args = len(cfg.workload.args)
    which = "mode.static_argnums" if cfg.mode.static_argnums is not None else "workload.static_argnums"
    statics = cfg.static_argnums
    for i in statics:
        if not -n_args <= i < n_args:
            raise ConfigError(which, list(statics), f"indices must lie in [0, {n_args}) for {n_args} argument(s)")
        arg = cfg.workload.args[i]
        if "value" not in arg:
            raise ConfigError(which, list(statics), f"argument {i} is an array; only literal {{value: ...}} arguments can be static")
    return cfg


def _validate_arg(key: str, arg: Any, cfg: ExperimentConfig) -> None:
    if not isinstance(arg, dict):
        raise ConfigError(key, arg, "a mapping: {shape: [...], dtype: ..., init: ...} or {value: ...}")
    if "value" in arg:
        if len(arg) != 1:
            raise ConfigError(key, arg, "a literal is {value: ...} alone")
        return
    unknown = sorted(set(arg) - set(ARRAY_KEYS))
    if unknown:
        raise ConfigError(f"{key}.{unknown[0]}", arg[unknown[0]], "array keys: " + ", ".join(ARRAY_KEYS) + " (or a literal {value: ...})")
    shape = arg.get("shape")
    if not isinstance(shape, list) or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise ConfigError(f"{key}.shape", shape, "a list of non-negative ints, e.g. [${size}, ${size}]")
    _choice(f"{key}.dtype", arg.get("dtype", cfg.dtype), ARG_DTYPES)
    _choice(f"{key}.init", arg.get("init", "normal"), INITS)
    for num in ("scale", "start"):
        if num in arg and not isinstance(arg[num], (int, float)):
            raise ConfigError(f"{key}.{num}", arg[num], "a number")


def from_dict(cfg: DictConfig | dict) -> ExperimentConfig:
    """A composed (Dict)Config as a validated ExperimentConfig, interpolations resolved."""
    try:
        exp = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(ExperimentConfig), cfg))
    except OmegaConfBaseException as exc:
        key = getattr(exc, "full_key", None) or "config"
        message = str(exc).strip().splitlines()[0]
        raise ConfigError(key, None, message) from None
    return validate(exp)


def register_configs() -> None:
    """Register the schemas so conf/config.yaml can validate against them (defaults: jitexp_schema)."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name="jitexp_schema", node=ExperimentConfig)
