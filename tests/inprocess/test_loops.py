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


def test_each_output_is_dropped_before_the_next_call_as_in_the_users_loop():
    # `f(x).block_until_ready()` in a user's loop frees each output before the next call; holding it one call
    # longer cost ~1.5% of a jitted x + 1. Each loop shape (a single array, keywords, a pytree, the generic one)
    # keeps only the last output, which the check and the report need.
    import weakref

    from jitexp.worker.timing import plain_loop

    alive_at_call: list[int] = []
    outputs: list[weakref.ref] = []

    def make(tree: bool):
        def f(x, scale=1.0):
            alive_at_call.append(sum(ref() is not None for ref in outputs))
            out = x * scale + len(outputs)
            outputs.append(weakref.ref(out))
            return {"y": out} if tree else out

        return f

    x = jnp.arange(3.0)
    loops = {
        "array": lambda f: loop_for(partial(f, x), x, block_for(x)),
        "keywords": lambda f: loop_for(partial(f, x, scale=2.0), x, block_for(x)),
        "tree": lambda f: loop_for(partial(f, x), {"y": x}, block_for({"y": x})),
        "generic": lambda f: plain_loop(partial(f, x), block_for(x)),
    }
    for name, build in loops.items():
        alive_at_call.clear()
        outputs.clear()
        _, last = build(make(name == "tree"))(4)
        assert alive_at_call == [0, 0, 0, 0], name
        assert sum(ref() is not None for ref in outputs) == 1, name  # the last output, returned
        assert last is not None


def test_the_dispatch_probe_lasts_about_a_tenth_of_a_second_with_three_calls_at_least():
    from jitexp.worker.measure import dispatch_probes

    assert dispatch_probes(10, 1e-6) == 10  # a short call: as many as asked
    assert dispatch_probes(10, 0.025) == 4  # a 25 ms call: 0.1 s of them
    assert dispatch_probes(10, 1.0) == 3 and dispatch_probes(2, 1.0) == 2  # never more than asked
