"""The rounds' calls run on a thread of their own, two Python frames deep (issue 61: jaxlib walks the caller's whole
stack at each call, so the worker's ~15 frames cost x + 1 ~5% more than a user's script)."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from functools import partial

import numpy as np
import pytest

from jitexp.config import TimingConfig
from jitexp.worker.shallow import Shallow
from jitexp.worker.timing import measure_rounds


def _depth() -> tuple[int, int]:
    """(frames on this thread's stack below the caller, this thread's id)."""
    frame, n = sys._getframe(1), 0
    while frame is not None:
        n, frame = n + 1, frame.f_back
    return n, threading.get_ident()


def test_the_call_runs_two_frames_deep_on_another_thread_however_deep_the_caller():
    runner = Shallow()

    def deep(k: int) -> tuple[int, int]:
        return runner.call(lambda _: _depth(), None) if k == 0 else deep(k - 1)

    try:
        for k in (0, 20):
            depth, thread = deep(k)
            assert depth == 2  # the called function and `_serve`, nothing of the caller's
            assert thread == runner.thread_id != threading.get_ident()
    finally:
        runner.close()


def test_values_come_back_in_order_and_an_exception_is_raised_in_the_caller():
    runner = Shallow()
    boom = ValueError("kaput")

    def fail(_):
        raise boom

    try:
        assert [runner.call(lambda n: n * n, n) for n in range(50)] == [n * n for n in range(50)]
        with pytest.raises(ValueError) as caught:
            runner.call(fail, None)
        assert caught.value is boom
        assert runner.call(lambda n: n + 1, 1) == 2  # still serving after the exception
    finally:
        runner.close()


def test_an_interrupt_while_waiting_lets_the_call_in_flight_end_first():
    runner = Shallow()
    main, ended = threading.get_ident(), []

    def sample(_):
        signal.pthread_kill(main, signal.SIGINT)  # Ctrl-C reaches the waiting worker
        time.sleep(0.05)
        ended.append(True)

    try:
        with pytest.raises(KeyboardInterrupt):
            runner.call(sample, None)
        assert ended == [True]
    finally:
        runner.close()


def test_measure_rounds_samples_and_drops_failing_modes_through_the_shallow_thread():
    seen: set[int] = set()

    def ok(number: int) -> tuple[float, int]:
        seen.add(_depth()[1])
        return 1e-3, number

    def bad(number: int) -> tuple[float, int]:
        raise RuntimeError("no")

    policy = TimingConfig(warmup=1, min_samples=3, max_samples=3, min_sample_time_s=1e-4, max_time_s=1.0)
    runner = Shallow()
    try:
        rounds = measure_rounds({"a": partial(runner.call, ok), "b": partial(runner.call, bad)}, policy)
    finally:
        runner.close()
    assert list(rounds.samples_s) == ["a"] and isinstance(rounds.errors["b"], RuntimeError)
    np.testing.assert_array_equal(rounds.samples_s["a"], [1e-3] * 3)
    assert seen and threading.get_ident() not in seen  # every call, calibration included, on the shallow thread


def test_the_call_sees_the_callers_context_variables():
    import contextvars

    var = contextvars.ContextVar("var", default="unset")
    runner = Shallow()
    try:
        token = var.set("caller's")
        assert runner.call(lambda _: var.get(), None) == "caller's"
        var.reset(token)
        assert runner.call(lambda _: var.get(), None) == "unset"
    finally:
        runner.close()


def test_after_an_interrupt_the_shallow_is_broken_and_shared_starts_another(monkeypatch):
    from jitexp.worker import shallow as module

    runner = Shallow()
    main = threading.get_ident()

    def sample(_):
        signal.pthread_kill(main, signal.SIGINT)
        time.sleep(0.05)

    monkeypatch.setattr(module, "_SHARED", [runner])
    with pytest.raises(KeyboardInterrupt):
        runner.call(sample, None)
    assert runner.broken
    with pytest.raises(RuntimeError, match="interrupted"):
        runner.call(lambda n: n, 1)  # not a stale result
    fresh = module.shared()
    assert fresh is not runner and fresh.call(lambda n: n + 1, 1) == 2
    gone = time.monotonic() + 5.0  # the broken one's thread was ended, not left waiting for work
    while os.path.exists(f"/proc/self/task/{runner.native_id}") and time.monotonic() < gone:
        time.sleep(0.01)
    assert not os.path.exists(f"/proc/self/task/{runner.native_id}")
    fresh.close()


def test_the_thread_tells_its_native_id_and_its_counters_are_read_by_it():
    from jitexp import noise

    runner = Shallow()
    try:
        assert runner.native_id == runner.call(lambda _: threading.get_native_id(), None) != threading.get_native_id()
        # its own /proc entry, read from here: a blocked thread's run-queue wait does not move between two reads
        first = noise.run_queue_wait_ns(runner.native_id)
        assert first is not None and first == noise.run_queue_wait_ns(runner.native_id)
        assert noise.current_cpu(runner.native_id) is not None
        assert noise.run_queue_wait_ns(2**22 + 1) is None  # no such thread in this process
    finally:
        runner.close()


def test_an_interrupt_raised_once_the_call_has_ended_does_not_wait_for_it_again(monkeypatch):
    """A Ctrl-C that lands just before the caller blocks is raised only when its wait is over, the call ended and its
    lock taken. Waiting for the call to end again hung there for good (the CI's parallel layer, 2026-12-07)."""
    import _thread

    from jitexp.worker import shallow as module

    class TakenThenInterrupted:
        """The caller's lock: its second acquire (the caller's wait) succeeds, then raises KeyboardInterrupt."""

        def __init__(self):
            self.lock, self.acquired = _thread.allocate_lock(), 0

        def acquire(self):
            self.lock.acquire()
            self.acquired += 1
            if self.acquired == 2:
                raise KeyboardInterrupt
            return True

        def release(self):
            self.lock.release()

    runner = Shallow()
    monkeypatch.setattr(module, "_new_lock", TakenThenInterrupted)
    ended = []

    def caller():
        with pytest.raises(KeyboardInterrupt):
            runner.call(lambda n: n, 1)
        ended.append(runner.broken)

    thread = threading.Thread(target=caller, daemon=True)  # off the main thread: a hang fails the test, not the run
    thread.start()
    thread.join(10.0)
    runner.close()
    assert ended == [True]
