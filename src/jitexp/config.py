"""Config schemas (dataclasses), their validation, and their ConfigStore registration.

Imports no JAX (the import contract in pyproject.toml), and imports a user's module only to check a
function it names (check_arity, import_fn): `jitexp --help` and `--cfg job` stay fast.
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
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, cast

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
    """What to run: a function by import path, its arguments as data or from a setup function, its default statics."""

    fn: str = MISSING
    name: Optional[str] = None  # defaults to the function's name
    args: Optional[List[Any]] = None  # array specs and literals; a function with no arguments says `args: []`
    # or: import path of a function called in the worker with size, dtype, seed and the params as
    # keywords, returning the positional arguments (any pytrees) or jitexp.Inputs(args, kwargs)
    setup: Optional[str] = None
    kwargs: Dict[str, Any] = field(default_factory=dict)  # keyword arguments (YAML values), beside setup's
    static_argnums: List[int] = field(default_factory=list)
    static_argnames: List[str] = field(default_factory=list)
    donate_argnums: List[int] = field(
        default_factory=list
    )  # what a real loop donates: used when mode.donate_argnums is null
    # a training loop: {output position: argument position}; each timed call takes the previous call's outputs
    carry: Dict[int, int] = field(default_factory=dict)
    jit_fn: str = "jax.jit"  # the jit transformation jit and aot apply (equinox.filter_jit, flax.nnx.jit)
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
    static_argnames: Optional[List[str]] = None  # null: the workload's default
    # jit/aot: arguments whose buffers XLA may reuse for an output of the same shape and dtype;
    # null: the workload's own donate_argnums ([] for most)
    donate_argnums: Optional[List[int]] = field(default_factory=list)
    donate_argnames: List[str] = field(default_factory=list)
    compiler_options: Dict[str, Any] = field(default_factory=dict)  # XLA options for jit/aot compiles
    jit_fn: Optional[str] = None  # null: the workload's (jax.jit unless it says otherwise)

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
    """The sampling policy; docs/measurement.md explains each knob.

    These defaults are the `default` preset: conf/timing/default.yaml names no value of its own, so
    `timing=default` on the command line, `jitexp.measure` and `jitexp.run(mapping)` all get exactly
    these (tests/test_defaults.py).
    """

    warmup: int = 3  # calls per mode before calibration
    min_samples: int = 10  # rounds per process, at least (a round takes one sample of every mode)
    max_samples: int = 200
    min_sample_time_s: float = 0.01  # calls per sample are calibrated so a sample lasts this long
    max_time_s: float = 0.5  # sampling budget of one process
    target_rel_ci: float = 0.02  # stop when the median's 95% CI half-width is within this fraction
    processes: int = 6  # fresh worker processes per job, at least
    max_processes: int = 12  # more are added while the CI is wider than target_rel_ci...
    job_time_s: float = 20.0  # ...and the job has run for less than this
    timeout_s: float = 600.0  # a worker running longer is killed; the job becomes an error row
    dispatch_probes: int = 10
    max_steal: float = 0.05  # a round whose CPU steal share exceeds this is marked; mostly marked: replaced


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
    cpu_affinity: Optional[List[int]] = None  # cores the worker processes run on (null: any)
    # versions measured together in the same worker processes, each paired against the first (the
    # baseline): {name: {dotted key: value}}, e.g. {before: {workload.fn: m.f}, after: {workload.fn: m.g}}.
    # Typed Any (checked by variant_overrides): OmegaConf cannot merge `variants={...}` into a null Dict node
    variants: Optional[Any] = None
    # {name: path/to/python}: two or more Python environments (each with this jitexp installed), worker
    # processes alternating between them; the first is the baseline (jitexp.envserver, jitexp.envs).
    # Typed Any: `envs={a: ..., b: ...}` then replaces null on the command line (a null Dict node cannot
    # take a merge, and a {} one refuses new keys without +); _validate_envs checks the shape.
    envs: Any = None

    @property
    def workload_name(self) -> str:
        return self.workload.name or self.workload.fn.rsplit(".", 1)[-1]

    @property
    def static_argnums(self) -> tuple[int, ...]:
        """The statics in force: the mode's override, else the workload's default."""
        chosen = self.mode.static_argnums
        return tuple(self.workload.static_argnums if chosen is None else chosen)

    @property
    def static_argnames(self) -> tuple[str, ...]:
        """The static keyword names in force: the mode's override, else the workload's default."""
        chosen = self.mode.static_argnames
        return tuple(self.workload.static_argnames if chosen is None else chosen)

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """The donated positions in force: the mode's list, else (null) the workload's declared ones."""
        chosen = self.mode.donate_argnums
        return tuple(self.workload.donate_argnums if chosen is None else chosen)

    @property
    def jit_fn(self) -> str:
        """The jit transformation in force: the mode's override, else the workload's."""
        return self.mode.jit_fn or self.workload.jit_fn


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
    for key in (
        "min_samples",
        "max_samples",
        "min_sample_time_s",
        "max_time_s",
        "target_rel_ci",
        "processes",
        "max_processes",
        "job_time_s",
        "timeout_s",
        "dispatch_probes",
    ):
        _require_positive(f"timing.{key}", getattr(t, key))
    if not t.target_rel_ci < 1:
        raise ConfigError(
            "timing.target_rel_ci", t.target_rel_ci, "must lie in (0, 1): a fraction of the median, e.g. 0.02"
        )
    _require_positive("timing.warmup", t.warmup, allow_zero=True)
    if t.max_samples < t.min_samples:
        raise ConfigError("timing.max_samples", t.max_samples, f"must be >= timing.min_samples ({t.min_samples})")
    if t.max_processes < t.processes:
        raise ConfigError("timing.max_processes", t.max_processes, f"must be >= timing.processes ({t.processes})")
    if not 0 < t.max_steal <= 1:
        raise ConfigError("timing.max_steal", t.max_steal, "must lie in (0, 1]: a share of CPU time, e.g. 0.05")
    _validate_affinity(cfg.cpu_affinity)
    if not _import_path(cfg.workload.fn):
        raise ConfigError("workload.fn", cfg.workload.fn, "an import path like package.module.function")
    _validate_inputs(cfg)
    if not cfg.mode.names:
        raise ConfigError("mode", [], "select at least one mode: eager, jit, aot, numpy (several as mode=[eager,jit])")
    if cfg.workload.numpy_fn is not None and not _import_path(cfg.workload.numpy_fn):
        raise ConfigError("workload.numpy_fn", cfg.workload.numpy_fn, "an import path like package.module.function")
    if cfg.mode.numpy and cfg.workload.numpy_fn is None:
        raise ConfigError(
            "mode",
            "numpy",
            f"workload {cfg.workload_name} declares no numpy_fn (a NumPy twin); "
            "select eager, jit or aot, or set workload.numpy_fn",
        )
    _choice("isolate", cfg.isolate, ISOLATES)
    _validate_envs(cfg)
    if cfg.compilation_cache_dir is not None:
        writable_dir("compilation_cache_dir", cfg.compilation_cache_dir)
    for name, rule in cfg.workload.checks.items():
        _check_param(name, cfg.workload.params, rule)
    for i, arg in enumerate(cfg.workload.args or []):
        _validate_arg(f"workload.args[{i}]", arg, cfg)
    if cfg.variants:
        _validate_with_variants(cfg)
    for i, item in enumerate(cfg.sequence):
        if not isinstance(item, dict) or "_args" not in item:
            raise ConfigError(
                f"sequence[{i}]",
                item,
                "needs the config composed from YAML (the command line or "
                "jitexp.compose) so that each variant's arguments resolve",
            )
    if cfg.workload.args is None:  # setup builds the arguments: positions are checked against what it returns
        return cfg
    n_args = len(cfg.workload.args)
    which = "mode.static_argnums" if cfg.mode.static_argnums is not None else "workload.static_argnums"
    statics = cfg.static_argnums
    for i in statics:
        if not -n_args <= i < n_args:
            raise ConfigError(which, list(statics), f"indices must lie in [0, {n_args}) for {n_args} argument(s)")
        arg = cfg.workload.args[i]
        if "value" not in arg:
            raise ConfigError(
                which, list(statics), f"argument {i} is an array; only literal {{value: ...}} arguments can be static"
            )
    donated = cfg.donate_argnums
    arrays = [i for i, a in enumerate(cfg.workload.args) if "value" not in a and i not in {s % n_args for s in statics}]
    if any(i not in arrays for i in donated):
        raise ConfigError("mode.donate_argnums", list(donated), f"positions of traced array arguments: {arrays}")
    return cfg


def _validate_affinity(cores: Any) -> None:
    """cpu_affinity: a non-empty list of cores this process may run on."""
    if cores is None:
        return
    usable = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))
    bad = [c for c in cores if not isinstance(c, int) or c not in usable]
    if not cores or bad:
        raise ConfigError(
            "cpu_affinity",
            list(cores),
            f"cores of this machine: a non-empty list from {usable}" + (f" ({bad[0]} is not one)" if bad else ""),
        )


def _validate_envs(cfg: ExperimentConfig) -> None:
    """envs: at least two named interpreters, measured in worker processes, not beside variants."""
    if cfg.envs is None:
        return
    if not isinstance(cfg.envs, Mapping):
        raise ConfigError("envs", cfg.envs, "a mapping {name: path/to/python, ...}")
    envs = dict(cfg.envs)
    if len(envs) < 2:
        raise ConfigError(
            "envs", envs, "at least two environments, {name: path/to/python, ...}; the first is the baseline"
        )
    for name, path in envs.items():
        if not (isinstance(name, str) and name.strip()) or not (isinstance(path, str) and path.strip()):
            raise ConfigError(f"envs.{name}", path, "a name and the path of that environment's Python interpreter")
    if cfg.isolate != "process":
        raise ConfigError(
            "isolate", cfg.isolate, "envs measures in worker processes of each environment: use isolate=process"
        )
    if cfg.variants:
        raise ConfigError("envs", envs, "envs and variants cannot be combined in one job: measure one of them")


def _validate_inputs(cfg: ExperimentConfig) -> None:
    """Arguments from args or from setup (one of them), keyword arguments, names, the carry map, which jit."""
    w = cfg.workload
    if w.args is not None and w.setup is not None:
        raise ConfigError(
            "workload.setup",
            w.setup,
            "a workload gives workload.args or workload.setup, not both (workload.args=null to use setup)",
        )
    if w.args is None and w.setup is None:
        raise ConfigError("workload.args", None, _NEEDS["workload.args"])
    if w.setup is not None and not _import_path(w.setup):
        raise ConfigError("workload.setup", w.setup, "an import path like package.module.make_inputs")
    if not isinstance(w.args, (list, type(None))):
        raise ConfigError("workload.args", w.args, "a list of array specs and literals")
    jit_key = "mode.jit_fn" if cfg.mode.jit_fn else "workload.jit_fn"
    if not _import_path(cfg.jit_fn):
        raise ConfigError(jit_key, cfg.jit_fn, "an import path like jax.jit, equinox.filter_jit or flax.nnx.jit")
    names_key = "mode.static_argnames" if cfg.mode.static_argnames is not None else "workload.static_argnames"
    for key, names in (
        ("workload.kwargs", list(w.kwargs)),
        (names_key, list(cfg.static_argnames)),
        ("mode.donate_argnames", list(cfg.mode.donate_argnames)),
    ):
        bad = [n for n in names if not (isinstance(n, str) and n.isidentifier())]
        if bad:
            raise ConfigError(key, bad[0], "keyword names (Python identifiers)")
    for out, arg in w.carry.items():
        if not (isinstance(out, int) and isinstance(arg, int) and out >= 0 and arg >= 0):
            raise ConfigError(
                "workload.carry", dict(w.carry), "{output position: argument position}, e.g. {0: 0, 1: 1}"
            )
    if w.args is not None and w.carry and max(w.carry.values()) >= len(w.args):
        raise ConfigError(
            "workload.carry",
            dict(w.carry),
            f"argument positions must lie in [0, {len(w.args)}) for {len(w.args)} argument(s)",
        )
    for name, value in w.kwargs.items():  # a plain value is a literal; a mapping an array spec or {value: ...}
        if isinstance(value, dict):
            _validate_arg(f"workload.kwargs.{name}", value, cfg)


def _import_path(path: str | None) -> bool:
    return path is not None and path.count(".") >= 1 and all(part.isidentifier() for part in path.split("."))


def _validate_arg(key: str, arg: Any, cfg: ExperimentConfig) -> None:
    if not isinstance(arg, dict):
        raise ConfigError(key, arg, "a mapping: {shape: [...], dtype: ..., init: ...} or {value: ...}")
    if "value" in arg:
        if len(arg) != 1:
            raise ConfigError(key, arg, "a literal is {value: ...} alone")
        return
    unknown = sorted(set(arg) - set(ARRAY_KEYS))
    if unknown:
        close = difflib.get_close_matches(unknown[0], ARRAY_KEYS, n=1, cutoff=0.6)
        guess = f"did you mean {key}.{close[0]}? " if close else ""
        raise ConfigError(
            f"{key}.{unknown[0]}",
            arg[unknown[0]],
            guess + "array keys: " + ", ".join(ARRAY_KEYS) + " (or a literal {value: ...})",
        )
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


_TYPE_WORDS = {
    int: "must be an integer",
    float: "must be a number",
    bool: "must be true or false",
    str: "must be a string",
}


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
        words = "must be a list" + (
            " of integers"
            if item == (int,)
            else " of mappings"
            if item and typing.get_origin(item[0]) in (dict, Dict)
            else ""
        )
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
    "workload.args": (
        "needs the function's arguments, e.g. 'workload.args=[{shape:[${size}]},{value:3}]', "
        "or a function that builds them: workload.setup=package.module.make_inputs"
    ),
}


def from_dict(cfg: DictConfig | Mapping) -> ExperimentConfig:
    """A composed (Dict)Config as a validated ExperimentConfig, interpolations resolved."""
    return validate(to_config(cfg))


def to_config(cfg: DictConfig | Mapping) -> ExperimentConfig:
    """A composed (Dict)Config as an ExperimentConfig, not validated: for a config the preflight has checked.

    Normalises one thing: a job selecting numpy among other modes for a workload without a
    NumPy twin measures the others (a sweep over workloads measures numpy where a twin exists).
    """
    node = cfg if isinstance(cfg, DictConfig) else OmegaConf.create(dict(cfg))
    _unknown_keys(OmegaConf.to_container(node, resolve=False))
    overrides = variant_overrides(node)
    filled = _variant_defaults(node, overrides)
    if filled is not node:
        node = cfg = filled
    if OmegaConf.select(node, "workload.setup", default=None) is not None and OmegaConf.is_missing(
        node.workload, "args"
    ):
        node = node.copy()
        node.workload.args = None  # workload=custom with a setup: custom.yaml's `args: ???` is not needed
        cfg = node
    missing = sorted(OmegaConf.missing_keys(node))
    if missing:
        raise ConfigError(missing[0], None, _NEEDS.get(missing[0], "needs a value (it is ??? in the config)"))
    for i, item in enumerate(node.get("sequence") or []):
        if not isinstance(item, DictConfig):
            raise ConfigError(f"sequence[{i}]", item, _SEQUENCE_FORM)
    try:
        exp = cast(ExperimentConfig, OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(ExperimentConfig), cfg)))
    except OmegaConfBaseException as exc:
        key = getattr(exc, "full_key", None) or "config"
        message = str(exc).strip().splitlines()[0]
        raise ConfigError(key, None, message) from None
    exp.sequence = resolve_sequence(node, exp)
    exp.variants = resolve_variants(node, exp, overrides)
    if exp.mode.numpy and exp.workload.numpy_fn is None and exp.mode.names != ("numpy",):
        exp.mode = dataclasses.replace(exp.mode, numpy=False)
        log.warning("%s declares no numpy_fn: measuring %s without numpy", exp.workload_name, ",".join(exp.mode.names))
    return exp


SEQUENCE_KEYS = ("size", "dtype", "python_scalars")
_SEQUENCE_FORM = (
    "a mapping of changes, e.g. {n: 3}, {size: 64}, {dtype: float64}, {python_scalars: [1]} or {} (as configured)"
)


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
            variant = from_dict(cast(DictConfig, OmegaConf.merge(node, changes)))
        except ConfigError as error:
            raise ConfigError(f"{key}.{error.key.rpartition('.')[2]}", error.value, error.expected) from None
        scalars = item.get("python_scalars", [])
        literals = [j for j, a in enumerate(variant.workload.args or []) if "value" in a]
        if not isinstance(scalars, list) or any(j not in literals for j in scalars):
            raise ConfigError(f"{key}.python_scalars", scalars, f"a list of literal argument positions: {literals}")
        label = ", ".join(f"{k}={v}" for k, v in item.items()) or "as configured"
        resolved.append(
            {
                **item,
                "_label": label,
                "_args": variant.workload.args,
                "_kwargs": variant.workload.kwargs,
                "_params": variant.workload.params,
                "_size": variant.size,
                "_dtype": variant.dtype,
            }
        )
    return resolved


# ---- variants: versions of the job measured in the same processes ---------------------------

VARIANT_TOP_KEYS = ("size", "seed", "dtype")  # top-level keys a variant may set (dtype: while x64 agrees)
VARIANT_MODE_KEYS = (
    "static_argnums",
    "static_argnames",
    "donate_argnums",
    "donate_argnames",
    "compiler_options",
    "jit_fn",
)
VARIANT_OPEN = ("workload.kwargs", "workload.carry", "mode.compiler_options")  # mappings whose entries are the user's
VARIANT_NODES = ("workload", "mode", "device", "timing", "workload.params")  # written nested or dotted alike
# set once per worker process (the device, JAX's clients and flags): two values need two processes
PROCESS_KEYS = ("device", "isolate", "cpu_async_dispatch", "compilation_cache_dir", "cpu_affinity")
JOB_KEYS = (
    "timing",
    "calls",
    "check",
    "resume",
    "fail_on_error",
    "sequence",
    "variants",
    "envs",
)  # the job's, not a variant's
_PROCESS_LEVEL = (
    "is set once per worker process and variants share their processes; compare it in separate "
    "processes: envs (two installs) or a sweep (-m)"
)
_JOB_LEVEL = "is the job's, the same for every variant: set it outside variants"


def variant_overrides(node: DictConfig) -> dict[str, dict[str, Any]]:
    """The job's `variants` as {name: {dotted key: value}}, every key checked; empty when it has none.

    A key that cannot vary inside one process, or that is the job's own, or that the config does
    not have, is a ConfigError naming `variants.NAME.KEY` (with a did-you-mean for a typo).
    """
    raw = OmegaConf.select(node, "variants", default=None)
    entries = OmegaConf.to_container(raw, resolve=False) if isinstance(raw, DictConfig) else raw
    if not entries:
        return {}
    if not isinstance(entries, dict) or len(entries) < 2:
        raise ConfigError(
            "variants",
            list(entries) if isinstance(entries, dict) else entries,
            "needs two or more, the first the baseline, e.g. 'variants={before:{workload.fn:m.f},after:{workload.fn:m.g}}'",
        )
    params = list(OmegaConf.select(node, "workload.params", default=None) or {})
    out = {}
    for key_, changes in entries.items():
        name = str(key_)
        if not isinstance(changes, dict):
            raise ConfigError(f"variants.{name}", changes, "a mapping of overrides, e.g. {workload.fn: m.f}")
        flat = _flatten(changes, f"variants.{name}")
        for key, value in flat.items():
            _check_variant_key(f"variants.{name}", key, value, params)
        out[name] = flat
    return out


def _flatten(changes: Mapping, where: str, prefix: str = "") -> dict[str, Any]:
    """{workload: {fn: x}} and {workload.fn: x} alike as {"workload.fn": x} (open mappings stay values)."""
    flat: dict[str, Any] = {}
    for key, value in changes.items():
        if str(key).startswith("_"):  # resolved data kept beside the overrides
            continue
        full = f"{prefix}{key}"
        if full in VARIANT_NODES and not isinstance(value, Mapping):
            raise ConfigError(
                f"{where}.{full}",
                value,
                f"a variant sets keys of {full} ({full}.KEY: value), not a config group",
            )
        if full in VARIANT_NODES:
            flat.update(_flatten(value, where, full + "."))
        else:
            flat[full] = value
    return flat


def _check_variant_key(where: str, key: str, value: Any, params: list[str]) -> None:
    """Refuse a variant's key that cannot vary in one process, is the job's, or does not exist."""
    head, _, rest = key.partition(".")
    field_name, _, sub = rest.partition(".")
    if head in PROCESS_KEYS:
        raise ConfigError(f"{where}.{key}", value, _PROCESS_LEVEL)
    if head in JOB_KEYS or (head == "mode" and (not rest or field_name in MODES)):
        raise ConfigError(f"{where}.{key}", value, _JOB_LEVEL)
    if head in VARIANT_TOP_KEYS and not rest:
        return
    if head == "workload":
        known = [f.name for f in dataclasses.fields(WorkloadConfig)]
    elif head == "mode":
        known = list(VARIANT_MODE_KEYS)
    else:
        raise unknown_key(f"{where}.{key}", value, [*VARIANT_TOP_KEYS, "workload", "mode", *PROCESS_KEYS, *JOB_KEYS])
    if field_name not in known:
        raise unknown_key(f"{where}.{head}.{field_name}", value, known)
    if not sub or f"{head}.{field_name}" in VARIANT_OPEN:
        return
    if key.startswith("workload.params.") and "." not in sub:
        if sub not in params:
            raise unknown_key(f"{where}.{key}", value, params)
        return
    raise ConfigError(f"{where}.{key}", value, f"{head}.{field_name} takes a value, not keys")


def _variant_defaults(node: DictConfig, overrides: Mapping[str, dict]) -> DictConfig:
    """The job with a key it leaves ??? (workload=custom's fn) that every variant sets taken from the baseline's."""
    if not overrides:
        return node
    first, *others = overrides.values()
    filled = None
    for key, value in first.items():
        parent_key, _, leaf = key.rpartition(".")
        parent = OmegaConf.select(node, parent_key) if parent_key else node
        if not isinstance(parent, DictConfig) or leaf not in parent.keys() or not OmegaConf.is_missing(parent, leaf):
            continue
        if all(key in o for o in others):
            filled = filled if filled is not None else node.copy()
            OmegaConf.update(filled, key, value, merge=False)
    return filled if filled is not None else node


def resolve_variants(node: DictConfig, exp: ExperimentConfig, overrides: Mapping[str, dict]) -> dict[str, dict] | None:
    """Each variant's overrides with `_resolved`: its workload, mode, size, dtype and seed, resolved
    and validated like a job of its own (a changed size or param reaches every argument that
    interpolates it); None when the job has none."""
    if not overrides:
        return None
    base = node.copy()
    OmegaConf.set_struct(base, False)
    resolved: dict[str, dict] = {}
    x64 = None
    for name, flat in overrides.items():
        changes: dict[str, Any] = {"variants": None, "sequence": []}
        for key, value in flat.items():
            _set_dotted(changes, key, value)
        try:
            variant = from_dict(cast(DictConfig, OmegaConf.merge(base, changes)))
        except ConfigError as error:
            if not any(error.key == k or error.key.startswith(k + ".") for k in flat):
                validate(exp)  # a mistake of the job itself is named as the job's
            raise ConfigError(f"variants.{name}.{error.key}", error.value, error.expected) from None
        wide = needs_x64(variant)
        if x64 is not None and wide != x64:
            key = "dtype" if "dtype" in flat else "workload.args"
            raise ConfigError(
                f"variants.{name}.{key}",
                flat.get(key),
                f"turns x64 {'on' if wide else 'off'} and the baseline does not; x64 {_PROCESS_LEVEL}",
            )
        x64 = wide
        resolved[name] = {
            **flat,
            "_resolved": {
                "workload": dataclasses.asdict(variant.workload),
                "mode": dataclasses.asdict(variant.mode),
                "size": variant.size,
                "dtype": variant.dtype,
                "seed": variant.seed,
            },
        }
    return resolved


def _set_dotted(tree: dict, key: str, value: Any) -> None:
    """tree with `a.b.c` set to value as nested dicts (what OmegaConf.merge takes)."""
    *parents, leaf = key.split(".")
    for part in parents:
        tree = tree.setdefault(part, {})
    tree[leaf] = value


def _validate_with_variants(cfg: ExperimentConfig) -> None:
    """The probes that measure one config cannot take variants."""
    if cfg.sequence:
        raise ConfigError("sequence", "[...]", "the retrace probe calls one config; run it in a job without variants")
    if cfg.compilation_cache_dir is not None:
        raise ConfigError(
            "compilation_cache_dir",
            cfg.compilation_cache_dir,
            "the disk-cache probe measures one config; run it in a job without variants",
        )


def variant_configs(cfg: ExperimentConfig) -> dict[str, ExperimentConfig]:
    """Each variant's own config (the job's with its overrides applied), in order; empty without variants."""
    out = {}
    for name, entry in (cfg.variants or {}).items():
        r = entry["_resolved"]
        out[name] = dataclasses.replace(
            cfg,
            workload=WorkloadConfig(**r["workload"]),
            mode=ModeConfig(**r["mode"]),
            size=r["size"],
            dtype=r["dtype"],
            seed=r["seed"],
            variants=None,
        )
    return out


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


EXTRA_PACKAGES = {"flax", "optax", "equinox"}  # what `pip install "jitexp[models]"` brings


def import_fn(path: str, key: str = "workload.fn") -> Callable:
    """The callable at `package.module.attr`, or a ConfigError on `key` saying why it cannot be had."""
    module_name, _, attr = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # ImportError, or the module's own code failing as it loads
        missing = getattr(exc, "name", None) or ""
        extra = (
            '; it needs the models extra: pip install "jitexp[models]"'
            if isinstance(exc, ModuleNotFoundError) and missing.split(".")[0] in EXTRA_PACKAGES
            else ""
        )
        raise ConfigError(
            key, path, f"importing {module_name!r} failed: {qualified_name(type(exc))}: {first_line(exc)}{extra}"
        ) from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ConfigError(key, path, f"module {module_name!r} has no callable {attr!r}")
    return fn


def jit_options_in_force(cfg: ExperimentConfig) -> dict[str, Any]:
    """The jit options the job sets (empty ones left out): what jit_fn is called with."""
    values = {
        "static_argnums": list(cfg.static_argnums),
        "static_argnames": list(cfg.static_argnames),
        "donate_argnums": list(cfg.donate_argnums),
        "donate_argnames": list(cfg.mode.donate_argnames),
        "compiler_options": dict(cfg.mode.compiler_options),
    }
    return {k: v for k, v in values.items() if v}


def refused_options(jit_fn: Callable, options: Iterable[str]) -> list[str]:
    """The options a jit transformation's signature does not take (a **kwargs wrapper takes compiler_options only)."""
    try:
        params = inspect.signature(jit_fn).parameters
    except (TypeError, ValueError):
        return []
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return [o for o in options if o not in params and not (var_kw and o == "compiler_options")]


def check_arity(cfg: ExperimentConfig) -> None:
    """Import every function the workload names and check it can be called as configured, when inspectable.

    fn (and numpy_fn) take the listed arguments and keywords; setup takes size, dtype, seed and
    the params as keywords; keyword names are fn's; jit_fn takes the jit options the job sets.
    """
    w = cfg.workload
    fn = _check_call(cfg, "workload.fn", w.fn)
    if w.numpy_fn is not None:
        _check_call(cfg, "workload.numpy_fn", w.numpy_fn)
    if w.setup is not None:
        setup = import_fn(w.setup, "workload.setup")
        names = ["size", "dtype", "seed", *w.params]
        signature = _signature(setup)
        if signature is not None:
            try:
                signature.bind(**dict.fromkeys(names))
            except TypeError as exc:
                raise ConfigError(
                    "workload.setup",
                    w.setup,
                    f"{w.setup}{signature} cannot be called with size, dtype, seed and the params "
                    f"({', '.join(names[3:]) or 'none'}) as keywords ({exc}); take **kw to ignore some",
                ) from None
    signature = _signature(fn)
    if signature is not None and not any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()
    ):
        for key, names in (
            ("static_argnames", list(cfg.static_argnames)),
            ("mode.donate_argnames", cfg.mode.donate_argnames),
        ):
            unknown = [n for n in names if n not in signature.parameters]
            if unknown:
                which = (
                    key
                    if key.startswith("mode.")
                    else (
                        "mode.static_argnames" if cfg.mode.static_argnames is not None else "workload.static_argnames"
                    )
                )
                raise ConfigError(which, list(names), f"{unknown[0]!r} is not a parameter of {w.fn}{signature}")
    jit_key = "mode.jit_fn" if cfg.mode.jit_fn else "workload.jit_fn"
    jit_fn = import_fn(cfg.jit_fn, jit_key)
    refused = refused_options(jit_fn, jit_options_in_force(cfg))
    if refused and (cfg.mode.jit or cfg.mode.aot):
        raise ConfigError(jit_key, cfg.jit_fn, f"it takes no {refused[0]} (set by the job); drop it for this jit_fn")


def _signature(fn: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):  # builtins and some C extensions hide their signature
        return None


def _check_call(cfg: ExperimentConfig, key: str, path: str) -> Callable:
    fn = import_fn(path, key)
    signature = _signature(fn)
    if signature is None or cfg.workload.args is None:
        return fn  # setup's arguments are known only when it has run
    n_args = len(cfg.workload.args)
    try:
        signature.bind(*range(n_args), **dict.fromkeys(cfg.workload.kwargs))
    except TypeError:
        keywords = f" and keyword(s) {', '.join(cfg.workload.kwargs)}" if cfg.workload.kwargs else ""
        raise ConfigError(
            "workload.args",
            None,
            f"it lists {n_args} argument(s){keywords}, but {path}{signature} does not take "
            f"{n_args} positional argument(s){keywords}",
        ) from None
    return fn


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


def register_configs() -> None:
    """Register the schemas so conf/config.yaml can validate against them (defaults: jitexp_schema)."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name="jitexp_schema", node=ExperimentConfig)
    # for conf/hydra/launcher/jitexp_slurm.yaml
    OmegaConf.register_new_resolver("jitexp_gpus", lambda platform: 1 if platform == "gpu" else None, replace=True)
    OmegaConf.register_new_resolver(
        "jitexp_minutes", lambda *seconds: int(math.ceil(sum(float(s) for s in seconds) / 60)) + 1, replace=True
    )
