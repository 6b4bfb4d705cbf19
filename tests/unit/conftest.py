"""tests/unit: no JAX, no subprocess. Pure logic fed plain numbers, hand-made rows and the saved runs in tests/data.

Starting any subprocess or worker fails the test (the fixture below); a static check (test_layers.py) keeps `jax`
and `jitexp.worker` out of these modules' imports.
"""

from __future__ import annotations

import multiprocessing.process
import subprocess

import pytest


class LaunchRefused(AssertionError):
    """A unit test tried to start a process: it belongs in tests/inprocess or tests/e2e."""


@pytest.fixture(autouse=True)
def no_processes(monkeypatch):
    def refuse(*args, **kwargs):
        raise LaunchRefused("tests/unit may not start a process (move the test to tests/inprocess or tests/e2e)")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse)
    from jitexp.engine import processes

    monkeypatch.setattr(processes.FreshProcess, "launch", refuse)
    monkeypatch.setattr(processes.InProcess, "launch", refuse)
