"""Turning a workload and a mode into a zero-argument call, its blocking, and its cold first call."""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from typing import Any

import jax

from . import compiles
from .attribution import hlo_counts, quietly
from .compiles import CompileCounter
from .errors import PhaseError, interrupted, phase
from .timing import Block, Call
from .workloads import Workload, static_positions


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
    output: Any  # the first call's
    first_call_s: float
    trace_s: float
    lower_s: float
    compile_s: float
    execute_s: float
    compiles: int
    records: list[CallRecord]


def make_call(w: Workload, mode: str) -> Call:
    """A zero-argument call of the workload in `mode` (a partial: one C-level layer, no lambda).

    eager calls the function as written; jit wraps it in jax.jit; aot lowers and compiles
    here and calls the Compiled object with the non-static arguments only; numpy calls the
    workload's NumPy twin on host copies of the inputs.
    """
    if mode == "eager":
        return partial(w.fn, *w.args)
    if mode == "numpy":
        return partial(w.numpy_fn, *w.host_args)
    jitted = w.jitted()
    if mode == "jit":
        fn, args, donated = jitted, w.args, w.donate_argnums
    else:
        fn, args = jitted.lower(*w.args).compile(), w.dynamic_args
        dynamic = [i for i in range(len(w.args)) if i not in static_positions(w.static_argnums, len(w.args))]
        donated = tuple(dynamic.index(i) for i in w.donate_argnums)
    return Carry(fn, args, donated) if donated else partial(fn, *args)


class Carry:
    """A call whose donated arguments are the previous call's outputs of the same shape and dtype.

    A donated buffer is invalid after the call, so the next call takes the output XLA wrote in
    its place (the update pattern donation is for): no copies in or out of the timed region,
    but the input values evolve from call to call. An argument no output matches is not
    donated at all (XLA cannot reuse it; JAX warns) and stays as it is.
    """

    def __init__(self, fn: Any, args: tuple, donated: tuple[int, ...]) -> None:
        self.fn, self.args, self.donated = fn, list(args), donated
        self.source: dict[int, int] | None = None  # donated position -> output leaf index

    def __call__(self) -> Any:
        out = self.fn(*self.args)
        leaves = jax.tree.leaves(out)
        if self.source is None:
            self.source = _matches([self.args[i] for i in self.donated], leaves, self.donated)
        for i, leaf in self.source.items():
            self.args[i] = leaves[leaf]
        return out

    def describe(self) -> str:
        """How the donated inputs were handled, for the row's `donation` column."""
        reused = sorted(self.source or {})
        unusable = [i for i in self.donated if i not in reused]
        parts = []
        if reused:
            parts.append(f"argument(s) {reused} donated; each call takes the previous call's output as its input")
        if unusable:
            parts.append(f"argument(s) {unusable} not donated: no output has the same shape and dtype")
        return "; ".join(parts)


def _matches(inputs: list, leaves: list, positions: tuple[int, ...]) -> dict[int, int]:
    taken: dict[int, int] = {}
    for position, x in zip(positions, inputs):
        for k, leaf in enumerate(leaves):
            if k not in taken.values() and getattr(leaf, "shape", None) == x.shape and leaf.dtype == x.dtype:
                taken[position] = k
                break
    return taken


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


def _ready(value: Any) -> Any:
    return value


def cold_call(w: Workload, mode: str, n: int = 1) -> ColdCall:
    """The first call from cold (building the callable included), then calls 2..n timed one by one."""
    with CompileCounter() as counter:
        start = time.perf_counter_ns()
        try:
            call = make_call(w, mode)
            out = jax.block_until_ready(call())
        except SystemExit:  # the workload ends the process: say in which phase first
            if compiles.on_event is not None:
                compiles.on_event(failed_phase(w, mode))
            raise
        except Exception as exc:
            if interrupted(exc):
                raise KeyboardInterrupt from exc
            raise PhaseError(failed_phase(w, mode), exc) from exc
        first_s = (time.perf_counter_ns() - start) / 1e9
    block = block_for(out)
    phases = counter.phases()
    records = [CallRecord(1, first_s, counter.count)]
    first = jax.tree.map(lambda a: a.copy(), out) if isinstance(call, Carry) and n > 1 else out  # call 2 consumes it
    with phase("execute"):  # calls 2..n: a failure here is the mode's error row too
        for i in range(2, n + 1):
            with CompileCounter() as later:
                start = time.perf_counter_ns()
                block(call())
                records.append(CallRecord(i, (time.perf_counter_ns() - start) / 1e9, later.count))
    return ColdCall(call, block, first, first_s, **phases, execute_s=first_s - sum(phases.values()),
                    compiles=counter.count, records=records)


def failed_phase(w: Workload, mode: str) -> str:
    """The phase a failed first call failed in, found by re-running the AOT stages one by one.

    (JAX fires its trace event even when tracing raises, so the events cannot tell.)
    """
    if mode in ("eager", "numpy"):
        return "execute"
    stage: Any = w.jitted()
    for name, step in (("trace", lambda s: s.trace(*w.args)), ("lower", lambda s: s.lower()),
                       ("compile", lambda s: s.compile())):
        try:
            stage = step(stage)
        except (Exception, SystemExit):
            return name
    return "execute"


def cost_of(w: Workload) -> dict:
    """XLA's cost and memory analysis and the kernel counts of the compiled workload as row fields (empty where unavailable)."""
    compiled = w.jitted().lower(*w.args).compile()
    row: dict = quietly(hlo_counts, compiled.as_text())
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
