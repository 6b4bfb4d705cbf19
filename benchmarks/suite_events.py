"""pytest plugin for benchmarks/suite.py: one JSON line per test (layer, `slow` mark, seconds from setup to
teardown) appended to $JITEXP_SUITE_EVENTS, from whichever process runs the test (an xdist worker or pytest)."""

from __future__ import annotations

import json
import os
import time

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    start = time.perf_counter()
    yield
    parts = item.nodeid.split("/")
    record = {
        "test": item.nodeid,
        "layer": parts[1] if len(parts) > 2 and parts[0] == "tests" else "other",
        "slow": item.get_closest_marker("slow") is not None,
        "seconds": time.perf_counter() - start,
    }
    with open(os.environ["JITEXP_SUITE_EVENTS"], "a") as f:  # one short write per line: appends do not interleave
        f.write(json.dumps(record) + "\n")
