"""Config schemas (dataclasses), their validation, and their ConfigStore registration.

Imports neither JAX nor files: `jitexp --help` and `--cfg job` stay fast.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import inspect
import logging
import math
import os
import tempfile
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional

from omegaconf import MISSING, DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from .errors import ConfigError, first_line, qualified_name

log = logging.getLogger("jitexp")

CONFIG_MODULE = "jitexp.conf"  # where the packaged conf/ lives (pkg://jitexp.conf)

DTYPES = ("float32", "float16", "bfloat16", "float64")
MODES = ("eager", "jit", "aot", "numpy")  # the order modes are reported and paired in (the first is the baseline)
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
    args: List[Any] = MISSING  # required: a function with no arguments says `args: []`
    static_argnums: List[int] = field(default_factory=list)
    params: Dict[str, Any] = field(default_factory=dict)
    # rules on params, e.g. {n: ">= 0"} or {classes: "> 0 and <= 100000"}: checked by validate
    checks: Dict[str, str] = field(default_factory=dict)
    description: str = ""
    numpy_fn: Optional[str] = None  # import path of a NumPy twin taking the same arguments (mode numpy)


@dataclass
class ModeConfig:
    """How to run it: which modes a job measures together (each conf/mode file sets its own flag).

    `mode=jit` selects one; `mode=[eager,jit]` (Hydra's multi-select) several, measured
    interleaved and paired in the same processes.
    """

    eager: bool = False  # op-by-op dispatch: the function called as written
    jit: bool = False  # jax.jit(fn, static_argnums=...)
    aot: bool = False  # jax.jit(fn).lower(*args).compile(), then calls of the Compiled object
    numpy: bool = False  # the workload's NumPy twin (workload.numpy_fn) on host arrays
    static_argnums: Optional[List[int]] = None  # null: the workload's default
    # jit/aot: arguments whose buffers XLA may reuse for an output of the same shape and dtype
    donate_argnums: List[int] = field(default_factory=list)
    compiler_options: Dict[str, Any] = field(default_factory=dict)  # XLA options for jit/aot compiles

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
    resume: bool = False  # skip jobs whose folder already holds rows of the same config
    fail_on_error: bool = False  # a sweep with any error row exits 1 (a single job with one always does)
    # retrace probe: argument variants called in order in a fresh worker per mode, one calls.csv
    # row each, e.g. [{n: 2}, {n: 3}, {n: 2}]; keys: workload params, size, dtype, python_scalars
    sequence: List[Dict[str, Any]] = field(default_factory=list)

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


def _require_positive(key: str, value: float, *, allow_zero: bool = False) -> None:
    ok = value >= 0 if allow_zero else value > 0
    if not (ok and math.isfinite(value)):
        raise ConfigError(key, value, "must be >= 0" if allow_zero else "must be > 0")


def validate(cfg: ExperimentConfig) -> ExperimentConfig:
    """Check values the schema's types cannot; raise ConfigError naming key, value and choices.

    Returns its argument unchanged: validation never edits a config (to_config normalises).
    """
    _choice("dtype", cfg.dtype, DTYPES)
    _choice("device.platform", cfg.device.platform, PLATFORMS)
    _require_positive("device.index", cfg.device.index, allow_zero=True)
    _require_positive("size", cfg.size)
    _require_positive("calls", cfg.calls, allow_zero=True)
    t = cfg.timing
    for key in ("min_samples", "max_samples", "min_sample_time_s", "max_time_s", "target_rel_ci",
                "processes", "max_processes", "job_time_s", "timeout_s", "dispatch_probes"):
        _require_positive(f"timing.{key}", getattr(t, key))
    if not t.target_rel_ci < 1:
        raise ConfigError("timing.target_rel_ci", t.target_rel_ci, "must lie in (0, 1): a fraction of the median, e.g. 0.02")
    _require_positive("timing.warmup", t.warmup, allow_zero=True)
    if t.max_samples < t.min_samples:
        raise ConfigError("timing.max_samples", t.max_samples, f"must be >= timing.min_samples ({t.min_samples})")
    if t.max_processes < t.processes:
        raise ConfigError("timing.max_processes", t.max_processes, f"must be >= timing.processes ({t.processes})")
    if not _import_path(cfg.workload.fn):
        raise ConfigError("workload.fn", cfg.workload.fn, "an import path like package.module.function")
    if not isinstance(cfg.workload.args, list):
        raise ConfigError("workload.args", None, _NEEDS["workload.args"])
    if not cfg.mode.names:
        raise ConfigError("mode", [], "select at least one mode: eager, jit, aot, numpy (several as mode=[eager,jit])")
    if cfg.workload.numpy_fn is not None and not _import_path(cfg.workload.numpy_fn):
        raise ConfigError("workload.numpy_fn", cfg.workload.numpy_fn, "an import path like package.module.function")
    if cfg.mode.numpy and cfg.workload.numpy_fn is None:
        raise ConfigError("mode", "numpy", f"workload {cfg.workload_name} declares no numpy_fn (a NumPy twin); "
                                           "select eager, jit or aot, or set workload.numpy_fn")
    _choice("isolate", cfg.isolate, ISOLATES)
    if cfg.compilation_cache_dir is not None:
        writable_dir("compilation_cache_dir", cfg.compilation_cache_dir)
    for name, rule in cfg.workload.checks.items():
        _check_param(name, cfg.workload.params, rule)
    for i, arg in enumerate(cfg.workload.args):
        _validate_arg(f"workload.args[{i}]", arg, cfg)
    for i, item in enumerate(cfg.sequence):
        if not isinstance(item, dict) or "_args" not in item:
            raise ConfigError(f"sequence[{i}]", item, "needs the config composed from YAML (the command line or "
                                                      "jitexp.compose) so that each variant's arguments resolve")
    n_args = len(cfg.workload.args)
    which = "mode.static_argnums" if cfg.mode.static_argnums is not None else "workload.static_argnums"
    statics = cfg.static_argnums
    for i in statics:
        if not -n_args <= i < n_args:
            raise ConfigError(which, list(statics), f"indices must lie in [0, {n_args}) for {n_args} argument(s)")
        arg = cfg.workload.args[i]
        if "value" not in arg:
            raise ConfigError(which, list(statics), f"argument {i} is an array; only literal {{value: ...}} arguments can be static")
    donated = cfg.mode.donate_argnums
    arrays = [i for i, a in enumerate(cfg.workload.args) if "value" not in a and i not in {s % n_args for s in statics}]
    if any(i not in arrays for i in donated):
        raise ConfigError("mode.donate_argnums", list(donated), f"positions of traced array arguments: {arrays}")
    return cfg


def _import_path(path: str | None) -> bool:
    return bool(path) and path.count(".") >= 1 and all(part.isidentifier() for part in path.split("."))


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


_OPS = {">=": float.__ge__, ">": float.__gt__, "<=": float.__le__, "<": float.__lt__}


def _check_param(name: str, params: Mapping[str, Any], rule: str) -> None:
    """A workload's declared rule on one param: comparisons joined by `and`, e.g. ">= 0 and < 100"."""
    key = f"workload.params.{name}"
    if name not in params:
        raise ConfigError(f"workload.checks.{name}", rule, f"names no param; params: {', '.join(params) or '(none)'}")
    value = params[name]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(key, value, f"must be a number {rule}")
    for part in str(rule).split(" and "):
        op, _, bound = part.strip().partition(" ")
        try:
            ok = _OPS[op](float(value), float(bound))
        except (KeyError, ValueError):
            raise ConfigError(f"workload.checks.{name}", rule, 'comparisons like ">= 0" joined by " and "') from None
        if not ok:
            raise ConfigError(key, value, f"must be {rule}")


def check_param_types(defaults: Mapping[str, Any], params: Mapping[str, Any]) -> None:
    """Workload params keep the type of their default (an int default takes ints, a float takes numbers)."""
    for name, default in defaults.items():
        if name not in params or default is None:
            continue
        value, want = params[name], type(default)
        if want is bool:
            ok = isinstance(value, bool)
        elif want is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif want is float:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        elif want is str:
            ok = isinstance(value, str)
        else:
            continue
        if not ok:
            raise ConfigError(f"workload.params.{name}", value, f"{_TYPE_WORDS[want]} like its default ({default!r})")


_TYPE_WORDS = {int: "must be an integer", float: "must be a number", bool: "must be true or false",
               str: "must be a string"}


def expected_type(key: str) -> str:
    """What the schema accepts at a dotted key, in words ("must be an integer"), for type errors."""
    node: Any = ExperimentConfig
    hint: Any = None
    for part in key.split("."):
        fields = {f.name: f for f in dataclasses.fields(node)} if dataclasses.is_dataclass(node) else {}
        if part not in fields:
            return "has the wrong type"
        hint = typing.get_type_hints(node)[part]
        node = hint
    optional = typing.get_origin(hint) is typing.Union and type(None) in typing.get_args(hint)
    if optional:
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
    origin = typing.get_origin(hint)
    if origin in (list, List):
        item = typing.get_args(hint)
        words = "must be a list" + (" of integers" if item == (int,) else
                                    " of mappings" if item and typing.get_origin(item[0]) in (dict, Dict) else "")
    elif origin in (dict, Dict):
        words = "must be a mapping"
    else:
        words = _TYPE_WORDS.get(hint, "has the wrong type")
    return words + (" or null" if optional else "")


def unknown_key(key: str, value: Any, known: Iterable[str]) -> ConfigError:
    """The error for a key the config does not have, with a "did you mean" from the keys beside it."""
    parent, _, name = key.rpartition(".")
    known = sorted(str(k) for k in known)
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    where = f"{parent} has" if parent else "the config has"
    if close:
        hint = f"no such key; did you mean {parent + '.' if parent else ''}{close[0]}?"
    else:
        hint = f"no such key; {where} " + (", ".join(known) if known else "none")
    return ConfigError(key, value, hint)


def _unknown_keys(cfg: Any, schema: type = ExperimentConfig, prefix: str = "") -> None:
    """Refuse keys the schema does not know (a `+sise=64` addition is a typo, not a new knob)."""
    if not isinstance(cfg, dict):
        return
    hints = typing.get_type_hints(schema)
    for k, value in cfg.items():
        if k not in hints:
            raise unknown_key(f"{prefix}{k}", value, hints)
        if dataclasses.is_dataclass(hints[k]):
            _unknown_keys(value, hints[k], f"{prefix}{k}.")


_NEEDS = {
    "workload.fn": "needs an import path like package.module.function (workload.fn=...)",
    "workload.args": "needs the function's arguments, e.g. 'workload.args=[{shape:[${size}]},{value:3}]'",
}


def from_dict(cfg: DictConfig | dict) -> ExperimentConfig:
    """A composed (Dict)Config as a validated ExperimentConfig, interpolations resolved."""
    return validate(to_config(cfg))


def to_config(cfg: DictConfig | dict) -> ExperimentConfig:
    """A composed (Dict)Config as an ExperimentConfig, not validated: for a config the preflight has checked.

    Normalises one thing: a job selecting numpy among other modes for a workload without a
    NumPy twin measures the others (a sweep over workloads measures numpy where a twin exists).
    """
    node = cfg if isinstance(cfg, DictConfig) else OmegaConf.create(cfg)
    _unknown_keys(OmegaConf.to_container(node, resolve=False))
    missing = sorted(OmegaConf.missing_keys(node))
    if missing:
        raise ConfigError(missing[0], None, _NEEDS.get(missing[0], "needs a value (it is ??? in the config)"))
    for i, item in enumerate(node.get("sequence") or []):
        if not isinstance(item, DictConfig):
            raise ConfigError(f"sequence[{i}]", item, _SEQUENCE_FORM)
    try:
        exp = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(ExperimentConfig), cfg))
    except OmegaConfBaseException as exc:
        key = getattr(exc, "full_key", None) or "config"
        message = str(exc).strip().splitlines()[0]
        raise ConfigError(key, None, message) from None
    exp.sequence = resolve_sequence(node, exp)
    if exp.mode.numpy and exp.workload.numpy_fn is None and exp.mode.names != ("numpy",):
        exp.mode = dataclasses.replace(exp.mode, numpy=False)
        log.warning("%s declares no numpy_fn: measuring %s without numpy", exp.workload_name, ",".join(exp.mode.names))
    return exp


SEQUENCE_KEYS = ("size", "dtype", "python_scalars")
_SEQUENCE_FORM = "a mapping of changes, e.g. {n: 3}, {size: 64}, {dtype: float64}, {python_scalars: [1]} or {} (as configured)"


def resolve_sequence(node: DictConfig, exp: ExperimentConfig) -> list[dict]:
    """Each sequence variant with its own arguments, resolved from the job's YAML with the changes applied.

    A variant is resolved like a job of its own (a param change reaches every argument that
    interpolates it) and keeps `_label`, `_args` and `_dtype` for the worker.
    """
    resolved = []
    for i, item in enumerate(exp.sequence):
        key = f"sequence[{i}]"
        if isinstance(item, dict) and "_args" in item:  # resolved already (a config passed on)
            resolved.append(item)
            continue
        if not isinstance(item, dict):
            raise ConfigError(key, item, _SEQUENCE_FORM)
        changes: dict[str, Any] = {"sequence": []}
        for name, value in item.items():
            if name in ("size", "dtype"):
                changes[name] = value
            elif name in exp.workload.params:
                changes.setdefault("workload", {"params": {}})["params"][name] = value
            elif name != "python_scalars":
                raise unknown_key(f"{key}.{name}", value, [*exp.workload.params, *SEQUENCE_KEYS])
        try:
            variant = from_dict(OmegaConf.merge(node, changes))
        except ConfigError as error:
            raise ConfigError(f"{key}.{error.key.rpartition('.')[2]}", error.value, error.expected) from None
        scalars = item.get("python_scalars", [])
        literals = [j for j, a in enumerate(variant.workload.args) if "value" in a]
        if not isinstance(scalars, list) or any(j not in literals for j in scalars):
            raise ConfigError(f"{key}.python_scalars", scalars, f"a list of literal argument positions: {literals}")
        label = ", ".join(f"{k}={v}" for k, v in item.items()) or "as configured"
        resolved.append({**item, "_label": label, "_args": variant.workload.args, "_dtype": variant.dtype})
    return resolved


def writable_dir(key: str, path: str) -> None:
    """Refuse a directory that cannot be created or written, before any time is spent."""
    target = Path(path).expanduser().absolute()
    existing = target
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(key, path, f"{existing} is a file, not a directory")
    try:
        os.rmdir(tempfile.mkdtemp(dir=existing, prefix=".jitexp-probe-"))
    except OSError as exc:
        raise ConfigError(key, path, f"cannot write in {existing}: {exc.strerror or exc}") from None


def import_fn(path: str, key: str = "workload.fn") -> Callable:
    """The callable at `package.module.attr`, or a ConfigError on `key` saying why it cannot be had."""
    module_name, _, attr = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # ImportError, or the module's own code failing as it loads
        raise ConfigError(key, path,
                          f"importing {module_name!r} failed: {qualified_name(type(exc))}: {first_line(exc)}") from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ConfigError(key, path, f"module {module_name!r} has no callable {attr!r}")
    return fn


def check_arity(cfg: ExperimentConfig) -> None:
    """Import workload.fn (and numpy_fn) and check each takes len(workload.args) positional arguments, when inspectable."""
    _check_arity(cfg, "workload.fn", cfg.workload.fn)
    if cfg.workload.numpy_fn is not None:
        _check_arity(cfg, "workload.numpy_fn", cfg.workload.numpy_fn)


def _check_arity(cfg: ExperimentConfig, key: str, path: str) -> None:
    fn = import_fn(path, key)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins and some C extensions hide their signature
        return
    n_args = len(cfg.workload.args)
    try:
        signature.bind(*range(n_args))
    except TypeError:
        raise ConfigError("workload.args", None,
                          f"it lists {n_args} argument(s), but {path}{signature} does not take "
                          f"{n_args} positional argument(s)") from None


ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "int16": 2, "int32": 4,
            "int64": 8, "uint8": 1, "uint32": 4, "bool": 1, "complex64": 8, "complex128": 16}


def input_bytes(cfg: ExperimentConfig) -> int:
    """Peak host bytes to build the job's inputs: each array, its float working copy, its device copy."""
    total = 0
    for arg in cfg.workload.args:
        if "value" in arg:
            continue
        count = math.prod(arg.get("shape", []))
        size = ITEMSIZE.get(arg.get("dtype", cfg.dtype), 8)
        total += count * (2 * size + (8 if size >= 8 else 4))
    return total


def register_configs() -> None:
    """Register the schemas so conf/config.yaml can validate against them (defaults: jitexp_schema)."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name="jitexp_schema", node=ExperimentConfig)
    # for conf/hydra/launcher/jitexp_slurm.yaml
    OmegaConf.register_new_resolver("jitexp_gpus", lambda platform: 1 if platform == "gpu" else None, replace=True)
    OmegaConf.register_new_resolver(
        "jitexp_minutes", lambda *seconds: int(math.ceil(sum(float(s) for s in seconds) / 60)) + 1, replace=True)
