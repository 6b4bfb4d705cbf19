"""A composed (Dict)Config to a validated ExperimentConfig: interpolations resolved, sequences expanded."""

from __future__ import annotations

import dataclasses
import difflib
import functools
import logging
import pickle
import re
from typing import Any, Mapping, cast

from omegaconf import Container, DictConfig, ListConfig, Node, OmegaConf, flag_override
from omegaconf.errors import OmegaConfBaseException, ValidationError

from jitexp.config import grammar_cache
from jitexp.config.schema import ExperimentConfig
from jitexp.config.sizing import needs_x64
from jitexp.config.usage import own_dtype
from jitexp.config.validate import NEEDS, expected_type, unknown_key, unknown_keys, validate
from jitexp.config.variants import PROCESS_LEVEL, set_dotted, variant_defaults, variant_overrides
from jitexp.errors import ConfigError
from jitexp.labels import SIZE_BUILT, size_built, size_reaches

log = logging.getLogger("jitexp")


def from_dict(cfg: DictConfig | Mapping) -> ExperimentConfig:
    """A composed (Dict)Config as a validated ExperimentConfig, interpolations resolved."""
    return validate(to_config(cfg))


def to_config(cfg: DictConfig | Mapping) -> ExperimentConfig:
    """A composed (Dict)Config as an ExperimentConfig, not validated: for a config the preflight has checked.

    Normalises one thing: a job selecting numpy among other modes for a workload without a
    NumPy twin measures the others (a sweep over workloads measures numpy where a twin exists).
    An interpolation that does not resolve (a missing or deleted key, an unknown resolver) is one ConfigError
    naming the key that refers to it (omegaconf_mistake), never OmegaConf's traceback.
    """
    grammar_cache.install()
    try:
        node = cfg if isinstance(cfg, DictConfig) else OmegaConf.create(dict(cfg))
    except OmegaConfBaseException as exc:  # a malformed interpolation (`${oops`) in a mapping from Python
        first = str(exc.msg if exc.msg else exc).strip().splitlines()[0]
        raw: object = cfg
        for part in (exc.full_key or "").split("."):
            raw = raw.get(part) if isinstance(raw, Mapping) else None
        raise ConfigError(exc.full_key or "config", raw, f"cannot be parsed: {first}") from None
    try:
        return _to_config(cfg, node)
    except OmegaConfBaseException as exc:
        raise omegaconf_mistake(exc, node) from None


def omegaconf_mistake(exc: OmegaConfBaseException, node: DictConfig) -> ConfigError:
    """An OmegaConf error on a user's config as one line: the key where it happened, the text written there (the
    interpolation), and what is wrong: ``refers to workload.params.scael, which does not exist; did you mean
    workload.params.scale?``."""
    key = exc.full_key or "config"
    child = exc.child_node
    raw = child._value() if child is not None and hasattr(child, "_value") else None
    first = str(exc.msg if exc.msg else exc).strip().splitlines()[0]
    missing = re.match(r"Interpolation key '(?P<target>[^']+)' not found", first)
    if missing is None:
        return ConfigError(key, raw, f"cannot be resolved: {first}")
    target = missing["target"]
    parent, _, name = target.rpartition(".")
    above = OmegaConf.select(node, parent, default=None, throw_on_resolution_failure=False) if parent else node
    known = [str(k) for k in above.keys() if k != "hydra"] if isinstance(above, DictConfig) else []
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    where = f"{parent}." if parent else ""
    hint = (
        f"did you mean {where}{close[0]}?"
        if close
        else f"{parent or 'the config'} has {', '.join(known) if known else 'none'}"
    )
    return ConfigError(key, raw, f"refers to {target}, which does not exist; {hint}")


def _to_config(cfg: DictConfig | Mapping, node: DictConfig) -> ExperimentConfig:
    unknown_keys(OmegaConf.to_container(node, resolve=False))
    overrides = variant_overrides(node)
    filled = variant_defaults(node, overrides)
    if filled is not node:
        node = cfg = filled
    if OmegaConf.select(node, "workload.setup", default=None) is not None and OmegaConf.is_missing(
        node.workload, "args"
    ):
        node = node.copy()
        node.workload.args = None  # workload=custom with a setup: custom.yaml's `args: ???` is not needed
        cfg = node
    missing = sorted(missing_keys(node))
    if missing:
        raise ConfigError(missing[0], None, NEEDS.get(missing[0], "needs a value (it is ??? in the config)"))
    for i, item in enumerate(node.get("sequence") or []):
        if not isinstance(item, DictConfig):
            raise ConfigError(f"sequence[{i}]", item, _SEQUENCE_FORM)
    try:
        typed = _schema()
        typed.merge_with(cfg)  # OmegaConf.merge(schema, cfg) without its deep copy of the schema
        exp = cast(ExperimentConfig, OmegaConf.to_object(typed))
    except OmegaConfBaseException as exc:
        key = getattr(exc, "full_key", None) or "config"
        if isinstance(exc, ValidationError) and key != "config":  # a value of the wrong type: what the key takes
            bare = re.sub(r"\[\d+\]$", "", key)
            value = exc.value if isinstance(exc.value, (str, int, float, bool, type(None))) else _plain(exc.value)
            raise ConfigError(key, value, expected_type(bare)) from None
        message = str(exc).strip().splitlines()[0]
        raise ConfigError(key, None, message) from None
    exp.sequence = resolve_sequence(node, exp)
    exp.variants = resolve_variants(node, exp, overrides)
    # whether ${size} reached the arguments, which only the unresolved config says: the rows' size and label follow
    # it (issue 57). Not a config key: an attribute of this job's config (labels.size_built reads it)
    exp.__dict__[SIZE_BUILT] = size_reaches(cast(dict, OmegaConf.to_container(node.workload, resolve=False)))
    own = own_dtype(exp)
    if own is not None:  # nothing follows the job's dtype: the rows say the arguments' own (issue 51)
        exp.dtype = own
    if exp.mode.numpy and exp.workload.numpy_fn is None and exp.mode.names != ("numpy",):
        exp.mode = dataclasses.replace(exp.mode, numpy=False)
        log.warning("%s declares no numpy_fn: measuring %s without numpy", exp.workload_name, ",".join(exp.mode.names))
    return exp


def missing_keys(cfg: Container) -> set[str]:
    """OmegaConf.missing_keys without reading the plain values: the same keys in the same walk, each interpolation
    resolved in the same order (the same error where one does not resolve); OmegaConf's reads every value (~1 ms)."""
    missing: set[str] = set()

    def gather(node: Container) -> None:
        for key in range(len(node)) if isinstance(node, ListConfig) else node:
            if OmegaConf.is_missing(node, key):
                missing.add(node._get_full_key(key))
                continue
            child = node._get_child(key)
            if isinstance(child, Node) and child._is_interpolation():
                value = node[key]
                if isinstance(value, Container):
                    gather(value)
            elif isinstance(child, Container) and not child._is_none():  # node[key] is child itself
                gather(child)

    gather(cfg)
    return missing


SEQUENCE_KEYS = ("size", "dtype", "python_scalars")
REPLACED_IN_VARIANTS = ("mesh.shape", "workload.shardings")
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


def resolve_variants(node: DictConfig, exp: ExperimentConfig, overrides: Mapping[str, dict]) -> dict[str, dict] | None:
    """Each variant's overrides with `_resolved`: its workload, mode, mesh, size, dtype and seed, resolved
    and validated like a job of its own (a changed size or param reaches every argument that
    interpolates it); None when the job has none."""
    if not overrides:
        return None
    resolved: dict[str, dict] = {}
    x64 = None
    for name, flat in overrides.items():
        changes: dict[str, Any] = {"variants": None, "sequence": []}
        for key, value in flat.items():
            set_dotted(changes, key, value)
        with flag_override(node, "struct", False):  # merge copies the job's config open to new keys, leaves it shut
            merged = cast(DictConfig, OmegaConf.merge(node, changes))
        for key in REPLACED_IN_VARIANTS:  # a variant's mesh or shardings replace the job's, as on the command line
            if key in flat:
                OmegaConf.update(merged, key, flat[key], merge=False)
        try:
            variant = from_dict(merged)
        except ConfigError as error:
            if not any(error.key == k or error.key.startswith(k + ".") for k in flat):
                validate(exp)  # a mistake of the job itself is named as the job's
            expected = error.expected
            scalar = ("must be an integer", "must be a number", "must be a string", "must be true or false")
            if isinstance(error.value, list) and expected.startswith(scalar):
                # [64, 128] as if a variant were a sweep
                expected += f"; a variant is one version: several of {error.key} are a sweep (-m {error.key}=a,b)"
            raise ConfigError(f"variants.{name}.{error.key}", error.value, expected) from None
        wide = needs_x64(variant)
        if x64 is not None and wide != x64:
            key = "dtype" if "dtype" in flat else "workload.args"
            raise ConfigError(
                f"variants.{name}.{key}",
                flat.get(key),
                f"turns x64 {'on' if wide else 'off'} and the baseline does not; x64 {PROCESS_LEVEL}",
            )
        x64 = wide
        resolved[name] = {
            **flat,
            "_resolved": {
                "workload": dataclasses.asdict(variant.workload),
                "mode": dataclasses.asdict(variant.mode),
                "mesh": dataclasses.asdict(variant.mesh),
                "size": variant.size,
                "dtype": variant.dtype,
                "seed": variant.seed,
                "size_built": size_built(variant),  # whether ${size} reached its args (issue 57: a variant's label)
            },
        }
    return resolved


def _plain(value: Any) -> Any:
    """An OmegaConf node as plain Python, for a message (a ListConfig prints as [64, 128])."""
    try:
        return OmegaConf.to_container(value) if OmegaConf.is_config(value) else value
    except OmegaConfBaseException:
        return value


def _schema() -> DictConfig:
    """A fresh copy of the structured schema to merge a config into: built once per process (16 ms), kept pickled (a
    copy is a pickle.loads, 0.5 ms, where OmegaConf.merge's deep copy takes 1.8)."""
    return cast(DictConfig, pickle.loads(_schema_pickled()))


@functools.cache
def _schema_pickled() -> bytes:
    # ExperimentConfig and its parts are jitexp's own classes, importable by their names (what pickle needs)
    return pickle.dumps(OmegaConf.structured(ExperimentConfig), protocol=pickle.HIGHEST_PROTOCOL)
