"""Counting XLA compilations around a region, from JAX's compile-duration events."""

from __future__ import annotations

from collections import Counter

BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"
COMPILE_EVENTS = (
    "/jax/core/compile/jaxpr_trace_duration",
    "/jax/core/compile/jaxpr_to_mlir_module_duration",
    BACKEND_COMPILE,
)

_active: list["CompileCounter"] = []
_installed = False


def _listener(event: str, duration_secs: float, **kwargs) -> None:
    if event in COMPILE_EVENTS:
        for counter in _active:
            counter.events[event] += 1


def _install() -> None:
    # One process-wide listener for the whole session: JAX keeps listeners forever,
    # so registering one per job would multiply the counts.
    global _installed
    if not _installed:
        import jax.monitoring

        jax.monitoring.register_event_duration_secs_listener(_listener)
        _installed = True


class CompileCounter:
    """`with CompileCounter() as c: ...` then `c.count`: backend compiles seen inside the block."""

    def __init__(self) -> None:
        self.events: Counter = Counter()

    @property
    def count(self) -> int:
        return self.events[BACKEND_COMPILE]

    def __enter__(self) -> "CompileCounter":
        _install()
        _active.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _active.remove(self)
