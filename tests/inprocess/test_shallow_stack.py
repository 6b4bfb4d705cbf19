"""In the caller's own process (isolate=none) a job's timed calls stay on the caller's thread, so its thread-local
JAX settings hold in the rounds; in a worker process they go to the shallow thread (tests/e2e/test_shallow_stack.py)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from helpers import depth_job


def test_in_the_callers_process_the_rounds_call_on_its_own_thread(tmp_path):
    assert depth_job(tmp_path, "none") > 10  # under the test's and the runner's frames: the caller's thread


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
