"""The job's devices and mesh inside the worker: the CPU device count before the backend starts, the Mesh, and the
inputs placed on it by their PartitionSpecs (jit follows the inputs: no mesh context around the timed calls)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import jax
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec

from jitexp.config import DeviceConfig, ExperimentConfig
from jitexp.config.imports import import_fn
from jitexp.config.mesh import argument_key, check_axes, mesh_size, spec_entries, unsplit
from jitexp.errors import ConfigError, first_line, qualified_name


def request_devices(device: DeviceConfig) -> None:
    """Ask for device.count CPU devices before JAX starts its backend (jax_num_cpu_devices).

    A process whose backend has started keeps its devices (isolate=none after an earlier job): enough of them is
    fine, fewer is a ConfigError. Other platforms have the devices they have (checked in `check_count`).
    """
    if device.count == 1 or device.platform not in ("cpu", "auto"):
        return
    try:
        jax.config.update("jax_num_cpu_devices", device.count)
        client_threads(device.count)
    except RuntimeError:  # the backend has started in this process
        have = len(jax.local_devices(backend="cpu"))
        if have < device.count:
            raise ConfigError(
                "device.count",
                device.count,
                f"this process's CPU backend started with {have} device(s) and keeps them; "
                "use isolate=process (the default) for another count",
            ) from None


def client_threads(count: int) -> None:
    """Give XLA's CPU client at least 2 x count threads (PJRT_NPROC, read when the client starts).

    The client runs each device's launch of a program and each device's share of it on one pool of max(cores,
    devices) threads (PJRT_NPROC, else NPROC, stands for the cores), and a launch holds its thread while it waits
    for a free in-flight slot of its device (32 each). Eager ops over several devices run ahead of their execution;
    once 32 wait per device, the count launches hold the threads that a collective's shares need, and XLA aborts
    after 40 s ("Termination timeout for `all reduce ...`"): 4 devices on 2 cores have a pool of 4. With 2 x count
    threads the launches and one collective's shares both fit (docs/decisions.md, issue 42).
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    given = os.environ.get("PJRT_NPROC") or os.environ.get("NPROC")
    threads = int(given) if given and given.isdigit() else cores
    if threads < 2 * count:
        os.environ["PJRT_NPROC"] = str(2 * count)


def check_count(device: DeviceConfig, first: Any) -> None:
    """device.count against the devices of the platform the job runs on (its first device `first`)."""
    have = len(jax.local_devices(backend=first.platform))  # this process's (a distributed job's others are theirs)
    if have < device.count:
        raise ConfigError("device.count", device.count, f"this machine has {have} {first.platform} device(s)")


def make_mesh(cfg: ExperimentConfig, first: Any) -> Mesh | None:
    """The job's Mesh over the first devices of the job's platform, with its axis types; None without mesh.shape."""
    shape = cfg.mesh_shape
    if not shape:
        return None
    devices = jax.devices(first.platform)[: mesh_size(cfg)]
    kind = AxisType.Auto if cfg.mesh.axis_types == "auto" else AxisType.Explicit
    return Mesh(np.array(devices).reshape(tuple(shape.values())), tuple(shape), axis_types=(kind,) * len(shape))


def shard_inputs(cfg: ExperimentConfig, mesh: Mesh, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """args and kwargs with every array leaf placed by its argument's spec, blocked on. An argument without a spec
    is replicated, except arrays setup already spread over several devices (its own sharding stands). A spec that
    names no argument (setup's arguments are seen only here) is a ConfigError. workload.shardings may name a
    function of the arguments returning the specs: a PartitionSpec, or a pytree of them (None: replicated) that is
    a prefix of its argument's tree, as jit's in_shardings."""
    given = cfg.workload.shardings
    specs = (
        _specs_of(given, args, kwargs)
        if isinstance(given, str)
        else {argument_key(k): v for k, v in cfg.shardings.items()}
    )
    for where, spec in specs.items():
        if not (isinstance(where, int) and 0 <= where < len(args)) and where not in kwargs:
            raise ConfigError(
                f"workload.shardings.{where}",
                spec,
                f"names no argument: positions [0, {len(args)}), keywords {', '.join(kwargs) or '(none)'}",
            )
    place = _place_tree if isinstance(given, str) else _place
    placed_args = tuple(place(mesh, i, specs.get(i), arg) for i, arg in enumerate(args))
    placed_kwargs = {name: place(mesh, name, specs.get(name), value) for name, value in kwargs.items()}
    return jax.block_until_ready((placed_args, placed_kwargs))


def out_shardings(cfg: ExperimentConfig, mesh: Mesh, args: tuple, kwargs: dict) -> Any:
    """jit's out_shardings from workload.out_shardings: one NamedSharding for every output leaf (a list), or the
    function's PartitionSpec pytree as NamedShardings (None: XLA chooses)."""
    given = cfg.workload.out_shardings
    if not isinstance(given, str):
        return _named(mesh, "workload.out_shardings", given)
    specs = _called(given, "workload.out_shardings", args, kwargs)
    if not (_is_spec(specs) or isinstance(specs, (Mapping, list, tuple))):
        raise ConfigError("workload.out_shardings", given, f"returned {type(specs).__name__}: a PartitionSpec pytree")
    return jax.tree.map(
        lambda p: None if p is None else _named(mesh, "workload.out_shardings", list(p)), specs, is_leaf=_is_spec
    )


def _named(mesh: Mesh, key: str, spec: Any) -> NamedSharding:
    """A NamedSharding for a spec written as a list, its axes checked against the mesh."""
    entries = check_axes(key, spec, dict(mesh.shape))
    return NamedSharding(mesh, PartitionSpec(*[names[0] if len(names) == 1 else names or None for names in entries]))


def _called(path: str, key: str, args: tuple, kwargs: dict) -> Any:
    """What the function at `path` (a sharding key's) returns for the arguments; its failure a ConfigError on key."""
    fn = import_fn(path, key)
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        raise ConfigError(key, path, f"raised {qualified_name(type(exc))}: {first_line(exc)}") from None


def _specs_of(path: str, args: tuple, kwargs: dict) -> dict[Any, Any]:
    """What workload.shardings' function returns for these arguments: {position or keyword name: specs}."""
    specs = _called(path, "workload.shardings", args, kwargs)
    if not isinstance(specs, Mapping):
        raise ConfigError(
            "workload.shardings",
            path,
            f"returned {type(specs).__name__}: a mapping {{argument position or name: specs}}",
        )
    return dict(specs)


def _is_spec(x: Any) -> bool:
    return x is None or isinstance(x, PartitionSpec)


def _place_tree(mesh: Mesh, where: Any, specs: Any, tree: Any) -> Any:
    """tree placed by a pytree of PartitionSpecs (from workload.shardings' function) that is a prefix of it."""

    def place(spec: PartitionSpec | None, sub: Any) -> Any:
        return _place(mesh, where, None if spec is None else list(spec), sub)

    if _is_spec(specs):
        return place(specs, tree)
    try:
        return jax.tree.map(place, specs, tree, is_leaf=_is_spec)
    except ConfigError:
        raise
    except ValueError as exc:  # not a prefix of the argument's tree
        raise ConfigError(
            f"workload.shardings.{where}",
            specs,
            f"a PartitionSpec or a pytree of them over argument {where}: {first_line(exc)}",
        ) from None


def _place(mesh: Mesh, where: Any, spec: Any, tree: Any) -> Any:
    key = f"workload.shardings.{where}"
    entries = spec_entries(key, spec)
    sharding = _named(mesh, key, spec)  # the YAML's axes were checked before anything ran; a function's only here

    def put(leaf: Any) -> Any:
        if isinstance(leaf, np.ndarray) and spec is not None:
            leaf = jax.numpy.asarray(leaf)  # setup's NumPy array: the spec names it, so it is placed too
        if not isinstance(leaf, jax.Array):
            return leaf
        if spec is None and len(leaf.sharding.device_set) > 1:
            return leaf  # setup placed it over several devices itself
        if len(entries) > leaf.ndim:
            raise ConfigError(key, spec, f"an array of argument {where} has shape {list(leaf.shape)}")
        bad = unsplit(entries, mesh.shape, leaf.shape)
        if bad is not None:
            d, axes, parts = bad
            raise ConfigError(
                key,
                spec,
                f"dimension {d} of an array of argument {where} ({list(leaf.shape)}) is not divisible by {axes} ({parts})",
            )
        return jax.device_put(leaf, sharding)

    return jax.tree.map(put, tree)
