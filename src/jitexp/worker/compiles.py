"""Counting and timing XLA compilations around a region, from JAX's compile-duration events."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

TRACE = "/jax/core/compile/jaxpr_trace_duration"
LOWER = "/jax/core/compile/jaxpr_to_mlir_module_duration"
BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"
COMPILE_EVENTS = (TRACE, LOWER, BACKEND_COMPILE)
CACHE_HITS = "/jax/compilation_cache/cache_hits"  # persistent (disk) cache, per compile request
CACHE_MISSES = "/jax/compilation_cache/cache_misses"

_active: list[CompileCounter] = []
_installed = False
NEXT_PHASE = {TRACE: "lower", LOWER: "compile", BACKEND_COMPILE: "execute"}
on_event: Callable[[str], None] | None = None  # told the phase that follows each compile event


def _listener(event: str, duration_secs: float, **kwargs: Any) -> None:
    if event in COMPILE_EVENTS:
        for counter in _active:
            counter.events[event] += 1
            counter.seconds[event] += duration_secs
        if on_event is not None:
            on_event(NEXT_PHASE[event])


def _count_event(event: str, **kwargs) -> None:
    if event in (CACHE_HITS, CACHE_MISSES):
        for counter in _active:
            counter.events[event] += 1


def _install() -> None:
    # One process-wide listener for the whole session: JAX keeps listeners forever,
    # so registering one per job would multiply the counts.
    global _installed
    if not _installed:
        import jax.monitoring

        jax.monitoring.register_event_duration_secs_listener(_listener)
        jax.monitoring.register_event_listener(_count_event)
        _installed = True


class CompileCounter:
    """`with CompileCounter() as c: ...`: compiles seen inside the block and each phase's seconds."""

    def __init__(self) -> None:
        self.events: Counter[str] = Counter()
        self.seconds: dict[str, float] = defaultdict(float)

    @property
    def count(self) -> int:
        return self.events[BACKEND_COMPILE]

    def phases(self) -> dict[str, float]:
        """trace_s, lower_s, compile_s: summed durations of the events fired inside the block."""
        return {
            "trace_s": self.seconds[TRACE],
            "lower_s": self.seconds[LOWER],
            "compile_s": self.seconds[BACKEND_COMPILE],
        }

    def __enter__(self) -> CompileCounter:
        _install()
        _active.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _active.remove(self)
