"""tests/unit: no JAX, no subprocess. Pure logic fed plain numbers, hand-made rows and the saved runs in tests/data,
and the worker's JAX-free parts (its timing loop, the noise arithmetic) fed plain Python callables.

Starting any process or worker fails the test, and so does a test after which JAX is loaded (the fixture and hooks below);
a static check (test_layers.py) keeps `jax`, the model libraries and the built-in workloads out of these modules'
imports.

Figures are drawn without matplotlib's constrained layout (about 40% of a figure's time), unless a test is marked
`layout`: these tests look at what a figure holds (its lines, labels, legends, the PNG written), not at where the
layout puts it.
"""

from __future__ import annotations

import gc
import sys

import pytest

from helpers import refuse_processes


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "layout: the test looks at where constrained layout puts a figure's parts (the layout runs)"
    )


_LAYOUT = {"on": False}  # whether the running test is marked `layout`
_HAD_JAX = {"on": False}  # whether JAX was loaded before the running test (by another layer's tests in this session)


def pytest_runtest_setup(item):
    """Before the test's fixtures: whether it is marked `layout`, and whether JAX is loaded already."""
    _LAYOUT["on"] = item.get_closest_marker("layout") is not None
    _HAD_JAX["on"] = "jax" in sys.modules


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """A test after which JAX is loaded (by the test or its fixtures) fails at its teardown; a hook rather than an
    autouse fixture, which cost each of the layer's ~1,700 tests a fixture's setup and teardown."""
    yield
    if nextitem is not None:
        _freeze_survivors()
    if not _HAD_JAX["on"] and "jax" in sys.modules:
        pytest.fail(f"{item.nodeid} loaded JAX: tests/unit may not (tests/inprocess may)", pytrace=False)


_FULL_PASSES = {"seen": 0}  # the collector's count of full collections when the heap was last frozen


def _freeze_survivors() -> None:
    """After a test during which the collector made a full pass, the heap is collected and what survives is frozen,
    as tests/conftest.py's frozen_heap froze the imports: later full passes (automatic ones, and the gc.collect()
    before each sampling in worker.timing) scan only what the tests made since, not the modules imported on first
    use (scipy, Hydra's, pyplot) and the caches, alive to the end anyway. Between tests, after a collection: no
    garbage is frozen and no test sees another object; the session's end (frozen_heap) unfreezes the heap."""
    if gc.get_stats()[2]["collections"] != _FULL_PASSES["seen"]:
        gc.collect()
        gc.freeze()
        _FULL_PASSES["seen"] = gc.get_stats()[2]["collections"]


@pytest.fixture(scope="package", autouse=True)
def plots_without_layout():
    """Constrained layout skipped: a figure asked for one gets no layout engine (legends placed 'outside' still
    work: they sit where matplotlib first puts them), so saving it draws once rather than twice (a figure with a
    layout engine is drawn once for the layout before it is drawn into the PNG); the PNG is written as before.
    Patched once for the package, not per test (0.3 ms a test, ~0.5 s of the layer): a test marked `layout` gets
    matplotlib's own choice."""
    from matplotlib.figure import Figure

    chosen = Figure.set_layout_engine

    def without_constrained(self, layout=None, **kwargs):
        return chosen(self, None if layout == "constrained" and not _LAYOUT["on"] else layout, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Figure, "set_layout_engine", without_constrained)
        yield


@pytest.fixture(scope="package", autouse=True)
def no_processes():
    """Starting a process fails the test, patched once for the package, not per test (a test's own monkeypatch of
    the same names is undone back to the refusal)."""
    with pytest.MonkeyPatch.context() as patch:
        refuse_processes(patch, "tests/unit", in_process_jobs=False)
        yield
