"""The rounds' calls on a thread of their own, two Python frames deep, as a user's script makes them (issue 61).

jaxlib records the calling Python traceback with every array a call returns (`tracebacks_enabled`, on by default),
walking every frame on the thread's stack: ~20 ns a frame on the 2-core VM. The worker's main thread calls ~15 frames
deep (the forkserver child, the worker's entry, the rounds); a user's script 2-3. For x + 1 (~5 us a call on the
CPU) that was 4-5% (docs/benchmarks.md, "Issue 61: the stack's depth").
"""

from __future__ import annotations

import _thread
import contextvars
import os
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


class Shallow:
    """`call(fn, arg)` runs `fn(arg)` on one thread kept for it, where only `_serve` lies below the call.

    The caller waits; an exception `fn` raises is raised in the caller; the call runs in a copy of the caller's
    context variables (NumPy's errstate lives there). Interrupted while it waits (a signal), the caller first lets the
    call in flight end (a sample's calls cannot be cut short), then the interrupt goes on, and this Shallow is
    `broken`: a later call raises rather than read a stale result."""

    def __init__(self) -> None:
        self._go = _thread.allocate_lock()
        self._done = _thread.allocate_lock()
        self._go.acquire()
        self._done.acquire()
        self._job: tuple[contextvars.Context, Callable[[Any], Any], Any] | None = None
        self._result: tuple[bool, Any] = (True, None)
        self.broken = False
        self.native_id = 0
        self.thread_id = _thread.start_new_thread(self._serve, ())
        self._done.acquire()  # the thread has told its native id (its /proc/self/task entry)

    def _serve(self) -> None:
        self.native_id = _thread.get_native_id()
        self._done.release()
        while True:
            self._go.acquire()
            if self._job is None:
                return
            context, fn, arg = self._job
            self._job = None
            try:
                self._result = (True, context.run(fn, arg))  # a C call: no Python frame between _serve and fn
            except BaseException as exc:  # raised again in the caller's thread
                self._result = (False, exc)
            del context, fn, arg
            self._done.release()

    def call(self, fn: Callable[[Any], T], arg: Any) -> T:
        """fn(arg) on the shallow thread; its value, or its exception raised here."""
        if self.broken:
            raise RuntimeError("this Shallow was interrupted while a call was in flight; start another")
        self._job = (contextvars.copy_context(), fn, arg)
        self._go.release()
        try:
            self._done.acquire()
        except BaseException:
            self.broken = True
            self._done.acquire()
            raise
        ok, value = self._result
        self._result = (True, None)
        if not ok:
            raise value
        return value

    def close(self) -> None:
        """The thread ends (it holds nothing between calls)."""
        self._go.release()


_SHARED: list[Shallow] = []


def shared() -> Shallow:
    """This process's one shallow thread, started at the first use (again after an interrupt broke it)."""
    if not _SHARED or _SHARED[0].broken:
        _SHARED[:] = [Shallow()]
    return _SHARED[0]


os.register_at_fork(after_in_child=_SHARED.clear)  # a forked child has no copy of the thread, only of the object
