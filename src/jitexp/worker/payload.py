"""jitexp.measure's function and argument values on their way to a worker: packed in the driver, unpacked there.

The function (closures, lambdas, notebook and `__main__` functions included) and the arguments
travel with cloudpickle. Device arrays travel as host values (`HostArray`, typed PRNG keys as
`HostKey`) and are put back on the job's device in the worker, afresh for every set of inputs, as
a setup function's would be. Packing imports JAX only when the arguments hold JAX values (JAX is
then imported already); unpacking runs in the worker.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from jitexp.errors import first_line
from jitexp.records import Inputs, Payload
from jitexp.worker.jaxinfo import jax_flag

CHOICE = 'isolate="none" measures it in this process instead (its rows say isolate=none: not final numbers)'


@dataclass
class HostArray:
    """A jax.Array's value on the host, put back on the job's device in the worker."""

    value: Any  # numpy.ndarray


@dataclass
class HostKey:
    """A typed PRNG key (NumPy cannot hold its dtype): its key data and implementation name."""

    data: Any  # numpy.ndarray of uint32
    impl: str


def pack(
    fn: Callable, args: Sequence, kwargs: Mapping[str, Any], jit_fn: Callable | None, *, pickled: bool
) -> tuple[Payload, list]:
    """The payload of one measurement (cloudpickled for worker processes, or the objects themselves with
    pickled=False) and the host arrays among the arguments (the rows' size and dtype labels).

    Something that cannot be pickled is a TypeError naming it (fn, argument i, keyword k or jit_fn).
    """
    host_args, host_kwargs = to_host(tuple(args)), {k: to_host(v) for k, v in kwargs.items()}
    found = arrays(host_args, host_kwargs)
    payload = Payload((fn, jit_fn), (host_args, host_kwargs), int(sum(a.nbytes for a in found)), x64_enabled())
    if not pickled:
        return payload, found
    import cloudpickle

    try:
        function, arguments = cloudpickle.dumps(payload.function), cloudpickle.dumps(payload.arguments)
        return Payload(function, arguments, payload.arg_bytes, payload.x64), found
    except Exception as exc:
        what, cause = "the arguments", exc
        parts = [("fn", fn), ("jit_fn", jit_fn), *((f"argument {i}", a) for i, a in enumerate(host_args))]
        for name, value in parts + [(f"keyword {k!r}", v) for k, v in host_kwargs.items()]:
            try:
                cloudpickle.dumps(value)
            except Exception as own:
                what, cause = name, own
                break
        raise TypeError(
            f"{what} cannot be pickled to reach a worker process ({type(cause).__name__}: {first_line(cause)}); {CHOICE}"
        ) from None


def unpack(payload: Payload, jit_path: str, device: Any) -> tuple[Callable, Callable, Callable[..., Inputs]]:
    """In the worker: fn, the jit transformation and a setup-like function returning fresh inputs on device."""
    import jax

    from jitexp.worker.workload import import_fn

    function, arguments = payload.function, payload.arguments
    if isinstance(function, bytes):
        import cloudpickle

        function = cloudpickle.loads(function)
    fn, jit_fn = function
    jit_fn = jit_fn if jit_fn is not None else import_fn(jit_path, "jit_fn")

    def inputs(**_: Any) -> Inputs:
        """A fresh set of the arguments on the device, as a setup function returns them (each mode gets its own)."""
        import cloudpickle

        args, kwargs = cloudpickle.loads(arguments) if isinstance(arguments, bytes) else arguments
        put = lambda leaf: to_device(leaf, device)  # noqa: E731
        return Inputs(jax.tree.map(put, tuple(args)), jax.tree.map(put, dict(kwargs)))

    return fn, jit_fn, inputs


def to_host(tree: Any) -> Any:
    """tree with its array leaves as HostArray (NumPy and JAX arrays) or HostKey (typed PRNG keys).

    NumPy arrays count as arrays too: the CLI's inputs are device arrays, and a NumPy argument would
    make eager mode NumPy and add a host-to-device copy to every jit call. No JAX import when JAX was
    never imported (then only lists, tuples and dicts can hold arrays).
    """
    if "jax" not in sys.modules:
        return _plain_map(_host_leaf, tree)
    import jax

    return jax.tree.map(_host_leaf, tree)


def _host_leaf(leaf: Any) -> Any:
    if isinstance(leaf, np.ndarray):  # a NumPy scalar stays a scalar (hashable: it may be a static argument)
        return HostArray(leaf) if leaf.dtype.kind in "biufc" else leaf
    jax = sys.modules.get("jax")
    if jax is None or not isinstance(leaf, jax.Array):
        return leaf
    if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
        return HostKey(np.asarray(jax.random.key_data(leaf)), str(jax.random.key_impl(leaf)))
    return HostArray(np.asarray(leaf))


def _plain_map(fn: Callable[[Any], Any], tree: Any) -> Any:
    """jax.tree.map over lists, tuples (named too) and dicts, for when JAX is not imported."""
    if isinstance(tree, dict):
        return type(tree)((k, _plain_map(fn, v)) for k, v in tree.items())
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*(_plain_map(fn, v) for v in tree))
    if isinstance(tree, (list, tuple)):
        return type(tree)(_plain_map(fn, v) for v in tree)
    return fn(tree)


def to_device(leaf: Any, device: Any) -> Any:
    """A HostArray or HostKey back as a device array on `device` (a new buffer each time); other leaves as they are."""
    import jax

    if isinstance(leaf, HostArray):
        return jax.device_put(leaf.value, device)
    if isinstance(leaf, HostKey):
        return jax.device_put(jax.random.wrap_key_data(leaf.data, impl=leaf.impl), device)
    return leaf


def arrays(*trees: Any) -> list:
    """The host arrays of packed trees (HostArray values, HostKey data): what has a shape, dtype and bytes."""
    leaves: list = []
    if "jax" in sys.modules:
        import jax

        leaves = jax.tree.leaves(trees)
    else:
        _plain_map(leaves.append, trees)
    return [leaf.value if isinstance(leaf, HostArray) else leaf.data for leaf in leaves if is_packed(leaf)]


def is_packed(leaf: Any) -> bool:
    return isinstance(leaf, (HostArray, HostKey))


def x64_enabled() -> bool:
    """Whether the caller's JAX runs with 64-bit values (False when JAX was never imported)."""
    return "jax" in sys.modules and bool(jax_flag("jax_enable_x64"))
