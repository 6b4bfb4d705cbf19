"""The steady state's timed loop is the user's loop: inputs as user code has them, the block on the output itself."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jitexp.config import ExperimentConfig, WorkloadConfig
from jitexp.worker import workload
from jitexp.worker.modes import Carry, block_for, cold_call, loop_for


def test_inputs_on_the_default_device_stay_uncommitted_as_user_code_has_them():
    cfg = ExperimentConfig(workload=WorkloadConfig(fn="jitexp.workloads.add_one", args=[{"shape": [4]}]), size=4)
    default = jax.devices()[0]
    assert workload.placement(default) is None
    (x,) = workload.build_args(cfg, workload.placement(default))
    assert not x.committed and x.devices() == {default}
    (y,) = workload.build_args(cfg, default)  # a device named outright: committed, and jit follows it
    assert y.committed


def test_a_single_array_output_is_timed_by_calling_the_function_itself():
    calls = []

    def f(x):
        calls.append(1)  # runs at trace time only: one trace for the cold call and every loop call
        return x + 1

    jitted = jax.jit(f)
    x = jnp.arange(3.0)
    out = jitted(x)
    loop = loop_for(partial(jitted, x), out, block_for(out))
    per_call, last = loop(50)
    assert per_call > 0 and isinstance(last, jax.Array)
    np.testing.assert_array_equal(last, x + 1)
    assert len(calls) == 1  # no retrace: the loop passes the arguments as the first call did


def test_a_carried_step_feeds_its_outputs_back_in_the_loop():
    w = workload.Workload(
        "count", lambda state, inc: (state + inc, state.sum()), (jnp.zeros(3), jnp.ones(3)), (), carry={0: 0}
    )
    c = cold_call(w, "jit")
    assert isinstance(c.call, Carry)
    _, last = c.loop(5)
    # the cold call took zeros -> ones; five more calls: 6 in all, and the loss is the sum before the last step
    np.testing.assert_array_equal(c.call.args[0], np.full(3, 6.0))
    np.testing.assert_array_equal(last[1], 15.0)
