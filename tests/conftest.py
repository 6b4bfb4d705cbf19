"""The suite's layers, by what a test may use (each layer's conftest.py enforces it):

- tests/unit: no JAX and no subprocess: pure logic, statistics, configs, rows, tables and reports fed plain numbers
  and the saved runs under tests/data. Launching a worker or any subprocess fails the test.
- tests/inprocess: JAX in the test process, `isolate=none` or the worker's functions called directly; no subprocess.
- tests/e2e: real worker processes and the installed commands, one test per feature or CLI path.

Shared helpers live in tests/helpers.py (`from helpers import run_cli`).
"""

from __future__ import annotations

import gc
import os
import signal

import pytest
from hypothesis import settings

# A property test runs its everyday number of examples (helpers.examples) unless this profile is loaded:
# `pytest --hypothesis-profile=thorough` runs each with the count it was written with (docs/decisions.md, issue 60).
settings.register_profile("thorough")


def pytest_configure(config):
    """What needs a process once per machine is done here, before any layer refuses processes: matplotlib's first
    import on a machine (an empty MPLCONFIGDIR or HOME: a new user, a fresh CI container) runs `fc-list` to build its
    font cache, which tests/unit's refusal turned into 14 failures (LaunchRefused). Importing its font_manager builds
    the cache, or reads it in a few ms where it exists. Every process runs this hook: pytest-xdist's controller
    before it starts its workers, so they find the cache built (.ci/run proves it with an empty HOME)."""
    import matplotlib.font_manager  # noqa: F401

    # The suite measures on the CPU by its own config, whatever the product's default device (auto: an accelerator
    # where there is one): every worker and command it starts inherits this. tests/e2e/test_tpu.py takes it off.
    os.environ.setdefault("JAX_PLATFORMS", "cpu")

    # SIGINT as KeyboardInterrupt also where the suite was started with it ignored (a job put in the background by `&` in a shell without job control):
    # Python then installs no handler, and a test that interrupts a call sees nothing happen (test_shallow's two
    # failed so in a nohup'd run). The processes the tests start then inherit the default, not the ignoring.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    """The garbage collector is off while the tests are collected, and runs once after: importing and rewriting a
    layer's modules ran ~15 full collections over the growing heap (0.8 s of tests/unit's collection, of 1.3 s of
    full collections in all); what the imports left in cycles is freed by the one collection."""
    gc.disable()
    try:
        return (yield)
    finally:
        gc.collect()
        gc.enable()


@pytest.fixture(scope="session", autouse=True)
def frozen_heap():
    """What is alive once the tests are collected (the modules of pandas, matplotlib, Hydra, JAX) goes to the garbage
    collector's permanent generation, so the gc.collect() before each sampling (worker.timing.gc_disabled) scans what
    the tests made rather than the whole heap: in tests/unit the 17 collects took 2.15 s, 0.52 s frozen (cProfile)."""
    gc.freeze()
    yield
    gc.unfreeze()
