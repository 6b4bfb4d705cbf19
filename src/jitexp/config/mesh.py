"""Devices, the mesh and the arguments' shardings as config: checked before anything runs, and as row text.

Pure (no JAX): the worker builds the `jax.sharding.Mesh` and the NamedShardings from what this module accepts
(jitexp.worker.sharding).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from jitexp.config.schema import AXIS_TYPES, ExperimentConfig
from jitexp.errors import ConfigError

SPEC_FORM = "a PartitionSpec as a list, one entry per dimension: an axis name, a list of axis names or null"
OUT_FORM = SPEC_FORM + " (every output leaf), or the import path of a function returning a PartitionSpec pytree"


def mesh_size(cfg: ExperimentConfig) -> int:
    """Devices the job's mesh takes (1 without a mesh)."""
    return math.prod(cfg.mesh_shape.values()) if cfg.mesh_shape else 1


DISTRIBUTED_MODES = ("jit", "aot")  # every rank runs the same calls; eager's and NumPy's checks are one process's


def validate_distributed(cfg: ExperimentConfig) -> int:
    """distributed.processes against the rest of the job (one global mesh, every rank the same calls); the count."""
    n = cfg.distributed.processes
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ConfigError("distributed.processes", n, "must be an int >= 1 (1: one process, no SLURM)")
    if n == 1:
        return 1
    key = f"distributed.processes={n}"
    if cfg.isolate == "none":
        raise ConfigError("isolate", "none", f"not with {key}: each measuring process is {n} SLURM tasks of its own")
    refused = {
        "envs": cfg.envs and "set",
        "variants": cfg.variants and "set",
        "sequence": cfg.sequence and "set",
        "profile": cfg.profile and True,
        "compilation_cache_dir": cfg.compilation_cache_dir,
        "cpu_affinity": cfg.cpu_affinity,
        "timing.interleave": cfg.timing.interleave == "processes" and "processes",
    }
    for name, value in refused.items():
        if value:
            raise ConfigError(
                name, value, f"not with {key}: a job over SLURM tasks measures one version of the job, in rounds"
            )
    other = [m for m in cfg.mode.names if m not in DISTRIBUTED_MODES]
    if other:
        raise ConfigError("mode", other[0], f"with {key} the modes are jit and aot (compiled across the processes)")
    if not cfg.mesh_shape:
        raise ConfigError(
            "mesh.shape", None, f"{key} needs a mesh over every process's devices, e.g. mesh.shape={{data: {n}}}"
        )
    if cfg.device.platform not in ("cpu", "gpu", "auto"):  # auto: the GPU where the node has one, else the CPU
        raise ConfigError("device.platform", cfg.device.platform, f"with {key}: cpu (gloo), gpu or auto")
    if cfg.device.platform == "gpu" and cfg.device.count != 1:  # jax.distributed gives each SLURM task one GPU
        raise ConfigError("device.count", cfg.device.count, f"with {key} on gpu: 1 (each SLURM task drives one GPU)")
    return n


def check_axes(key: str, spec: Any, axes: Mapping[str, int]) -> list[tuple[str, ...]]:
    """A spec's entries, each axis in the mesh and none twice; a ConfigError on `key` otherwise."""
    entries = spec_entries(key, spec)
    used = [name for names in entries for name in names]
    for name in used:
        if name not in axes:
            raise ConfigError(key, spec, f"axis {name!r} is not in mesh.shape; its axes: {', '.join(axes)}")
    if len(set(used)) < len(used):
        raise ConfigError(key, spec, "each mesh axis at most once in a spec")
    return entries


def is_import_path(path: str) -> bool:
    """`package.module.attr`: dotted identifiers, at least one dot."""
    return path.count(".") >= 1 and all(part.isidentifier() for part in path.split("."))


def spec_entries(key: str, spec: Any) -> list[tuple[str, ...]]:
    """A sharding's entries as tuples of axis names (empty: that dimension is not sharded); ConfigError on a bad form."""
    if spec is None:
        return []
    if not isinstance(spec, (list, tuple)):
        raise ConfigError(key, spec, SPEC_FORM)
    out = []
    for entry in spec:
        names = () if entry is None else (entry,) if isinstance(entry, str) else entry
        if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
            raise ConfigError(key, spec, SPEC_FORM)
        out.append(tuple(names))
    return out


def validate_mesh(cfg: ExperimentConfig) -> None:
    """device.count, mesh and workload.shardings against each other and the arguments' shapes; one ConfigError."""
    count = cfg.device.count
    if not isinstance(count, int) or count < 1:
        raise ConfigError("device.count", count, "must be an int >= 1")
    if not isinstance(cfg.mesh.shape, (dict, type(None))):
        raise ConfigError("mesh.shape", cfg.mesh.shape, "{axis name: size >= 1, ...}, e.g. {data: 4}")
    given = cfg.workload.shardings
    if not isinstance(given, (dict, type(None), str)) or (isinstance(given, str) and not is_import_path(given)):
        raise ConfigError(
            "workload.shardings",
            given,
            "{argument position: " + SPEC_FORM + "}, or the import path of a function returning them",
        )
    if cfg.mesh.axis_types not in AXIS_TYPES:
        raise ConfigError("mesh.axis_types", cfg.mesh.axis_types, AXIS_TYPES)
    shape = cfg.mesh_shape
    for name, size in shape.items():
        if not str(name).isidentifier() or not isinstance(size, int) or size < 1:
            raise ConfigError("mesh.shape", shape, "{axis name: size >= 1, ...}, e.g. {data: 4}")
    processes = validate_distributed(cfg)
    if not shape:
        return
    if mesh_size(cfg) > count * processes:
        per = f"device.count is {count}" + (f" in each of distributed.processes={processes}" if processes > 1 else "")
        fix = -(-mesh_size(cfg) // processes)
        raise ConfigError("mesh.shape", shape, f"needs {mesh_size(cfg)} devices and {per}: set device.count={fix}")
    if processes > 1 and mesh_size(cfg) != count * processes:  # a smaller mesh would leave ranks out
        raise ConfigError(
            "mesh.shape",
            shape,
            f"with distributed.processes={processes} the mesh takes every process's devices: "
            f"{count * processes} (device.count={count} x {processes})",
        )
    if cfg.device.index != 0:
        raise ConfigError("device.index", cfg.device.index, "must be 0 with a mesh: the mesh takes the first devices")
    out = cfg.workload.out_shardings
    if isinstance(out, str):
        if not is_import_path(out):
            raise ConfigError("workload.out_shardings", out, OUT_FORM)
    elif out is not None:
        if not isinstance(out, (list, tuple)):
            raise ConfigError("workload.out_shardings", out, OUT_FORM)
        check_axes("workload.out_shardings", out, shape)
    for where, spec in cfg.shardings.items():
        key = f"workload.shardings.{where}"
        entries = check_axes(key, spec, shape)
        arg = _argument(cfg, where, key, spec)
        if arg is None:  # setup builds the arguments: the worker checks their shapes
            continue
        dims = arg.get("shape")
        if dims is None:
            raise ConfigError(key, spec, f"argument {where} is a literal {{value: ...}}: only arrays are sharded")
        if len(entries) > len(dims):
            raise ConfigError(key, spec, f"argument {where} has {len(dims)} dimension(s) ({list(dims)})")
        bad = unsplit(entries, shape, dims)
        if bad is not None:
            d, axes, parts = bad
            raise ConfigError(
                key, spec, f"dimension {d} of argument {where} ({dims[d]}) is not divisible by {axes} ({parts})"
            )


def argument_key(key: Any) -> int | str:
    """A workload.shardings key as the argument it names: a position (an int, or digits as text) or a keyword."""
    text = str(key)
    return int(text) if text.lstrip("-").isdigit() else text


def unsplit(
    entries: list[tuple[str, ...]], axes: Mapping[str, int], dims: Sequence[int]
) -> tuple[int, str, int] | None:
    """The first dimension of an array (`dims`, at least as many as entries) that its spec's axes do not divide:
    (dimension, the axes as text, their product); None when every one divides."""
    for d, names in enumerate(entries):
        parts = math.prod(axes[n] for n in names)
        if dims[d] % parts:
            return d, "x".join(names), parts
    return None


def _argument(cfg: ExperimentConfig, where: Any, key: str, spec: Any) -> dict | None:
    """The array spec a sharding names (None under setup, whose arguments the worker sees)."""
    where = argument_key(where)
    if isinstance(where, str):
        if where in cfg.workload.kwargs:
            value = cfg.workload.kwargs[where]
            return value if isinstance(value, dict) else {"value": value}
        if cfg.workload.setup is not None:
            return None
        raise ConfigError(key, spec, f"names no keyword argument; workload.kwargs: {', '.join(cfg.workload.kwargs)}")
    if cfg.workload.args is None:
        return None
    n = len(cfg.workload.args)
    if not 0 <= where < n:
        raise ConfigError(key, spec, f"positions lie in [0, {n}) for {n} argument(s)")
    return cfg.workload.args[where]


def mesh_columns(cfg: ExperimentConfig) -> dict[str, Any]:
    """The rows' device columns: device_count, distributed_processes, and the mesh, its axis types and the shardings in force (empty without)."""
    counts = {"device_count": cfg.device.count, "distributed_processes": cfg.distributed.processes}
    if not cfg.mesh_shape:
        return {**counts, "mesh": "", "mesh_axis_types": "", "shardings": ""}
    return {
        **counts,
        "mesh": ",".join(f"{name}={size}" for name, size in cfg.mesh_shape.items()),
        "mesh_axis_types": cfg.mesh.axis_types,
        "shardings": shardings_text(cfg),
    }


def shardings_text(cfg: ExperimentConfig) -> str:
    """The shardings column: each argument's spec (or the function's path), then the outputs' as `out:`."""
    given, out = cfg.workload.shardings, cfg.workload.out_shardings
    parts = (
        [given]
        if isinstance(given, str)
        else [f"{k}:{spec_text(spec_entries(str(k), v))}" for k, v in cfg.shardings.items()]
    )
    if out is not None:
        parts.append(f"out:{out if isinstance(out, str) else spec_text(spec_entries('out', out))}")
    return " ".join(parts)


def spec_text(entries: list[tuple[str, ...]]) -> str:
    """The entries as PartitionSpec writes them: P('data', None), P(('data', 'model')), P() for replicated."""
    parts = ["None" if not names else repr(names[0]) if len(names) == 1 else repr(names) for names in entries]
    return f"P({', '.join(parts)})"
