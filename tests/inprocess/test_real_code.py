"""Real code: setup functions returning pytrees, keyword arguments and static_argnames, which jit
(equinox.filter_jit, flax.nnx.jit), a training loop with carried state and donation, and their mistakes.

Jobs run in this process (isolate=none); the worker process is tested in tests/e2e."""

from __future__ import annotations

import sys
import textwrap

import pytest

from jitexp import ConfigError, compose, run

USER = textwrap.dedent("""
    from typing import NamedTuple

    import jax
    import jax.numpy as jnp

    import jitexp


    class Batch(NamedTuple):
        x: jax.Array
        y: jax.Array


    def make(size, dtype, seed, hidden=8, **kw):
        keys = jax.random.split(jax.random.key(seed), 3)
        params = {"w": jax.random.normal(keys[0], (size, hidden), dtype), "b": jnp.zeros((hidden,), dtype)}
        return params, Batch(jax.random.normal(keys[1], (4, size), dtype), jax.random.normal(keys[2], (4, hidden), dtype))


    def loss(params, batch, reduction="mean"):
        err = (jnp.tanh(batch.x @ params["w"] + params["b"]) - batch.y) ** 2
        return jnp.mean(err) if reduction == "mean" else jnp.sum(err)


    def make_kw(size, dtype, seed, **kw):
        params, batch = make(size, dtype, seed)
        return jitexp.Inputs(args=(params,), kwargs={"batch": batch})


    def step(params, batch, lr):
        value, grads = jax.value_and_grad(loss)(params, batch)
        return jax.tree.map(lambda p, g: p - lr * g, params, grads), value


    def bad_step(params, batch, lr):
        return {"w": params["w"][:1], "b": params["b"]}, loss(params, batch)


    def make_step(size, dtype, seed, **kw):
        params, batch = make(size, dtype, seed)
        return params, batch, jnp.float32(0.1)


    def with_key(key, x):
        key, sub = jax.random.split(key)
        return key, x * jax.random.bernoulli(sub, 0.5, x.shape)


    def make_key(size, dtype, seed, **kw):
        return jax.random.key(seed), jnp.ones((size,), dtype)


    def broken(size, dtype, seed, **kw):
        raise RuntimeError("no data here")


    def narrow(size, dtype):
        return (jnp.ones((size,), dtype),)


    def as_dict(size, dtype, seed, **kw):
        return {"x": jnp.ones((size,), dtype)}
""")


@pytest.fixture(autouse=True)
def user_module(tmp_path, monkeypatch):
    (tmp_path / "usercode.py").write_text(USER)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("usercode", None)


def job(*overrides: str):
    return run(compose(["timing=quick", "isolate=none", "workload=custom", "size=8", *overrides]))


def test_a_setup_function_gives_pytree_arguments_and_a_static_keyword():
    result = job(
        "workload.fn=usercode.loss",
        "workload.setup=usercode.make",
        "+workload.params.hidden=4",
        "+workload.kwargs={reduction: sum}",
        "workload.static_argnames=[reduction]",
    )
    jit = result.by_mode("jit")
    assert jit["status"] == "ok" and jit["matches_eager"] is True and jit["speedup"] > 0
    assert jit["static_argnames"] == "['reduction']" and jit["jit_fn"] == "jax.jit"
    assert jit["setup_s"] > 0 and jit["argument_size_bytes"] == (8 * 4 + 4 + 4 * 8 + 4 * 4) * 4  # params and batch
    assert jit["eager_ops"] > 0 and jit["xla_kernels"] > 0 and jit["explanation"]


def test_setup_may_return_inputs_with_keywords():
    jit = job("workload.fn=usercode.loss", "workload.setup=usercode.make_kw", "mode=jit").row
    assert jit["status"] == "ok" and jit["setup_s"] > 0


def test_a_string_keyword_must_be_static():
    row = job(
        "workload.fn=usercode.loss", "workload.setup=usercode.make", "+workload.kwargs={reduction: sum}", "mode=jit"
    ).row
    assert (row["status"], row["error_phase"]) == ("error", "trace") and "static" in row["hint"]


def test_a_carried_training_step_with_and_without_donation():
    plain = job(
        "workload.fn=usercode.step",
        "workload.setup=usercode.make_step",
        "+workload.carry={0: 0}",
        "mode=[eager,jit,aot]",
    )
    donated = job(
        "workload.fn=usercode.step",
        "workload.setup=usercode.make_step",
        "+workload.carry={0: 0}",
        "mode=[eager,jit]",
        "mode.donate_argnums=[0]",
    )
    for row in (*plain.rows, *donated.rows):
        assert row["status"] == "ok", row
    assert plain.by_mode("jit")["matches_eager"] is True and plain.by_mode("aot")["matches_eager"] is True
    assert (
        plain.by_mode("jit")["donation"]
        == "carried: output 0 -> argument 0; nothing donated (mode.donate_argnums donates the carried buffers)"
    )
    assert donated.by_mode("jit")["donation"] == "carried: output 0 -> argument 0; argument(s) [0] donated"
    assert donated.by_mode("eager")["donation"] == "carried: output 0 -> argument 0; eager does not donate"
    assert donated.by_mode("jit")["matches_eager"] is True and donated.by_mode("jit")["compiles_during_timing"] == 0


def test_a_typed_prng_key_is_carried():
    result = job("workload.fn=usercode.with_key", "workload.setup=usercode.make_key", "+workload.carry={0: 0}")
    assert [r["status"] for r in result.rows] == ["ok", "ok"] and result.by_mode("jit")["matches_eager"] is True


def test_carry_mistakes_are_error_rows_naming_what_does_not_fit():
    missing = job(
        "workload.fn=usercode.step", "workload.setup=usercode.make_step", "+workload.carry={5: 0}", "mode=jit"
    ).row
    assert (missing["status"], missing["error_phase"]) == ("error", "inputs")
    assert (
        "returns 2 output(s)" in missing["error_message"]
        and "takes 3 positional argument(s)" in missing["error_message"]
    )
    shape = job(
        "workload.fn=usercode.bad_step", "workload.setup=usercode.make_step", "+workload.carry={0: 0}", "mode=jit"
    ).row
    assert (shape["status"], shape["error_phase"]) == ("error", "execute")
    assert (
        "argument 0['w']" in shape["error_message"]
        and "float32[1, 8] returned, float32[8, 8] taken" in shape["error_message"]
    )


def test_setup_raising_is_an_inputs_row_with_its_line():
    row = job("workload.fn=usercode.loss", "workload.setup=usercode.broken").by_mode("jit")
    assert (row["status"], row["error_phase"], row["error_type"], row["error_message"]) == (
        "error",
        "inputs",
        "RuntimeError",
        "no data here",
    )
    assert row["hint"].startswith("workload.setup raised at usercode.py:") and row["hint"].endswith("in broken")


def test_a_setup_returning_a_dict_is_told_what_to_return_not_where_jitexp_found_it():
    row = job("workload.fn=usercode.loss", "workload.setup=usercode.as_dict").by_mode("jit")
    assert (row["status"], row["error_phase"], row["error_type"]) == (
        "error",
        "inputs",
        "jitexp.worker.workload.SetupReturned",
    )
    assert row["error_message"] == (
        "usercode.as_dict returned dict; it must return the positional arguments as a tuple, or "
        "jitexp.Inputs(args=..., kwargs=...)"
    )
    assert row["hint"] == (
        "the setup ran and returned a dict: make it return a tuple of fn's positional arguments (return (d,) for one "
        "argument that is a dict, return (params, batch) for two), or jitexp.Inputs(args=(...), kwargs={...}) for "
        "keywords"
    )


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (
            ["workload.fn=usercode.loss", "workload.setup=usercode.nosuch"],
            "workload.setup='usercode.nosuch' is invalid; module 'usercode' has no callable 'nosuch'",
        ),
        (
            ["workload.fn=usercode.loss", "workload.setup=usercode.narrow"],
            "cannot be called with size, dtype, seed and the params",
        ),
        (
            ["workload.fn=usercode.loss", "workload.setup=usercode.make", "workload.args=[{shape:[2]}]"],
            "workload.args or workload.setup, not both",
        ),
        (
            ["workload.fn=usercode.loss", "workload.setup=usercode.make", "workload.static_argnames=[mode]"],
            "'mode' is not a parameter of usercode.loss",
        ),
        (
            ["workload.fn=usercode.loss", "workload.setup=usercode.make", "mode.jit_fn=nosuchpkg.jit"],
            "mode.jit_fn='nosuchpkg.jit' is invalid; importing 'nosuchpkg' failed",
        ),
        (
            ["workload.fn=usercode.loss", "workload.setup=usercode.make", "mode.jit_fn=math.pi"],
            "mode.jit_fn='math.pi' is invalid; module 'math' has no callable 'pi'",
        ),
        (["workload.fn=usercode.loss", "workload.setup=usercode.make", "+workload.carry={0: -1}"], "workload.carry"),
    ],
)
def test_mistakes_are_one_line_config_errors(overrides, message):
    from jitexp.config import check_arity

    with pytest.raises(ConfigError, match=None) as caught:
        check_arity(compose(["workload=custom", *overrides]))
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_equinox_modules_need_filter_jit_and_get_it(tmp_path):
    pytest.importorskip("equinox")
    (tmp_path / "eqxcode.py").write_text(
        textwrap.dedent("""
        import equinox as eqx
        import jax
        import jax.numpy as jnp

        def make(size, dtype, seed, **kw):
            return eqx.nn.MLP(size, 2, 8, 2, key=jax.random.key(seed)), jnp.ones((size,), dtype)

        def apply(model, x):
            return jnp.sum(model(x) ** 2)
    """)
    )
    plain = job("workload.fn=eqxcode.apply", "workload.setup=eqxcode.make", "mode=jit").row
    assert (plain["status"], plain["error_phase"]) == ("error", "trace") and "abstract array" in plain["error_message"]
    filtered = job(
        "workload.fn=eqxcode.apply",
        "workload.setup=eqxcode.make",
        "mode=[eager,jit,aot]",
        "mode.jit_fn=equinox.filter_jit",
    )
    for row in filtered.rows:
        assert row["status"] == "ok" and row["jit_fn"] == "equinox.filter_jit", row
    jit = filtered.by_mode("jit")
    assert jit["matches_eager"] is True and jit["eager_ops"] > 0 and jit["xla_kernels"] > 0


def test_a_models_workload_without_its_extra_names_the_extra(monkeypatch):
    from jitexp.config import import_fn

    monkeypatch.setitem(sys.modules, "equinox", None)  # `import equinox` now fails as if it were not installed
    monkeypatch.delitem(sys.modules, "jitexp.workloads.models", raising=False)
    with pytest.raises(ConfigError) as caught:
        import_fn("jitexp.workloads.models.eqx_mlp_grad")
    assert str(caught.value).endswith('it needs the models extra: pip install "jitexp[models]"')
    assert "\n" not in str(caught.value)


def test_a_jit_fn_without_lower_makes_the_aot_row_an_error_with_a_hint(tmp_path):
    (tmp_path / "plainjit.py").write_text(
        "import jax\n\n\ndef jit(fn, **options):\n    jitted = jax.jit(fn, **options)\n    return lambda *a, **k: jitted(*a, **k)\n"
    )
    result = job(
        "workload.fn=usercode.loss", "workload.setup=usercode.make", "mode=[jit,aot]", "mode.jit_fn=plainjit.jit"
    )
    jit = result.by_mode("jit")
    assert jit["status"] == "ok", (jit.get("error_phase"), jit.get("error_type"), jit.get("error_message"))
    aot = result.by_mode("aot")
    assert (aot["status"], aot["error_phase"], aot["error_type"]) == (
        "error",
        "lower",
        "jitexp.worker.modes.NoAotError",
    )
    assert (
        "no ahead-of-time path" in aot["hint"]
        and "plainjit.jit returns a function without .lower()" in aot["error_message"]
    )
