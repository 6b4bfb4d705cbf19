"""Validation of a composed config: every key's value against its choices, one ConfigError naming the key."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import logging
import math
import os
import tempfile
import typing
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping

from jitexp.config.fit import validate_fit
from jitexp.config.mesh import is_import_path, validate_mesh
from jitexp.config.schema import (
    ARG_DTYPES,
    ARRAY_KEYS,
    DTYPES,
    INITS,
    INTERLEAVES,
    ISOLATES,
    PLATFORMS,
    ExperimentConfig,
)
from jitexp.config.tune import validate_tune
from jitexp.errors import ConfigError

log = logging.getLogger("jitexp")


def _choice(key: str, value: Any, choices: tuple) -> None:
    if value not in choices:
        raise ConfigError(key, value, choices)


def _require_positive(key: str, value: float, *, allow_zero: bool = False) -> None:
    ok = value >= 0 if allow_zero else value > 0
    if not (ok and math.isfinite(value)):
        bound = "must be >= 0" if allow_zero else "must be > 0"
        # inf is > 0, so "must be > 0" would not say what is wrong with it (a job_time_s=inf would never stop)
        raise ConfigError(key, value, f"must be a finite number {bound[8:]}" if ok or math.isnan(value) else bound)


def validate(cfg: ExperimentConfig) -> ExperimentConfig:
    """Check values the schema's types cannot; raise ConfigError naming key, value and choices.

    Returns its argument unchanged: validation never edits a config (to_config normalises).
    """
    _choice("dtype", cfg.dtype, DTYPES)
    _choice("device.platform", cfg.device.platform, PLATFORMS)
    _require_positive("device.index", cfg.device.index, allow_zero=True)
    _require_positive("size", cfg.size)
    _require_positive("calls", cfg.calls, allow_zero=True)
    if cfg.seed < 0:  # numpy's generators refuse it in every worker ("expected non-negative integer")
        raise ConfigError("seed", cfg.seed, "must be >= 0 (numpy's and JAX's generators take a non-negative seed)")
    if cfg.resume and cfg.overwrite:  # overwrite removed the rows resume was to keep, without a word
        raise ConfigError(
            "overwrite",
            True,
            "resume=true keeps the folder's complete jobs and overwrite=true removes them: give one of the two",
        )
    if cfg.seed >= 2**63:  # read back as a float from results.csv (its last digits lost), and past what JAX's keys take
        raise ConfigError("seed", cfg.seed, "must be < 2**63 (a 64-bit integer, as results.csv and JAX's keys hold it)")
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
    if t.cold_processes is not None:
        _require_positive("timing.cold_processes", t.cold_processes)
    _require_positive("timing.warmup", t.warmup, allow_zero=True)
    if t.max_warmup_time_s is not None:
        _require_positive("timing.max_warmup_time_s", t.max_warmup_time_s)
    _require_positive("timing.open_retries", t.open_retries, allow_zero=True)
    _require_positive("timing.open_wait_s", t.open_wait_s, allow_zero=True)
    if cfg.device.premapped_buffer_bytes is not None:
        _require_positive("device.premapped_buffer_bytes", cfg.device.premapped_buffer_bytes)
    if t.max_samples < t.min_samples:
        raise ConfigError("timing.max_samples", t.max_samples, f"must be >= timing.min_samples ({t.min_samples})")
    if t.max_processes < t.processes:
        raise ConfigError("timing.max_processes", t.max_processes, f"must be >= timing.processes ({t.processes})")
    if not 0 < t.max_steal <= 1:
        raise ConfigError("timing.max_steal", t.max_steal, "must lie in (0, 1]: a share of CPU time, e.g. 0.05")
    if cfg.roofline not in (True, False, "fresh"):
        raise ConfigError("roofline", cfg.roofline, "true (peaks from the store), fresh (measured again) or false")
    _validate_interleave(cfg)
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
    validate_fit(cfg)
    validate_tune(cfg)
    if cfg.profile and (cfg.envs or cfg.variants):
        raise ConfigError("profile", True, "profiles one version of a job: run it in a job without envs or variants")
    if cfg.compilation_cache_dir is not None:
        writable_dir("compilation_cache_dir", cfg.compilation_cache_dir)
    for name, rule in cfg.workload.checks.items():
        _check_param(name, cfg.workload.params, rule)
    for i, arg in enumerate(cfg.workload.args or []):
        _validate_arg(f"workload.args[{i}]", arg, cfg)
    validate_mesh(cfg)  # after the arguments: it reads their shapes
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


def _validate_interleave(cfg: ExperimentConfig) -> None:
    """timing.interleave=processes: fresh worker processes, one mode each; not beside envs or variants, which
    alternate processes (or pair within them) by their own rule."""
    _choice("timing.interleave", cfg.timing.interleave, INTERLEAVES)
    if cfg.timing.interleave == "rounds":
        return
    why = (
        "needs isolate=process (each mode in fresh worker processes of its own)"
        if cfg.isolate != "process"
        else "cannot be combined with envs: use timing.interleave=rounds"
        if cfg.envs
        else "cannot be combined with variants: use timing.interleave=rounds"
        if cfg.variants
        else ""
    )
    if why:
        raise ConfigError("timing.interleave", cfg.timing.interleave, why)


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
        raise ConfigError("workload.args", None, NEEDS["workload.args"])
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
    return path is not None and is_import_path(path)


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


@functools.cache
def type_hints(cls: type) -> dict[str, Any]:
    """A schema dataclass's fields and their types, resolved once (typing.get_type_hints evaluates every string
    annotation at each call: 0.1-0.2 ms a class). Read, never changed."""
    return typing.get_type_hints(cls)


def expected_type(key: str) -> str:
    """What the schema accepts at a dotted key, in words ("must be an integer"), for type errors."""
    node: Any = ExperimentConfig
    hint: Any = None
    for part in key.split("."):
        fields = {f.name: f for f in dataclasses.fields(node)} if dataclasses.is_dataclass(node) else {}
        if part not in fields:
            return "has the wrong type"
        hint = type_hints(node)[part]
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


def unknown_keys(cfg: Any, schema: type = ExperimentConfig, prefix: str = "") -> None:
    """Refuse keys the schema does not know (a `+sise=64` addition is a typo, not a new knob)."""
    if not isinstance(cfg, dict):
        return
    hints = type_hints(schema)
    for k, value in cfg.items():
        if k not in hints:
            raise unknown_key(f"{prefix}{k}", value, hints)
        if dataclasses.is_dataclass(hints[k]):
            unknown_keys(value, hints[k], f"{prefix}{k}.")


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


NEEDS = {
    "workload.fn": "needs an import path like package.module.function (workload.fn=...)",
    "workload.args": (
        "needs the function's arguments, e.g. 'workload.args=[{shape:[${size}]},{value:3}]', "
        "or a function that builds them: workload.setup=package.module.make_inputs"
    ),
}
