"""In the caller's own process (isolate=none) a job's timed calls stay on the caller's thread, so its thread-local
JAX settings hold in the rounds; in a worker process they go to the shallow thread (tests/e2e/test_shallow_stack.py)."""

from __future__ import annotations

import sys
from collections import Counter

import jax
import jax.numpy as jnp

from jitexp import compose, run


def _depths(tmp_path, monkeypatch) -> Counter:
    module = tmp_path / "depthfns.py"
    module.write_text(
        "import sys\n"
        "DEPTHS = []\n"
        "def plus_one(x):\n"
        "    frame, n = sys._getframe(), 0\n"
        "    while frame is not None:\n"
        "        n, frame = n + 1, frame.f_back\n"
        "    DEPTHS.append(n)\n"
        "    return x + 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("depthfns", None)
    cfg = compose(
        ["timing=quick", "isolate=none", "workload=custom", "workload.fn=depthfns.plus_one", "mode=eager"]
        + ["workload.args=[{shape:[]}]"]
    )
    assert run(cfg).row["status"] == "ok"
    return Counter(sys.modules["depthfns"].DEPTHS)


def test_in_the_callers_process_the_rounds_call_on_its_own_thread(tmp_path, monkeypatch):
    usual = _depths(tmp_path, monkeypatch).most_common(1)[0][0]  # the rounds' calls outnumber the others
    assert usual > 10  # under the test's and the runner's frames: the caller's thread


def test_a_thread_local_jax_setting_of_the_caller_holds_in_the_rounds():
    seen = []

    def f(x):
        seen.append(jax.config.jax_default_matmul_precision)  # at trace time: one trace if the setting holds
        return x @ x

    x = jnp.ones((4, 4))
    with jax.default_matmul_precision("highest"):
        from jitexp import measure

        result = measure(f, x, isolate="none", timing="quick", modes=["jit"])
    assert [row["status"] for row in result.result.rows] == ["ok"]
    assert set(seen) == {"highest"}
