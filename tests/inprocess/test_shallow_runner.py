"""Which thread a worker process's rounds are made on (worker.measure._shallow_runner, _ticks): the shallow one
unless JAX's thread-local trace context differs there, and the CPU counters read on the thread that calls."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import jax

from jitexp import noise
from jitexp.worker import measure
from jitexp.worker.shallow import shared


def _task(isolate: str):
    return SimpleNamespace(cfg=SimpleNamespace(isolate=isolate))


def test_a_worker_process_calls_on_the_shallow_thread_the_callers_process_on_its_own():
    assert measure._shallow_runner(_task("process")) is shared()
    assert measure._shallow_runner(_task("none")) is None


def test_a_thread_local_jax_context_keeps_the_calls_on_the_workers_thread():
    # a jax.set_mesh at a module's import, a config context left open: jit's cache is keyed on it
    with jax.default_matmul_precision("highest"):
        assert measure._shallow_runner(_task("process")) is None
    assert measure._shallow_runner(_task("process")) is shared()


def test_the_cpu_counters_are_the_calling_threads(monkeypatch):
    read_for = []
    monkeypatch.setattr(noise, "cpu_times", lambda thread=None: read_for.append(thread))
    runner = shared()
    measure._ticks(runner)()
    measure._ticks(None)()
    assert read_for == [runner.native_id, None] and runner.native_id != threading.get_native_id()
