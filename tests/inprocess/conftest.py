"""tests/inprocess: JAX in the test process: `isolate=none` jobs, or the worker's functions called directly.

No subprocess and no fresh worker (the fixture below fails a test that starts one; the git commands a job's driver
runs to record the code's commit are the exception): a test that needs real worker processes or the installed
commands belongs in tests/e2e.
"""

from __future__ import annotations

import pytest

from helpers import refuse_processes


@pytest.fixture(autouse=True)
def no_processes(monkeypatch):
    refuse_processes(monkeypatch, "tests/inprocess", in_process_jobs=True)
