"""Turning a workload and a mode into a callable, with trace/lower/compile timed cold."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import jax

from .compiles import CompileCounter
from .errors import phase
from .timing import Block, time_one
from .workloads import Workload


@dataclass
class CompilePhases:
    """Seconds of each AOT stage from cold, and the Compiled object (for its cost analysis)."""

    trace_s: float
    lower_s: float
    compile_s: float
    compiled: Any


@dataclass
class CallRecord:
    call: int
    call_s: float
    compiles: int


def _seconds(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter_ns()
    value = fn()
    return (time.perf_counter_ns() - start) / 1e9, value


def compile_phases(w: Workload) -> CompilePhases:
    """jit(f).trace -> .lower -> .compile, each stage timed, from cleared caches."""
    # Jobs of a basic-launcher sweep share one process: without the clear, a later job
    # would time an earlier job's cached trace and executable.
    jax.clear_caches()
    with phase("trace"):
        jitted = jax.jit(w.fn, static_argnums=w.static_argnums)
        trace_s, traced = _seconds(lambda: jitted.trace(*w.args))
    with phase("lower"):
        lower_s, lowered = _seconds(traced.lower)
    with phase("compile"):
        compile_s, compiled = _seconds(lowered.compile)
    return CompilePhases(trace_s, lower_s, compile_s, compiled)


def make_call(w: Workload, mode: str) -> Callable[[], Any]:
    """A fresh zero-argument callable running one call of the workload in `mode`.

    eager calls the function as written; jit wraps it in jax.jit; aot lowers and compiles
    here and calls the Compiled object with the non-static arguments only.
    """
    fn, args = w.fn, w.args
    if mode == "eager":
        return lambda: fn(*args)
    jitted = jax.jit(fn, static_argnums=w.static_argnums)
    if mode == "jit":
        return lambda: jitted(*args)
    compiled = jitted.lower(*args).compile()
    dynamic = w.dynamic_args
    return lambda: compiled(*dynamic)


def cold_calls(w: Workload, mode: str, n: int, block: Block) -> tuple[Callable[[], Any], list[CallRecord], Any]:
    """n synchronized calls from cold caches through a fresh callable; the first pays every compile.

    For aot the first record includes lower + compile: it is the cost until the first result.
    """
    jax.clear_caches()
    with CompileCounter() as counter:
        first_s, (call, out) = _seconds(lambda: _first(w, mode, block))
    records = [CallRecord(1, first_s, counter.count)]
    for i in range(2, n + 1):
        with CompileCounter() as counter:
            call_s, out = time_one(call, block)
        records.append(CallRecord(i, call_s, counter.count))
    return call, records, out


def _first(w: Workload, mode: str, block: Block) -> tuple[Callable[[], Any], Any]:
    call = make_call(w, mode)
    return call, block(call())


def cost_of(compiled: Any) -> dict:
    """XLA's cost and memory analysis of a Compiled object as row fields (empty where unavailable)."""
    row: dict = {}
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
    try:
        memory = compiled.memory_analysis()
    except Exception:
        memory = None
    if memory is not None:
        for field in ("argument", "output", "temp", "alias", "generated_code"):
            row[f"{field}_size_bytes"] = getattr(memory, f"{field}_size_in_bytes", None)
        row["peak_memory_bytes"] = getattr(memory, "peak_memory_in_bytes", None)  # newer jaxlibs only
    return row
