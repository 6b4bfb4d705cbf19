"""tests/unit: no JAX, no subprocess. Pure logic fed plain numbers, hand-made rows and the saved runs in tests/data.

Starting any process or worker fails the test (the fixture below); a static check (test_layers.py) keeps `jax`
and `jitexp.worker` out of these modules' imports.
"""

from __future__ import annotations

import pytest

from helpers import refuse_processes


@pytest.fixture(autouse=True)
def no_processes(monkeypatch):
    refuse_processes(monkeypatch, "tests/unit", in_process_jobs=False)
