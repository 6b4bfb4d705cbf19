"""Issue 59: the timed job holds what a user's loop holds. Before each run of the timed loop (warm-up, calibration,
each sample), in `isolate=none` jobs of two processes (the first with its extras and check, the second without):
one copy of a carried state and of the batch, and one of a plain call's argument, as `state, loss = step(state,
batch)` and `f(x).block_until_ready()` hold them (benchmarks/live_copies.py counts the MLP step's)."""

from __future__ import annotations

import sys
import textwrap

import jax
import pytest

from jitexp import compose, run
from jitexp.worker import modes

# shapes nothing else in the test process has: the state (13, 7), the batch (3, 11)
CODE = textwrap.dedent("""
    import jax.numpy as jnp


    def make(size, dtype, seed, **kw):
        return jnp.ones((size, 7), dtype), jnp.ones((3, 11), dtype)


    def step(state, batch):
        return state * 0.5 + batch.sum(), state.sum()
""")
STATE, BATCH = (13, 7), (3, 11)
BASE = ["isolate=none", "timing=quick", "timing.processes=2", "timing.max_processes=2", "size=13", "progress=false"]
CARRIED = [*BASE, "workload=custom", "workload.fn=livecode.step", "+workload.carry={0: 0}"]
SPECS = "workload.args=[{shape:[${size},7]},{shape:[3,11]}]"


@pytest.fixture
def live(tmp_path, monkeypatch):
    """The count of live arrays of each shape before every run of a timed loop."""
    (tmp_path / "livecode.py").write_text(CODE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "livecode", raising=False)
    counts: list[dict] = []
    real = modes.loop_for

    def counted(call, out, block):
        loop = real(call, out, block)

        def counting(number):
            shapes = [x.shape for x in jax.live_arrays()]
            counts.append({STATE: shapes.count(STATE), BATCH: shapes.count(BATCH)})
            return loop(number)

        return counting

    monkeypatch.setattr(modes, "loop_for", counted)
    return counts


def rows_of(overrides):
    result = run(compose(overrides))
    assert all(r["status"] == "ok" for r in result.rows), [r.get("error_message") for r in result.rows]
    return result.rows


@pytest.mark.parametrize(
    "inputs",
    [["workload.setup=livecode.make"], [SPECS]],
    ids=["setup", "specs"],
)
@pytest.mark.parametrize("donate", [[], ["mode.donate_argnums=[0]"]], ids=["kept", "donated"])
def test_a_carried_step_holds_one_state_and_one_batch(live, inputs, donate):
    [row] = rows_of([*CARRIED, "mode=jit", *inputs, *donate])
    assert row["matches_eager"]  # the check still had the first call's output
    assert live and all(c == {STATE: 1, BATCH: 1} for c in live), [
        (i, c) for i, c in enumerate(live) if c != {STATE: 1, BATCH: 1}
    ] + [len(live)]


def test_each_mode_holds_its_own_state_and_the_batch_is_shared(live):
    rows_of([*CARRIED, "mode=[eager,jit]", "workload.setup=livecode.make"])
    assert live and all(c == {STATE: 2, BATCH: 1} for c in live), live


def test_a_plain_call_holds_its_argument_alone(live):
    [row] = rows_of([*BASE, "workload=add_one", "mode=jit", "workload.args=[{shape:[${size},7]}]"])
    assert row["matches_eager"]
    assert live and all(c[STATE] == 1 for c in live), live  # x; its output is dropped before the next run
