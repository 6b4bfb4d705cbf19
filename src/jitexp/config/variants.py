"""Variants: versions of the job measured in the same processes, resolved once into one config each."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Mapping

from omegaconf import DictConfig, OmegaConf

from jitexp.config.schema import MODES, ExperimentConfig, MeshConfig, ModeConfig, WorkloadConfig
from jitexp.config.validate import unknown_key
from jitexp.errors import ConfigError
from jitexp.labels import SIZE_BUILT, size_built

log = logging.getLogger("jitexp")

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
# mappings whose entries are the user's (or a mapping that is one value: a mesh's shape, the shardings)
VARIANT_OPEN = ("workload.kwargs", "workload.carry", "mode.compiler_options", "mesh.shape", "workload.shardings")
VARIANT_NODES = ("workload", "mode", "device", "mesh", "timing", "workload.params")  # written nested or dotted alike
# set once per worker process (the device, JAX's clients and flags): two values need two processes
PROCESS_KEYS = ("device", "distributed", "isolate", "cpu_async_dispatch", "compilation_cache_dir", "cpu_affinity")
JOB_KEYS = (
    "timing",
    "calls",
    "check",
    "profile",
    "resume",
    "overwrite",
    "fail_on_error",
    "sequence",
    "variants",
    "envs",
)  # the job's, not a variant's
PROCESS_LEVEL = (
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
        raise ConfigError(f"{where}.{key}", value, PROCESS_LEVEL)
    if head in JOB_KEYS or (head == "mode" and (not rest or field_name in MODES)):
        raise ConfigError(f"{where}.{key}", value, _JOB_LEVEL)
    if head in VARIANT_TOP_KEYS and not rest:
        return
    if head == "workload":
        known = [f.name for f in dataclasses.fields(WorkloadConfig)]
    elif head == "mode":
        known = list(VARIANT_MODE_KEYS)
    elif head == "mesh":  # one process's devices, laid out per variant: one device against four, paired
        known = ["shape", "axis_types"]
    else:
        raise unknown_key(
            f"{where}.{key}", value, [*VARIANT_TOP_KEYS, "workload", "mode", "mesh", *PROCESS_KEYS, *JOB_KEYS]
        )
    if field_name not in known:
        raise unknown_key(f"{where}.{head}.{field_name}", value, known)
    if not sub or f"{head}.{field_name}" in VARIANT_OPEN:
        return
    if key.startswith("workload.params.") and "." not in sub:
        if sub not in params:
            raise unknown_key(f"{where}.{key}", value, params)
        return
    raise ConfigError(f"{where}.{key}", value, f"{head}.{field_name} takes a value, not keys")


def variant_defaults(node: DictConfig, overrides: Mapping[str, dict]) -> DictConfig:
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


def set_dotted(tree: dict, key: str, value: Any) -> None:
    """tree with `a.b.c` set to value as nested dicts (what OmegaConf.merge takes)."""
    *parents, leaf = key.split(".")
    for part in parents:
        tree = tree.setdefault(part, {})
    tree[leaf] = value


def variant_configs(cfg: ExperimentConfig) -> dict[str, ExperimentConfig]:
    """Each variant's own config (the job's with its overrides applied), in order; empty without variants."""
    out = {}
    for name, entry in (cfg.variants or {}).items():
        r = entry["_resolved"]
        out[name] = dataclasses.replace(
            cfg,
            workload=WorkloadConfig(**r["workload"]),
            mode=ModeConfig(**r["mode"]),
            mesh=MeshConfig(**r["mesh"]) if "mesh" in r else cfg.mesh,
            size=r["size"],
            dtype=r["dtype"],
            seed=r["seed"],
            variants=None,
        )
        # as to_config says of a job: a variant's fixed args label no size (a config passed on from before: the job's)
        out[name].__dict__[SIZE_BUILT] = r.get("size_built", size_built(cfg))
    return out
