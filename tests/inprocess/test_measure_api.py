"""jitexp.measure in this process (isolate="none"): an equinox module under filter_jit, an optax step with carry and
donation, a typed PRNG key carried; the cold call's phases are JAX's own compile events, a wrong call is an error row,
what cannot be pickled (its one-line mistakes and memory guard: tests/unit/test_measure_args.py). Measuring through
worker processes (closures, equinox, optax, __main__, save then report and compare): tests/e2e/test_measure_workers.py."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import jitexp

QUICK = "quick"


def test_the_cold_call_phases_are_the_compile_events_jax_fired_for_the_function():
    # In this process (isolate="none"), a listener of our own hears the same compile events as jitexp's:
    # the jit row's trace_s, lower_s and compile_s must be the durations JAX reported for this function's
    # trace, lowering and backend compile (each phase from its own event, not a wall-clock split).
    import jax
    import jax.monitoring

    name = "phases_probe_fn"
    heard: dict[str, list[float]] = {"trace": [], "lower": [], "compile": []}
    events = {
        "/jax/core/compile/jaxpr_trace_duration": ("trace", name),
        "/jax/core/compile/jaxpr_to_mlir_module_duration": ("lower", f"jit({name})"),
        "/jax/core/compile/backend_compile_duration": ("compile", f"jit({name})"),
    }

    def listen(event, duration, **kw):
        phase, fun = events.get(event, (None, None))
        if phase is not None and kw.get("fun_name") == fun:
            heard[phase].append(duration)

    jax.monitoring.register_event_duration_secs_listener(listen)  # JAX keeps it: it only hears this function

    def phases_probe_fn(x):
        return jax.numpy.sum(jax.numpy.tanh(x) * 2)

    assert phases_probe_fn.__name__ == name
    measured = jitexp.measure(phases_probe_fn, np.ones(64, np.float32), timing=QUICK, isolate="none", modes="jit")
    parts = measured.first_call("jit")
    assert all(heard.values()), heard
    for phase in ("trace", "lower", "compile"):
        assert parts[f"{phase}_s"] in heard[phase], (phase, parts, heard)
    assert parts["execute_s"] > 0 and measured.row("jit")["first_call_compiles"] == 1


def test_a_lambda_that_raises_is_an_error_row_not_an_exception():
    """A call that fails inside the function is the mode's error row; arguments the function cannot take at all are
    refused before anything runs, as the command line's preflight does (tests/unit/test_measure_args.py)."""
    x = np.ones(4, np.float32)
    measured = jitexp.measure(lambda a, b: len(a, b), x, x, timing=QUICK, modes="jit", isolate="none")
    row = measured.row("jit")
    assert (row["status"], row["error_phase"], row["error_type"]) == ("error", "trace", "TypeError")
    assert "len() takes exactly one argument (2 given)" in row["error_message"]
    assert not measured.ok and measured.errors[0].startswith("jit failed in trace: TypeError:")
    with pytest.raises(ValueError, match="jit failed in trace"):
        measured.speedup("jit")


def test_isolate_none_measures_what_cannot_be_pickled():
    lock = threading.Lock()

    def locked(x):
        with lock:
            return x * 2

    with pytest.raises(TypeError, match=r"^fn cannot be pickled .*isolate=\"none\" measures it in this process"):
        jitexp.measure(locked, np.ones(4, np.float32), timing=QUICK)
    with pytest.raises(TypeError, match=r"^argument 1 cannot be pickled to reach a worker process \(TypeError: "):
        jitexp.measure(lambda x, _: x, np.ones(4, np.float32), threading.Lock(), timing=QUICK)
    measured = jitexp.measure(locked, np.ones(4, np.float32), timing=QUICK, isolate="none", modes="eager")
    assert measured.ok and measured.row("eager")["isolate"] == "none"


def test_an_equinox_module_with_filter_jit():
    eqx = pytest.importorskip("equinox")
    import jax
    import jax.numpy as jnp

    model = eqx.nn.MLP(8, 2, 16, 2, key=jax.random.key(0))
    measured = jitexp.measure(
        lambda m, x: jnp.sum(m(x) ** 2),
        model,
        jnp.ones(8),
        jit_fn=eqx.filter_jit,
        modes=["jit", "aot"],
        timing=QUICK,
        isolate="none",
    )
    for row in measured.result.rows:
        assert row["status"] == "ok" and row["jit_fn"] == "equinox.filter_jit", row


def test_an_optax_train_step_with_carry_and_donation():
    optax = pytest.importorskip("optax")
    import jax
    import jax.numpy as jnp

    opt = optax.sgd(0.1)
    params = {"w": jnp.ones((8, 4)), "b": jnp.zeros(4)}

    def step(params, state, x):
        loss, grads = jax.value_and_grad(lambda p: jnp.sum(jnp.tanh(x @ p["w"] + p["b"])))(params)
        updates, state = opt.update(grads, state)
        return optax.apply_updates(params, updates), state, loss

    measured = jitexp.measure(
        step,
        params,
        opt.init(params),
        jnp.ones((2, 8)),
        carry={0: 0, 1: 1},
        donate_argnums=[0, 1],
        timing=QUICK,
        isolate="none",
    )
    jit = measured.row("jit")
    assert measured.ok and jit["matches_eager"] is True and jit["compiles_during_timing"] == 0
    assert jit["donation"].startswith("carried: output 0 -> argument 0, output 1 -> argument 1")
    assert jit["donate_argnums"] == "[0, 1]"


def test_a_typed_prng_key_argument_is_carried():
    import jax

    def split(key, x):
        key, sub = jax.random.split(key)
        return key, x * jax.random.bernoulli(sub, 0.5, x.shape)

    measured = jitexp.measure(
        split, jax.random.key(1), jax.numpy.ones(8), carry={0: 0}, modes="jit", timing=QUICK, isolate="none"
    )
    assert measured.ok, measured.errors
