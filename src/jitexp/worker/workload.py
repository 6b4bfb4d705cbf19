"""Resolving a workload spec into (fn, inputs, statics): building, placing and copying the inputs.

A workload is data: conf/workload/<name>.yaml names `fn` by import path and describes its
arguments; nothing here is special-cased per workload.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jitexp.config import ExperimentConfig, import_fn, needs_x64
from jitexp.records import Inputs

# --- resolution -----------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """A resolved workload: the function, its inputs (arrays on device, literals, pytrees), statics and jit."""

    name: str
    fn: Callable
    args: tuple
    static_argnums: tuple[int, ...]
    numpy_fn: Callable | None = None
    host_args: tuple = ()  # the NumPy twin's arguments (see to_host)
    donate_argnums: tuple[int, ...] = ()
    compiler_options: dict = field(default_factory=dict)
    kwargs: dict = field(default_factory=dict)
    host_kwargs: dict = field(default_factory=dict)
    static_argnames: tuple[str, ...] = ()
    donate_argnames: tuple[str, ...] = ()
    jit_fn: Callable = jax.jit
    carry: dict = field(default_factory=dict)  # {output position: argument position}
    out_shardings: Any = None  # a Sharding or a pytree of them for jit's out_shardings (workload.out_shardings)

    def jitted(self) -> Any:
        """jit_fn of the function with the job's statics, donations and compiler options (those it sets)."""
        options = {
            "static_argnums": self.static_argnums,
            "static_argnames": self.static_argnames,
            "donate_argnums": self.donate_argnums,
            "donate_argnames": self.donate_argnames,
            "compiler_options": self.compiler_options,
        }
        chosen = {k: v for k, v in options.items() if v}
        if self.out_shardings is not None:
            chosen["out_shardings"] = self.out_shardings
        return self.jit_fn(self.fn, **chosen)

    def aot_inputs(self) -> tuple[tuple, dict]:
        """The arguments an AOT-compiled object takes: jax.jit's the non-static ones; equinox's and nnx's all."""
        if self.jit_fn is not jax.jit:
            return self.args, self.kwargs
        statics = static_positions(self.static_argnums, len(self.args))
        return (
            tuple(a for i, a in enumerate(self.args) if i not in statics),
            {k: v for k, v in self.kwargs.items() if k not in self.static_argnames},
        )


def static_positions(static_argnums: Sequence[int], n_args: int) -> set[int]:
    """The argument positions static_argnums names, negative indices counted from the end."""
    return {i % n_args for i in static_argnums} if n_args else set()


def make_array(spec: dict, default_dtype: str, rng: np.random.Generator) -> np.ndarray:
    """A host array from an array spec {shape, dtype, init, scale, start}, deterministic in rng.

    Drawn directly in float32 (float64 for 64-bit targets) and scaled in place, so a large
    float32 input never passes through a float64 copy.
    """
    shape = tuple(spec["shape"])
    dtype = jnp.dtype(spec.get("dtype", default_dtype))
    work = np.float64 if dtype.itemsize >= 8 else np.float32
    init = spec.get("init", "normal")
    scale = float(spec.get("scale", 1.0))
    if init == "normal":
        data = rng.standard_normal(shape, dtype=work)
        data *= scale
    elif init == "uniform":
        data = rng.random(shape, dtype=work)
        data *= scale
    elif init == "zeros":
        data = np.zeros(shape, dtype=work)
    elif init == "ones":
        data = np.full(shape, scale, dtype=work)
    else:  # arange
        data = np.arange(int(np.prod(shape)), dtype=work).reshape(shape)
        data *= scale
        data += float(spec.get("start", 0.0))
    if jnp.issubdtype(dtype, jnp.integer) or dtype == jnp.bool_:
        np.rint(data, out=data)
    return data.astype(dtype, copy=False)


def build_args(cfg: ExperimentConfig, device: Any) -> tuple:
    """Inputs from the seed, device_put on `device` and blocked on; static literals stay Python values.

    A traced scalar literal becomes a typed device scalar (the job's dtype for floats, int32 for
    ints): a Python number would be weakly typed and converted on every timed call.
    """
    statics = static_positions(cfg.static_argnums, len(cfg.workload.args or ()))
    args = [_build(spec, i in statics, cfg, device, i) for i, spec in enumerate(cfg.workload.args or ())]
    return tuple(jax.block_until_ready(args))


def build_kwargs(cfg: ExperimentConfig, device: Any) -> dict:
    """workload.kwargs built like arguments: a mapping with a shape is an array, anything else a literal."""
    out = {}
    for j, (name, spec) in enumerate(cfg.workload.kwargs.items()):
        spec = spec if isinstance(spec, dict) else {"value": spec}
        out[name] = _build(spec, name in cfg.static_argnames, cfg, device, 1000 + j)
    return jax.block_until_ready(out)


def _build(spec: dict, static: bool, cfg: ExperimentConfig, device: Any, stream: int) -> Any:
    if "value" in spec:
        value = _hashable(spec["value"])
        return value if static else _typed_scalar(value, cfg.dtype, device)
    return jax.device_put(host_array(spec, cfg.dtype, cfg.seed, stream), device)


input_folder: str | None = None  # the job's cache folder (worker.entry sets it): large inputs are drawn once a job
KEPT_BYTES = 2**20  # arrays at least this large are kept there for the job's later processes


def host_array(spec: dict, dtype: str, seed: int, stream: int) -> np.ndarray:
    """make_array's array for (spec, dtype, seed, stream); a large one is drawn once a job and read back by the later
    processes from the job's folder (the same values: a slow host draws 2 x 8192^2 normals in ~2 s)."""
    if input_folder is None:
        return make_array(spec, dtype, np.random.default_rng([seed, stream]))
    import hashlib
    import json
    import os

    key = hashlib.sha1(json.dumps([spec, dtype, seed, stream], sort_keys=True, default=str).encode()).hexdigest()
    path = os.path.join(input_folder, f"inputs-{key}.npy")
    final = jnp.dtype(spec.get("dtype", dtype))
    bits = np.dtype(f"u{final.itemsize}") if final.kind not in "bc" else final  # bfloat16 is no .npy dtype: its bits
    try:
        return np.load(path, allow_pickle=False).view(final)
    except (OSError, ValueError):
        pass
    data = make_array(spec, dtype, np.random.default_rng([seed, stream]))
    if data.nbytes >= KEPT_BYTES:
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "wb") as f:
                np.save(f, data.view(bits), allow_pickle=False)
            os.replace(tmp, path)
        except OSError:
            pass
    return data


def build_inputs(cfg: ExperimentConfig, device: Any, setup: Callable | None) -> tuple[tuple, dict, float | None]:
    """The job's positional and keyword arguments, blocked on, and setup's seconds (None without a setup).

    `device` is `placement(...)`: None leaves arrays uncommitted on the default device, as user code
    has them; a device commits them there (setup runs under `on_device`, its arrays are then committed).
    """
    if setup is None:
        return build_args(cfg, device), build_kwargs(cfg, device), None
    start = time.perf_counter()
    args, kwargs = run_setup(setup, cfg)
    seconds = time.perf_counter() - start
    if device is not None:
        args, kwargs = commit((args, kwargs), device)
    return args, {**kwargs, **build_kwargs(cfg, device)}, seconds


def placement(device: Any) -> Any:
    """Where a job's inputs go: None (uncommitted, as user code makes them) when `device` is this process's default
    device, else `device` itself (committed: jit follows committed inputs, with no device context around calls)."""
    return None if device == jax.local_devices()[0] else device


def on_device(device: Any) -> AbstractContextManager:
    """jax.default_device(device) for building inputs on a non-default device; nothing on the default one."""
    return nullcontext() if placement(device) is None else jax.default_device(device)


def commit(tree: Any, device: Any) -> Any:
    """tree with its device arrays committed to `device` (other leaves as they are), blocked on."""
    return jax.block_until_ready(
        jax.tree.map(lambda leaf: jax.device_put(leaf, device) if isinstance(leaf, jax.Array) else leaf, tree)
    )


def setup_keywords(cfg: ExperimentConfig) -> dict:
    """What workload.setup is called with: size, dtype, seed and every param, as keywords."""
    return {"size": cfg.size, "dtype": cfg.dtype, "seed": cfg.seed, **cfg.workload.params}


def run_setup(setup: Callable, cfg: ExperimentConfig) -> tuple[tuple, dict]:
    """setup's positional and keyword arguments (a tuple, or jitexp.Inputs), blocked on, the YAML kwargs beside."""
    made = setup(**setup_keywords(cfg))
    args, kwargs = as_inputs(made, cfg.workload.setup or "setup")
    clash = sorted(set(kwargs) & set(cfg.workload.kwargs))
    if clash:
        raise SetupReturned(
            f"keyword {clash[0]!r} comes from both workload.setup and workload.kwargs",
            f"give {clash[0]} once: drop workload.kwargs.{clash[0]}, or leave it out of the setup's Inputs kwargs",
        )
    return jax.block_until_ready((args, kwargs))


def as_inputs(made: Any, where: str) -> tuple[tuple, dict]:
    """(args, kwargs) of what a setup function returned."""
    if isinstance(made, Inputs):
        return tuple(made.args), dict(made.kwargs)
    if isinstance(made, (tuple, list)):
        return tuple(made), {}
    one = "return (d,) for one argument that is a dict, " if isinstance(made, dict) else ""
    raise SetupReturned(
        f"{where} returned {type(made).__name__}; it must return the positional arguments as a tuple, "
        "or jitexp.Inputs(args=..., kwargs=...)",
        f"the setup ran and returned a {type(made).__name__}: make it return a tuple of fn's positional arguments "
        f"({one}return (params, batch) for two), or jitexp.Inputs(args=(...), kwargs={{...}}) for keywords",
    )


class SetupReturned(TypeError):
    """What workload.setup returned cannot be fn's arguments. `hint` says what to return (errors.hint_for), rather
    than pointing at the line of jitexp that found it as if the setup raised there."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.hint = hint


def setup_bytes(setup: Callable, cfg: ExperimentConfig) -> int | None:
    """Bytes of the arrays setup would return, from their shapes alone (jax.eval_shape); None if it cannot be traced."""

    def arrays() -> Any:
        args, kwargs = as_inputs(setup(**setup_keywords(cfg)), "setup")
        return jax.tree.map(lambda leaf: leaf if isinstance(leaf, (jax.Array, np.ndarray)) else None, (args, kwargs))

    try:
        shapes = jax.eval_shape(arrays)
    except Exception:  # setup needs concrete values (NumPy on JAX arrays, Python branches on data)
        return None
    return sum(math.prod(leaf.shape) * leaf.dtype.itemsize for leaf in jax.tree.leaves(shapes) if not is_key(leaf))


def is_key(leaf: Any) -> bool:
    """A typed PRNG key (or its shape): NumPy cannot hold its dtype, and it has no bytes of data to count."""
    dtype = getattr(leaf, "dtype", None)
    return dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)


def copy_leaf(leaf: Any) -> Any:
    """A device array's own copy (the next call may donate or consume the original); other leaves as they are."""
    return leaf.copy() if isinstance(leaf, jax.Array) else leaf


_IMMUTABLE = (jax.Array, np.generic, int, float, complex, bool, str, bytes, type(None))


def call_of(w: Workload) -> tuple[Callable, tuple, dict]:
    """(fn, args, kwargs) of w: the call a failure's hint names its arguments from (errors.failure_of)."""
    return w.fn, tuple(w.args), dict(w.kwargs)


def copyable(w: Workload) -> bool:
    """Whether copying w's array leaves gives a caller inputs of its own: every leaf is an array or an immutable
    value (no object a call could change in place)."""
    return all(isinstance(leaf, _IMMUTABLE) for leaf in jax.tree.leaves((w.args, w.kwargs)))


def copied(w: Workload) -> Workload:
    """w with its own copy of every device array (the pytrees rebuilt around them), ready on the device."""
    args, kwargs = jax.block_until_ready(jax.tree.map(copy_leaf, (w.args, w.kwargs)))
    return dataclasses.replace(w, args=tuple(args), kwargs=dict(kwargs))


def to_host(tree: Any) -> Any:
    """A NumPy twin's inputs: the same pytree with device arrays copied to host NumPy arrays, the rest as it is."""

    def host(leaf: Any) -> Any:
        if isinstance(leaf, jax.Array) and not is_key(leaf):
            return np.array(leaf)
        return leaf

    return jax.tree.map(host, tree)


def _typed_scalar(value: Any, dtype: str, device: Any) -> Any:
    if isinstance(value, bool):
        return jax.device_put(np.bool_(value), device)
    if isinstance(value, int):
        return jax.device_put(np.int32(value), device)
    if isinstance(value, float):
        return jax.device_put(np.asarray(value, dtype=jnp.dtype(dtype)), device)
    return value


def _hashable(value: Any) -> Any:
    # YAML lists become tuples so that a list-valued literal can still be a static argument.
    if isinstance(value, (list, tuple)):
        return tuple(_hashable(v) for v in value)
    return value


__all__: Sequence[str] = [
    "Workload",
    "import_fn",
    "make_array",
    "build_inputs",
    "build_args",
    "build_kwargs",
    "run_setup",
    "setup_bytes",
    "to_host",
    "is_key",
    "copy_leaf",
    "needs_x64",
    "static_positions",
]
