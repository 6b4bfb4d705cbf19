"""Turning a workload and a mode into a zero-argument call, its blocking, and its cold first call."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import jax
import jax.numpy as jnp

from jitexp.errors import PhaseError, interrupted, phase
from jitexp.worker import compiles
from jitexp.worker.attribution import collective_counts, hlo_counts, quietly
from jitexp.worker.compiles import CompileCounter
from jitexp.worker.timing import Block, Call, Loop, plain_loop
from jitexp.worker.workload import Workload, copy_leaf, static_positions


@dataclass
class CallRecord:
    call: int
    call_s: float
    compiles: int


@dataclass
class ColdCall:
    """The first call of a mode from cold, split by the compile events fired during it.

    trace_s + lower_s + compile_s + execute_s == first_call_s: execute_s is the remainder
    (dispatch and execution). For eager the parts sum the compiles of every primitive.
    """

    call: Call
    block: Block
    loop: Loop  # the timed loop of the steady state: loop_for(call, output, block)
    output: Any  # the first call's, kept for the checks (None where not asked: cold_call's keep_output)
    first_call_s: float
    trace_s: float
    lower_s: float
    compile_s: float
    execute_s: float
    compiles: int
    records: list[CallRecord]


def make_call(w: Workload, mode: str) -> Call:
    """A zero-argument call of the workload in `mode` (a partial: one C-level layer, no lambda).

    eager calls the function as written; jit wraps it in the workload's jit_fn (jax.jit unless
    it names another); aot lowers and compiles here and calls the Compiled object; numpy calls
    the workload's NumPy twin on host copies of the inputs. A training loop (`carry`) or donated
    arguments make it a Carry: each call takes the previous call's outputs.
    """
    if mode == "numpy":
        assert w.numpy_fn is not None
        return partial(w.numpy_fn, *w.host_args, **w.host_kwargs)
    if mode == "eager":
        fn, args, kwargs, drop = w.fn, w.args, w.kwargs, set[int]()
    else:
        jitted = w.jitted()
        if mode == "jit":
            fn, args, kwargs, drop = jitted, w.args, w.kwargs, set()
        else:
            lower = getattr(jitted, "lower", None)
            if lower is None:
                raise NoAotError(
                    f"{w.jit_fn.__module__}.{w.jit_fn.__name__} returns a function without .lower(); "
                    "aot needs jit_fn(f).lower(*args).compile()"
                )
            fn, args, kwargs = lower(*w.args, **w.kwargs).compile(), w.args, w.kwargs
            dynamic = w.aot_inputs()[0]
            drop = set() if len(dynamic) == len(w.args) else static_positions(w.static_argnums, len(w.args))
            kwargs = w.aot_inputs()[1]
    donated = tuple(w.donate_argnums) if mode in ("jit", "aot") else ()
    if w.carry or donated:
        eager_note = "eager does not donate" if mode == "eager" and w.donate_argnums else ""
        return Carry(fn, args, kwargs, w.carry, donated, drop, eager_note)
    return partial(fn, *(a for i, a in enumerate(args) if i not in drop), **kwargs)


class NoAotError(TypeError):
    """The jit transformation offers no ahead-of-time lowering."""


class CarryError(ValueError):
    """A carry map that does not fit the function's outputs; `phase` says where the row puts it."""

    def __init__(self, phase_name: str, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.phase, self.hint = phase_name, hint


class Carry:
    """A call whose arguments are fed from the previous call's outputs: a training loop, or donated buffers.

    With `carry` ({output position: argument position}) each call takes those outputs as those
    arguments, as `params, opt_state, loss = step(params, opt_state, batch)` does. Without it,
    donated arguments take the output leaf of the same shape and dtype (the update pattern
    donation is for); an argument no output matches is not donated at all (XLA cannot reuse it;
    JAX warns). No copies in or out of the timed region; the inputs evolve from call to call.
    """

    def __init__(
        self,
        fn: Any,
        args: tuple,
        kwargs: dict,
        carry: dict[int, int],
        donated: tuple[int, ...],
        drop: set[int] | None = None,
        note: str = "",
    ) -> None:
        self.fn, self.args, self.kwargs = fn, list(args), kwargs
        self.carry, self.donated, self.drop, self.note = dict(carry), donated, drop or set(), note
        self.pairs = tuple(self.carry.items())
        self.source: dict[int, int] | None = None  # donated position -> output leaf index (no carry map)

    def __call__(self) -> Any:
        args = self.args if not self.drop else [a for i, a in enumerate(self.args) if i not in self.drop]
        out = self.fn(*args, **self.kwargs)
        if self.pairs:
            if self.source is None:
                check_carry(self.carry, self.args, out)
                self.source = {}
            for k, i in self.pairs:
                self.args[i] = out[k]
            return out
        leaves = jax.tree.leaves(out)
        if self.source is None:
            self.source = _matches([self.args[i] for i in self.donated], leaves, self.donated)
        for i, leaf in self.source.items():
            self.args[i] = leaves[leaf]
        return out

    def describe(self) -> str:
        """What was carried and donated, for the row's `donation` column."""
        if self.carry:
            pairs = ", ".join(f"output {k} -> argument {i}" for k, i in sorted(self.carry.items()))
            donated = sorted(self.donated)
            tail = (
                f"; argument(s) {donated} donated"
                if donated
                else f"; {self.note}"
                if self.note
                else "; nothing donated (mode.donate_argnums donates the carried buffers)"
            )
            return f"carried: {pairs}{tail}"
        reused = sorted(self.source or {})
        objects = [i for i in self.donated if i not in reused and not isinstance(self.args[i], jax.Array)]
        unusable = [i for i in self.donated if i not in reused and i not in objects]
        parts = []
        if reused:
            parts.append(f"argument(s) {reused} donated; each call takes the previous call's output as its input")
        if objects:
            parts.append(
                f"argument(s) {objects} donated as they are, not arrays: the same objects are passed each "
                "call (nnx.jit writes their new state back; for other pytrees set workload.carry)"
            )
        if unusable:
            parts.append(f"argument(s) {unusable} not donated: no output has the same shape and dtype")
        return "; ".join(parts)


def check_carry(carry: dict[int, int], args: list, out: Any) -> None:
    """Raise CarryError unless every carried output exists and matches its argument leaf for leaf."""
    n_out = len(out) if isinstance(out, (tuple, list)) else 1
    bad_out = [k for k in carry if k >= n_out or not isinstance(out, (tuple, list))]
    bad_arg = [i for i in carry.values() if i >= len(args)]
    if bad_out or bad_arg:
        raise CarryError(
            "inputs",
            f"workload.carry={carry} does not fit: the function returns {n_out} output(s) "
            f"({'a tuple' if isinstance(out, (tuple, list)) else 'not a tuple'}) and takes "
            f"{len(args)} positional argument(s)",
            "workload.carry maps output positions to argument positions: return a tuple and use positions that exist",
        )
    for k, i in carry.items():
        want = jax.tree_util.tree_flatten_with_path(args[i])
        got = jax.tree_util.tree_flatten_with_path(out[k])
        if str(want[1]) != str(got[1]):
            raise CarryError(
                "execute",
                f"carried output {k} has another structure than argument {i}: {got[1]} against {want[1]}",
                f"a loop cannot feed output {k} back as argument {i}: fix workload.carry (output position: "
                "argument position), or return the argument's own structure",
            )
        for (path, a), (_, b) in zip(want[0], got[0]):
            if not _feeds_back(a, b):
                leaf = f"argument {i}{jax.tree_util.keystr(path)}"
                raise CarryError(
                    "execute",
                    f"carried output {k} does not match {leaf}: {_aval(b)} returned, {_aval(a)} taken",
                    f"a loop that feeds output {k} back as argument {i} changes {leaf}'s shape or kind of dtype on "
                    f"every call: return it as {_aval(a)}, or map another output to it in workload.carry",
                )


_KINDS = (jnp.bool_, jnp.integer, jnp.floating, jnp.complexfloating)
_PYTHON_KINDS = {bool: jnp.bool_, int: jnp.integer, float: jnp.floating, complex: jnp.complexfloating}


def _kind(x: Any) -> Any:
    """bool, integer, floating or complex (the kind a user's loop cares about), or None for anything else."""
    for cls, kind in _PYTHON_KINDS.items():
        if type(x) is cls:
            return kind
    dtype = getattr(x, "dtype", None)
    return next((kind for kind in _KINDS if dtype is not None and jnp.issubdtype(dtype, kind)), None)


def _feeds_back(taken: Any, returned: Any) -> bool:
    """Whether `returned` can be the next call's `taken` leaf, as in a user's loop: the same shape and kind of
    dtype. A Python scalar taken may come back as a 0-d array of its kind (jit always returns one: a flax
    TrainState's int `step` comes back int32[]); a width change (int64 -> int32) retraces once, as it would there.
    """
    return _shape(taken) == _shape(returned) and _kind(taken) is _kind(returned)


def _shape(x: Any) -> tuple[int, ...] | None:
    return () if type(x) in _PYTHON_KINDS else getattr(x, "shape", None)


def _matches(inputs: list, leaves: list, positions: tuple[int, ...]) -> dict[int, int]:
    taken: dict[int, int] = {}
    for position, x in zip(positions, inputs):
        if not isinstance(x, jax.Array):  # a pytree or object: only a carry map says which output replaces it
            continue
        for k, leaf in enumerate(leaves):
            if k not in taken.values() and getattr(leaf, "shape", None) == x.shape and leaf.dtype == x.dtype:
                taken[position] = k
                break
    return taken


def _aval(x: Any) -> str:
    return f"{getattr(x, 'dtype', type(x).__name__)}{list(getattr(x, 'shape', ()))}"


def block_for(out: Any) -> Block:
    """A block specialised once for the output's structure.

    A single array blocks through its own method (jax.block_until_ready's tree walk costs
    ~1.5 us a call); a flat tuple/list of arrays block leaf by leaf; other pytrees are
    flattened per call. An output with no device array in it (NumPy's) has nothing to wait for.
    """
    if isinstance(out, jax.Array):
        return type(out).block_until_ready
    if isinstance(out, (tuple, list)) and out and all(isinstance(v, jax.Array) for v in out):

        def block_leaves(value: Any) -> Any:
            for leaf in value:
                leaf.block_until_ready()
            return value

        return block_leaves
    if not any(isinstance(leaf, jax.Array) for leaf in jax.tree.leaves(out)):
        return _ready
    return jax.block_until_ready


def loop_for(call: Call, out: Any, block: Block) -> Loop:
    """The steady state's timed loop for a call whose output looks like `out` (`block` = `block_for(out)`): the
    user's loop, nothing more.

    A plain call is unpacked so the loop calls the function itself (`f(*args).block_until_ready()`
    for a single array, as a user writes it); a training loop feeds the carried outputs back in the
    loop body. Anything else falls back to `timing.plain_loop` with the block. Each output is dropped before the
    next call, as in the user's loop (holding it one call longer cost 1.5% of `x + 1`); the last is returned.
    """
    ns = time.perf_counter_ns
    if isinstance(call, Carry) and call.pairs and not call.drop and call.source is not None:
        return _carry_loop(call.fn, call.args, call.kwargs, call.pairs, block)
    if not isinstance(call, partial):
        return plain_loop(call, block)
    fn, args, kwargs = call.func, call.args, call.keywords
    if isinstance(out, jax.Array) and not kwargs:

        def array_loop(number: int) -> tuple[float, Any]:
            start = ns()
            for _ in range(number - 1):
                fn(*args).block_until_ready()
            value = fn(*args).block_until_ready()
            return (ns() - start) / 1e9 / number, value

        return array_loop
    if isinstance(out, jax.Array):

        def array_kw_loop(number: int) -> tuple[float, Any]:
            start = ns()
            for _ in range(number - 1):
                fn(*args, **kwargs).block_until_ready()
            value = fn(*args, **kwargs).block_until_ready()
            return (ns() - start) / 1e9 / number, value

        return array_kw_loop

    def tree_loop(number: int) -> tuple[float, Any]:
        start = ns()
        for _ in range(number - 1):
            block(fn(*args, **kwargs))
        value = block(fn(*args, **kwargs))
        return (ns() - start) / 1e9 / number, value

    return tree_loop


def _carry_loop(fn: Any, args: list, kwargs: Mapping, pairs: tuple, block: Block) -> Loop:
    """`params, opt_state, loss = step(params, opt_state, batch)` in the loop body: carried outputs fed back."""
    ns = time.perf_counter_ns

    def carry_loop(number: int) -> tuple[float, Any]:
        value = None
        start = ns()
        for _ in range(number):
            value = fn(*args, **kwargs)
            for k, i in pairs:
                args[i] = value[k]
            block(value)
        return (ns() - start) / 1e9 / number, value

    return carry_loop


def _ready(value: Any) -> Any:
    return value


def cold_call(w: Workload, mode: str, n: int = 1, keep_output: bool = True) -> ColdCall:
    """The first call from cold (building the callable included), then calls 2..n timed one by one. With
    `keep_output` the first call's output is kept (its own copy where the next call donates it); else none is."""
    with CompileCounter() as counter:
        start = time.perf_counter_ns()
        try:
            call = make_call(w, mode)
            out = jax.block_until_ready(call())
        except SystemExit:  # the workload ends the process: say in which phase first
            if compiles.on_event is not None:
                compiles.on_event(failed_phase(w, mode))
            raise
        except (CarryError, NoAotError) as exc:
            raise PhaseError(exc.phase if isinstance(exc, CarryError) else "lower", exc) from exc
        except Exception as exc:
            if interrupted(exc):
                raise KeyboardInterrupt from exc
            raise PhaseError(failed_phase(w, mode), exc) from exc
        first_s = (time.perf_counter_ns() - start) / 1e9
    block = block_for(out)
    loop = loop_for(call, out, block)
    phases = counter.phases()
    records = [CallRecord(1, first_s, counter.count)]
    donates = isinstance(call, Carry) and bool(call.donated)  # the next call consumes it
    first = (jax.tree.map(copy_leaf, out) if donates else out) if keep_output else None
    del out
    with phase("execute"):  # calls 2..n: a failure here is the mode's error row too
        for i in range(2, n + 1):
            with CompileCounter() as later:
                start = time.perf_counter_ns()
                block(call())
                records.append(CallRecord(i, (time.perf_counter_ns() - start) / 1e9, later.count))
    return ColdCall(
        call,
        block,
        loop,
        first,
        first_s,
        **phases,
        execute_s=first_s - sum(phases.values()),
        compiles=counter.count,
        records=records,
    )


def failed_phase(w: Workload, mode: str) -> str:
    """The phase a failed first call failed in, found by re-running the AOT stages one by one.

    (JAX fires its trace event even when tracing raises, so the events cannot tell.)
    """
    if mode in ("eager", "numpy"):
        return "execute"
    try:
        stage: Any = w.jitted()
    except (Exception, SystemExit):  # jit_fn refused the function as it wrapped it: before any trace
        return "trace"
    steps: list[tuple[str, Any]] = [("trace", lambda s: s.trace(*w.args, **w.kwargs)), ("lower", lambda s: s.lower())]
    if not hasattr(stage, "trace"):  # equinox's and nnx's wrappers lower in one step (trace and lower)
        steps = [("trace", lambda s: s.lower(*w.args, **w.kwargs))] if hasattr(stage, "lower") else []
    for name, step in (*steps, ("compile", lambda s: s.compile())):
        try:
            stage = step(stage)
        except (Exception, SystemExit):
            return name
    return "execute"


def cost_of(w: Workload) -> dict:
    """XLA's cost and memory analysis and the kernel counts of the compiled workload as row fields (empty where unavailable)."""
    jitted = w.jitted()
    if not hasattr(jitted, "lower"):  # a jit_fn without AOT stages: no compiled object to analyse, empty columns
        return {}
    compiled = jitted.lower(*w.args, **w.kwargs).compile()
    if not hasattr(compiled, "as_text"):  # equinox's Compiled wraps JAX's
        compiled = getattr(compiled, "compiled", compiled)
    try:
        text = compiled.as_text()
    except Exception:
        text = ""
    row: dict = {**quietly(hlo_counts, text), **quietly(collective_counts, text)} if text else {}
    try:
        cost = compiled.cost_analysis()
    except Exception:  # some backends do not implement it
        cost = None
    if isinstance(cost, (list, tuple)):
        cost = cost[0] if cost else None
    if cost:
        row["flops"] = cost.get("flops")
        row["transcendentals"] = cost.get("transcendentals", 0.0)
        row["bytes_accessed"] = cost.get("bytes accessed")
        if row["flops"] is not None and row["bytes_accessed"]:
            row["arithmetic_intensity"] = row["flops"] / row["bytes_accessed"]
    try:
        memory = compiled.memory_analysis()
    except Exception:
        memory = None
    if memory is not None:
        for field in ("argument", "output", "temp", "alias", "generated_code"):
            row[f"{field}_size_bytes"] = getattr(memory, f"{field}_size_in_bytes", None)
        row["peak_memory_bytes"] = getattr(memory, "peak_memory_in_bytes", None)  # newer jaxlibs only
    return row
