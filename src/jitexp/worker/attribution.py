"""Why jit is faster: what eager dispatches (from the jaxpr) against what XLA runs (from the optimized HLO).

Counts come from JAX's own program representations, not from timing: `eager_ops` and
`eager_bytes` from `jax.make_jaxpr`, `xla_kernels` and `xla_fusions` from the compiled HLO
text. The HLO text is not a stable API: it is parsed defensively and anything unreadable
leaves its column empty.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np

# Call-like primitives that eager mode runs by evaluating their body op by op (the Python
# function runs); every other primitive, nested jit and lax loops included, is one dispatch.
INLINED = {"custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr", "remat", "checkpoint"}
# HLO instructions that move no data and launch nothing.
NOT_KERNELS = {
    "parameter",
    "constant",
    "tuple",
    "get-tuple-element",
    "bitcast",
    "while",
    "conditional",
    "call",
    "after-all",
    "partition-id",
    "replica-id",
    "opt-barrier",
    "add-dependency",
    "domain",
}
_SUBCOMPUTATIONS = re.compile(
    r"\b(?:body|condition|to_apply|true_computation|false_computation)=%([\w.-]+)"
    r"|branch_computations=\{([^}]*)\}"
)
# `%name = TYPE opcode(`: TYPE a shape or a tuple of them (nested tuples; `/*index=5*/` comments in long ones)
_OPCODE = re.compile(r"=\s*(?:\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)|\S+)\s+([a-z][a-z0-9-]*)\(")


def trace(
    fn: Callable, args: tuple, kwargs: dict, static_argnums: tuple[int, ...], static_argnames: tuple[str, ...]
) -> Any:
    """The closed jaxpr of fn on these arguments, statics held fixed; equinox's filter_make_jaxpr where
    plain tracing cannot (modules whose leaves are not all arrays)."""
    statics = {i % len(args) for i in static_argnums} if args else set()
    dynamic = [a for i, a in enumerate(args) if i not in statics]
    dynamic_kw = {k: v for k, v in kwargs.items() if k not in static_argnames}
    static_kw = {k: v for k, v in kwargs.items() if k in static_argnames}

    def flat(dyn: list, dyn_kw: dict) -> Any:
        it = iter(dyn)
        return fn(*(args[i] if i in statics else next(it) for i in range(len(args))), **dyn_kw, **static_kw)

    try:
        return jax.make_jaxpr(flat)(dynamic, dynamic_kw)
    except Exception as plain:
        try:
            import equinox as eqx
        except ImportError:
            raise plain from None
        return eqx.filter_make_jaxpr(flat)(dynamic, dynamic_kw)[0]


def jaxpr_counts(
    fn: Callable,
    args: tuple,
    static_argnums: tuple[int, ...],
    kwargs: dict | None = None,
    static_argnames: tuple[str, ...] = (),
) -> dict:
    """eager_ops and eager_bytes (what op-by-op execution dispatches and moves), jaxpr_eqns (trace size)."""
    closed = trace(fn, args, kwargs or {}, static_argnums, static_argnames)
    ops, moved = 0, 0
    for eqn in _dispatched(closed.jaxpr):
        ops += 1
        moved += sum(_nbytes(v.aval) for v in (*eqn.invars, *eqn.outvars))
    return {"eager_ops": ops, "eager_bytes": moved, "jaxpr_eqns": _all_eqns(closed.jaxpr)}


def _dispatched(jaxpr: Any) -> Iterator[Any]:
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in INLINED:
            inner = [j for j in _sub_jaxprs(eqn)]
            if inner:
                yield from _dispatched(inner[0])
                continue
        yield eqn


def _all_eqns(jaxpr: Any) -> int:
    return sum(1 + sum(_all_eqns(j) for j in _sub_jaxprs(eqn)) for eqn in jaxpr.eqns)


def _sub_jaxprs(eqn: Any) -> list:
    found = []
    for value in eqn.params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            inner = getattr(item, "jaxpr", item)  # a ClosedJaxpr holds its Jaxpr
            if hasattr(inner, "eqns"):
                found.append(inner)
    return found


def _nbytes(aval: Any) -> int:
    shape, dtype = getattr(aval, "shape", None), getattr(aval, "dtype", None)
    if shape is None or dtype is None:
        return 0
    itemsize = getattr(dtype, "itemsize", None)  # JAX's extended dtypes (typed PRNG keys) carry their own
    return int(np.prod(shape, dtype=np.int64)) * (itemsize if isinstance(itemsize, int) else np.dtype(dtype).itemsize)


def hlo_counts(hlo_text: str) -> dict:
    """xla_kernels and xla_fusions in the entry computation and the loop/branch bodies it calls (each counted once)."""
    kernels = fusions = 0
    found = False
    for opcode, _ in _reachable_ops(hlo_text):
        found = True
        if opcode not in NOT_KERNELS:
            kernels += 1
            fusions += opcode == "fusion"
    return {"xla_kernels": kernels, "xla_fusions": fusions} if found else {}


COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all", "collective-permute")
_CALLS = re.compile(r"\bcalls=%([\w.-]+)")
_ARRAY_TYPE = re.compile(r"\b(pred|[suf]\d+|bf16|c64|c128|f8\w*)\[([\d,]*)\]")
_BITS = {"pred": 8, "bf16": 16, "c64": 64, "c128": 128}


def collective_counts(hlo_text: str) -> dict:
    """Collectives XLA inserted, by kind: `<kind>_count` ops (an async pair as one, by its -start) and `<kind>_bytes`
    of their results, with `collectives` and `collective_bytes` the totals; every count 0 on one device."""
    row: dict = {}
    for kind in COLLECTIVES:
        row[f"{kind.replace('-', '_')}_count"] = row[f"{kind.replace('-', '_')}_bytes"] = 0
    parsed = False
    for opcode, line in _reachable_ops(hlo_text, follow_calls=True):
        parsed = True
        kind = opcode.removesuffix("-start")
        if kind not in COLLECTIVES:
            continue
        sizes = [_array_bytes(dtype, dims) for dtype, dims in _ARRAY_TYPE.findall(line.split(opcode + "(", 1)[0])]
        row[f"{kind.replace('-', '_')}_count"] += 1
        row[f"{kind.replace('-', '_')}_bytes"] += _result_bytes(opcode, kind, sizes)
    if not parsed:  # no HLO this parser can read: no columns, as hlo_counts
        return {}
    row["collectives"] = sum(row[f"{k.replace('-', '_')}_count"] for k in COLLECTIVES)
    row["collective_bytes"] = sum(row[f"{k.replace('-', '_')}_bytes"] for k in COLLECTIVES)
    return row


def _result_bytes(opcode: str, kind: str, sizes: list[int]) -> int:
    """The bytes of a collective's results: every array of a sync op's (tuple) type; of an async -start's tuple
    (operands, results[, context]) the results: the second half for all-gather and reduce-scatter, the second
    array for collective-permute (its two u32 contexts aside); all-reduce-start's type is its results."""
    if opcode == kind or kind == "all-reduce" or len(sizes) < 2:
        return sum(sizes)
    if kind == "collective-permute":
        return sizes[1]
    return sum(sizes[len(sizes) // 2 :])


def _array_bytes(dtype: str, dims: str) -> int:
    bits = _BITS.get(dtype) or int(re.sub(r"\D", "", dtype.split("e")[0]) or 8)
    return math.prod(int(d) for d in dims.split(",") if d) * bits // 8


def _reachable_ops(hlo_text: str, follow_calls: bool = False) -> Iterator[tuple[str, str]]:
    """(opcode, line) of each instruction in the entry computation and the computations it calls, each once; with
    follow_calls, also those a `calls=` names (fusions, and the wrapped computation of an `async-start`)."""
    computations = _computations(hlo_text)
    entry = next((name for name, (is_entry, _) in computations.items() if is_entry), None)
    seen, todo = set(), [entry] if entry is not None else []
    while todo:
        name = todo.pop()
        if name in seen or name not in computations:
            continue
        seen.add(name)
        for line in computations[name][1]:
            match = _OPCODE.search(line)
            if not match:
                continue
            yield match.group(1), line
            for single, many in _SUBCOMPUTATIONS.findall(line):
                todo.extend([single] if single else [n.strip().lstrip("%") for n in many.split(",")])
            if follow_calls:
                todo.extend(_CALLS.findall(line))


def _computations(text: str) -> dict[str, tuple[bool, list[str]]]:
    found: dict[str, tuple[bool, list[str]]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        header = re.match(r"^(ENTRY\s+)?%([\w.-]+)\s.*\{\s*$", line)
        if header and not line.startswith(" "):
            current = []
            found[header.group(2)] = (bool(header.group(1)), current)
        elif line.startswith("}"):
            current = None
        elif current is not None:
            current.append(line)
    return found


def op_dispatch_s(dtype: str, ops: int = 200, repeats: int = 5) -> float:
    """Seconds eager mode spends per op on a tiny array: a chain of `ops` negations, then one block.

    The best of `repeats` chains, so the figure is the dispatch floor, not a noisy average.
    """
    import jax.numpy as jnp

    x = jax.device_put(np.zeros(1, dtype=jnp.dtype(dtype)))  # on the job's default device
    jnp.negative(x).block_until_ready()
    best = float("inf")
    for _ in range(repeats):
        y = x
        start = time.perf_counter_ns()
        for _ in range(ops):
            y = jnp.negative(y)
        y.block_until_ready()
        best = min(best, (time.perf_counter_ns() - start) / 1e9 / ops)
    return best


def quietly(count: Callable[..., dict], *args: Any) -> dict:
    """count(*args), or no columns when it fails: a function that cannot be traced, HLO text that does not parse."""
    try:
        return count(*args)
    except Exception:
        return {}
