"""The callables a config names and the inputs they are called with, built in the worker (once per process)."""

from __future__ import annotations

import dataclasses
import os
import traceback
from collections.abc import Callable
from typing import Any

import jax

from jitexp.config import ExperimentConfig, sizing
from jitexp.errors import ConfigError, phase
from jitexp.labels import args_dtype, is_array, prejitted, shapes_label
from jitexp.records import ProcessResult
from jitexp.worker import sharding, workload


@dataclasses.dataclass
class Functions:
    """The callables a config names, imported in the worker: the function, its twin, setup, the jit transformation."""

    fn: Callable
    numpy_fn: Callable | None
    setup: Callable | None
    jit_fn: Callable


def import_functions(cfg: ExperimentConfig, variant: str = "") -> Functions:
    """Import what cfg names; a ConfigError names the key (under `variants.NAME.` for a variant's)."""
    try:
        return Functions(
            workload.import_fn(cfg.workload.fn),
            workload.import_fn(cfg.workload.numpy_fn, "workload.numpy_fn")
            if cfg.mode.numpy and cfg.workload.numpy_fn
            else None,
            workload.import_fn(cfg.workload.setup, "workload.setup") if cfg.workload.setup else None,
            workload.import_fn(cfg.jit_fn, "mode.jit_fn" if cfg.mode.jit_fn else "workload.jit_fn"),
        )
    except ConfigError as error:
        if not variant:
            raise
        raise ConfigError(f"variants.{variant}.{error.key}", error.value, error.expected) from None


def input_builder(cfg: ExperimentConfig, f: Functions, device: Any, result: ProcessResult, name: str = "") -> Builder:
    """A Builder giving each caller its inputs for a config (setup_s of the first build is the process's, and the
    shapes of the first build of the config itself are the variant `name`'s input_shapes)."""
    return Builder(cfg, f, device, result, name)


class Builder:
    """Each caller's inputs for one config (the Inputs a job's kinds take).

    The job's own config is built once per process, and while `shares` later calls get that same workload: its
    leaves are arrays and immutable values, so a mode that donates takes `donor` copies of what it donates. Inputs
    with leaves that are not (a stateful object) are built afresh each time, as are other configs (a sequence's
    variants). `release()` lets the first build go once no caller needs it (the timed rounds then hold only what
    each mode's calls hold, as a user's loop does).
    """

    def __init__(self, cfg: ExperimentConfig, f: Functions, device: Any, result: ProcessResult, name: str) -> None:
        self.cfg, self.f, self.device, self.result, self.name = cfg, f, device, result, name
        self.mesh = sharding.make_mesh(cfg, device)
        self.held: workload.Workload | None = None

    @property
    def shares(self) -> bool:
        """Whether the next call for the job's config returns the workload already built (not a build of its own)."""
        return self.held is not None

    def release(self) -> None:
        """Forget the workload held for later callers (a later call builds afresh)."""
        self.held = None

    def __call__(self, job: ExperimentConfig | None = None) -> workload.Workload:
        job = self.cfg if job is None else job
        if self.held is not None and job is self.cfg:
            return self.held
        f, device, result, mesh = self.f, self.device, self.result, self.mesh
        with phase("inputs"), workload.on_device(device):
            args, kwargs, seconds = workload.build_inputs(job, workload.placement(device), f.setup)
            if mesh is not None:
                args, kwargs = sharding.shard_inputs(job, mesh, args, kwargs)
            built = _workload(job, f, args, kwargs)
            if job is self.cfg:
                result.input_shapes.setdefault(self.name, shapes_label(f.fn, args, kwargs))
                leaves = jax.tree_util.tree_leaves((args, kwargs))
                result.input_dtypes.setdefault(self.name, args_dtype([str(v.dtype) for v in leaves if is_array(v)]))
                result.prejitted.setdefault(self.name, prejitted(f.fn))
            if mesh is not None and job.workload.out_shardings is not None:
                built = dataclasses.replace(built, out_shardings=sharding.out_shardings(job, mesh, args, kwargs))
            if job is self.cfg and workload.copyable(built):
                self.held = built
        result.setup_s = result.setup_s if result.setup_s is not None else seconds
        return built


class Handed:
    """The workload a process built first, handed to its task's kind: `take()` gives it up, so that the taker holds
    the only reference and it goes when the taker lets it (a carried state's originals go after the first call)."""

    def __init__(self, w: workload.Workload) -> None:
        self.w: workload.Workload | None = w

    def take(self) -> workload.Workload:
        w, self.w = self.w, None
        if w is None:
            raise RuntimeError("the workload was taken already")
        return w


def _workload(job: ExperimentConfig, f: Functions, args: tuple, kwargs: dict) -> workload.Workload:
    return workload.Workload(
        job.workload_name,
        f.fn,
        args,
        job.static_argnums,
        f.numpy_fn,
        workload.to_host(args) if f.numpy_fn else (),
        job.donate_argnums,
        dict(job.mode.compiler_options),
        kwargs,
        workload.to_host(kwargs) if f.numpy_fn else {},
        job.static_argnames,
        tuple(job.mode.donate_argnames),
        f.jit_fn,
        dict(job.workload.carry),
    )


def check_setup_memory(setup: Any, cfg: ExperimentConfig, modes: int) -> None:
    """Refuse a setup whose arrays cannot fit in available memory: one set per mode, one for the check, and the
    first build the modes' donated copies are taken from."""
    per_set = workload.setup_bytes(setup, cfg)
    if per_set is not None:
        what = f"workload.setup's arrays ({modes} mode(s), a check and the copy they are copied from)"
        try:
            sizing.check_memory("size", cfg.size, per_set * (modes + 2), what)
        except ConfigError as error:  # blame size only when size is what makes them big
            smaller = workload.setup_bytes(setup, dataclasses.replace(cfg, size=max(1, cfg.size // 2)))
            if smaller is None or smaller < per_set:
                raise
            raise ConfigError(
                "workload.setup",
                cfg.workload.setup,
                f"{error.expected}, whatever the size (the setup's arrays are as large at size={max(1, cfg.size // 2)})"
                "; make them smaller in the setup or its params",
            ) from None


def raised_at(exc: BaseException, what: str) -> str:
    """`workload.setup raised at mymodels.py:12 in make_params`: the innermost frame of the traceback."""
    tb = exc.__traceback__
    if tb is None:
        return ""
    frame = traceback.extract_tb(tb)[-1]
    return f"{what} raised at {os.path.basename(frame.filename)}:{frame.lineno} in {frame.name}"


Inputs = Builder  # a job's inputs for its modes (measure_variants, the kinds)


def donor(w: workload.Workload) -> workload.Workload:
    """w with its own copies of the donated arguments: donation invalidates them, and other modes need the originals."""
    if not w.donate_argnums and not w.donate_argnames:
        return w
    args = tuple(jax.tree.map(workload.copy_leaf, a) if i in w.donate_argnums else a for i, a in enumerate(w.args))
    kwargs = {k: jax.tree.map(workload.copy_leaf, v) if k in w.donate_argnames else v for k, v in w.kwargs.items()}
    return dataclasses.replace(w, args=jax.block_until_ready(args), kwargs=jax.block_until_ready(kwargs))


def variant_cfg(cfg: ExperimentConfig, variant: dict) -> ExperimentConfig:
    """The job's config with a sequence variant's arguments, kwargs, size, params and dtype."""
    workload = dataclasses.replace(
        cfg.workload,
        args=variant["_args"],
        kwargs=variant.get("_kwargs", cfg.workload.kwargs),
        params=variant.get("_params", cfg.workload.params),
    )
    return dataclasses.replace(cfg, dtype=variant["_dtype"], size=variant.get("_size", cfg.size), workload=workload)
