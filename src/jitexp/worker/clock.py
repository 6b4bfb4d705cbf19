"""Where one worker process's time goes: named phases of wall time, summed per name, and the compiles in each.

The worker enters one phase at a time (`phase("open")`, `phase("first_call")`, ...); phases do not nest, so their
seconds add up to the process's own time. `stamp()` is CLOCK_MONOTONIC, the same clock in every process of the
machine, so the driver can place the worker's start and end between its own launch and exit (records.Phases).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from jitexp.worker import channel, compiles
from jitexp.worker.compiles import CompileCounter

seconds: dict[str, float] = {}
compiled: dict[str, int] = {}  # XLA compiles in each phase (compile events less the persistent cache's hits)
_current: list[str] = []


def reset() -> None:
    """A new process (or an in-process job): no phase yet."""
    seconds.clear()
    compiled.clear()
    _current.clear()


def stamp() -> float:
    """CLOCK_MONOTONIC in seconds: comparable between the driver and its workers."""
    return time.monotonic()


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Time the block as `name` (added to what `name` already holds); inside another phase, the inner one's
    seconds are taken out of the outer's, so every second is counted once."""
    counter = CompileCounter()
    if channel.conn is not None:
        channel.conn.send(("step", name))  # for the job's status line (engine.progress)
    start = time.perf_counter()
    _current.append(name)
    try:
        with counter:
            yield
    finally:
        _current.pop()
        took = time.perf_counter() - start
        seconds[name] = seconds.get(name, 0.0) + took
        made = counter.count - counter.events[compiles.CACHE_HITS]
        compiled[name] = compiled.get(name, 0) + made
        if _current:
            outer = _current[-1]
            seconds[outer] = seconds.get(outer, 0.0) - took
            compiled[outer] = compiled.get(outer, 0) - made
