"""tests/inprocess: JAX in the test process: `isolate=none` jobs, or the worker's functions called directly.

No subprocess and no fresh worker (the fixture below fails a test that starts one): a test that needs real worker
processes or the installed commands belongs in tests/e2e.
"""

from __future__ import annotations

import multiprocessing.process
import subprocess

import pytest


class LaunchRefused(AssertionError):
    """An in-process test tried to start a process: it belongs in tests/e2e."""


@pytest.fixture(autouse=True)
def no_processes(monkeypatch):
    def refuse(*args, **kwargs):
        raise LaunchRefused("tests/inprocess may not start a process (isolate=none, or move the test to tests/e2e)")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse)
    from jitexp.engine import processes

    monkeypatch.setattr(processes.FreshProcess, "launch", refuse)
