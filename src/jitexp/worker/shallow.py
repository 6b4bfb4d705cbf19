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
import queue
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
_new_lock = _thread.allocate_lock  # each call's "done" lock (a test puts one there that is interrupted late)


class Shallow:
    """`call(fn, arg)` runs `fn(arg)` on one thread kept for it, where only `_serve` lies below the call.

    The caller waits; an exception `fn` raises is raised in the caller; the call runs in a copy of the caller's
    context variables (NumPy's errstate lives there). Interrupted while it waits (a signal), the caller first lets the
    call in flight end (a sample's calls cannot be cut short), then the interrupt goes on, and this Shallow is
    `broken`: a later call raises. Each call has a result slot and a lock of its own, so an interrupt raised at any
    moment (also after the call ended and its lock was taken) leaves nothing a later call could wait on or read; only
    a second one while the first waits leaves the call in flight to end on its own."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.broken = False
        self.native_id = 0
        started = _thread.allocate_lock()
        started.acquire()
        self.thread_id = _thread.start_new_thread(self._serve, (started,))
        started.acquire()  # the thread has told its native id (its /proc/self/task entry)

    def _serve(self, started: Any) -> None:
        self.native_id = _thread.get_native_id()
        started.release()
        del started
        while True:
            job = self._jobs.get()
            if job is None:
                return
            context, fn, arg, box, done = job
            del job
            try:
                box.append((True, context.run(fn, arg)))  # a C call: no Python frame between _serve and fn
            except BaseException as exc:  # raised again in the caller's thread
                box.append((False, exc))
            del context, fn, arg, box
            done.release()
            del done

    def call(self, fn: Callable[[Any], T], arg: Any) -> T:
        """fn(arg) on the shallow thread; its value, or its exception raised here."""
        if self.broken:
            raise RuntimeError("this Shallow was interrupted while a call was in flight; start another")
        box: list[tuple[bool, Any]] = []
        done = _new_lock()
        done.acquire()
        job = (contextvars.copy_context(), fn, arg, box, done)
        try:  # a signal is raised after a call returns: from here on, only once the job is queued
            self._jobs.put(job)
            del job
            done.acquire()
        except BaseException:
            self.broken = True
            if not box:  # the call in flight ends first, unless it had ended (a signal raised once the wait was over)
                done.acquire()
            raise
        ok, value = box[0]
        if not ok:
            raise value
        return value

    def close(self) -> None:
        """The thread ends (it holds nothing between calls)."""
        self._jobs.put(None)


_SHARED: list[Shallow] = []


def shared() -> Shallow:
    """This process's one shallow thread, started at the first use (again after an interrupt broke it)."""
    if not _SHARED or _SHARED[0].broken:
        if _SHARED:
            _SHARED[0].close()  # its thread ends once the call it was interrupted in has
        _SHARED[:] = [Shallow()]
    return _SHARED[0]


os.register_at_fork(after_in_child=_SHARED.clear)  # a forked child has no copy of the thread, only of the object
