"""tests/unit: no JAX, no subprocess. Pure logic fed plain numbers, hand-made rows and the saved runs in tests/data,
and the worker's JAX-free parts (its timing loop, the noise arithmetic) fed plain Python callables.

Starting any process or worker fails the test, and so does a test after which JAX is loaded (the fixtures below);
a static check (test_layers.py) keeps `jax`, the model libraries and the built-in workloads out of these modules'
imports.
"""

from __future__ import annotations

import sys

import pytest

from helpers import refuse_processes


@pytest.fixture(autouse=True)
def no_processes(monkeypatch):
    refuse_processes(monkeypatch, "tests/unit", in_process_jobs=False)


@pytest.fixture(autouse=True)
def no_jax(request):
    had = "jax" in sys.modules  # loaded already by another layer's tests in this session: nothing to tell
    yield
    if not had and "jax" in sys.modules:
        pytest.fail(f"{request.node.nodeid} loaded JAX: tests/unit may not (tests/inprocess may)", pytrace=False)
