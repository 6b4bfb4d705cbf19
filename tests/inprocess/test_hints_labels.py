"""Issue 23, items 4 and 5: hints that name the knob the user must type, labels that say what built the inputs, from
jobs and calls in this process. The labels of rows and a hint found before any import: tests/unit/test_hints_labels.py."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

import jitexp
from jitexp import ConfigError, compose, run
from jitexp.api import SETUP_LABEL
from jitexp.engine import preflight
from jitexp.errors import hint_for
from jitexp.labels import inputs_kind, setup_kind

CODE = textwrap.dedent("""
    import dataclasses

    import jax.numpy as jnp

    import jitexp


    @dataclasses.dataclass(frozen=True)
    class Cfg:
        n: int = 2


    def fn(x, cfg):
        return x * cfg.n


    def make_kw(size, dtype, seed, **kw):
        return jitexp.Inputs(args=(jnp.ones((size,), dtype),), kwargs={"cfg": Cfg()})


    def make_pos(depth=2, **kw):
        return jnp.ones((4,), "float32"), Cfg(depth)


    def make_eqx(size, dtype, seed, **kw):
        import equinox as eqx
        import jax

        return eqx.nn.MLP(size, 2, 4, 1, key=jax.random.key(seed)), jnp.ones((size,), dtype)


    def apply(model, x):
        return jnp.sum(model(x) ** 2)
""")
BASE = ["timing=quick", "isolate=none", "workload=custom", "size=8", "mode=jit"]
QUICK = [*BASE, "workload.fn=hlcode.fn"]


@pytest.fixture(autouse=True)
def user_module(tmp_path, monkeypatch):
    (tmp_path / "hlcode.py").write_text(CODE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("hlcode", None)


# ---- item 4: hints that name the knob ----


def test_a_dataclass_passed_by_keyword_is_made_static_by_name_and_that_works():
    row = run(compose([*QUICK, "workload.setup=hlcode.make_kw"])).row
    assert (row["status"], row["error_phase"]) == ("error", "trace")
    assert row["hint"].endswith("make it static: mode.static_argnames=[cfg]"), row["hint"]
    fixed = run(compose([*QUICK, "workload.setup=hlcode.make_kw", "mode.static_argnames=[cfg]"])).row
    assert fixed["status"] == "ok", fixed


def test_a_positional_one_is_made_static_by_its_real_index_and_that_works():
    row = run(compose([*QUICK, "workload.setup=hlcode.make_pos"])).row
    assert row["hint"].endswith("make it static: mode.static_argnums=[1]"), row["hint"]
    fixed = run(compose([*QUICK, "workload.setup=hlcode.make_pos", "mode.static_argnums=[1]"])).row
    assert fixed["status"] == "ok", fixed


def test_a_module_holding_arrays_is_pointed_to_filter_jit_not_to_static():
    pytest.importorskip("equinox")
    overrides = [*BASE, "workload.fn=hlcode.apply", "workload.setup=hlcode.make_eqx"]
    row = run(compose(overrides)).row
    assert "(model.activation)" in row["hint"] and row["hint"].endswith("mode.jit_fn=equinox.filter_jit traces "
                                                                        "the arrays and holds the rest static")  # fmt: skip
    assert "static_argnums" not in row["hint"]  # a module of arrays is not hashable: static would fail next
    assert run(compose([*overrides, "mode.jit_fn=equinox.filter_jit"])).row["status"] == "ok"


def test_a_traced_loop_count_names_its_argument_and_index():
    row = run(compose(["timing=quick", "isolate=none", "workload=apply_n_times", "size=8", "mode=jit",
                       "mode.static_argnums=[]"])).row  # fmt: skip
    assert row["error_type"] == "jax.errors.TracerIntegerConversionError"
    assert "make n static (mode.static_argnums=[1])" in row["hint"], row["hint"]


def test_from_python_the_hint_names_measures_keyword_and_that_works():
    """jitexp.measure's row said `mode.static_argnums=[1]`, the command line's knob, where its keyword is
    `static_argnums=1`."""
    from hlcode import fn, make_pos

    x, cfg = make_pos()
    row = jitexp.measure(fn, x, cfg, modes="jit", timing="quick", isolate="none").rows.iloc[0]
    assert row["status"] == "error" and row["hint"].endswith("make it static: static_argnums=1"), row["hint"]
    fixed = jitexp.measure(fn, x, cfg, modes="jit", timing="quick", isolate="none", static_argnums=1)
    assert fixed.rows.iloc[0]["status"] == "ok"


def test_without_the_call_the_hint_names_both_forms_and_never_a_placeholder_i():
    import jax

    x = jax.numpy.ones(2)
    with pytest.raises(TypeError) as raised:
        jax.jit(lambda a, *rest: a)(x, x, "s")  # JAX's path: rest[1]
    call = (lambda a, *rest: a, (x, x, "s"), {})
    assert hint_for(raised.value, call).endswith("make it static: mode.static_argnums=[2]")
    assert hint_for(raised.value).endswith(
        "make it static: mode.static_argnums=[<position of rest>] (mode.static_argnames=[rest] if passed by keyword)"
    )


# ---- item 4: a setup's own param needs a leading + ----


def test_an_undeclared_setup_param_shows_the_override_to_type():
    argv = ["workload=custom", "workload.fn=hlcode.fn", "workload.setup=hlcode.make_pos"]
    with pytest.raises(ConfigError) as raised:
        preflight.check([*argv, "workload.params.depth=8"])
    assert str(raised.value) == (
        "workload.params.depth='8' is invalid; no such key; workload.params has none; "
        "a new param needs a leading +: +workload.params.depth=8"
    )
    (job,) = preflight.check([*argv, "+workload.params.depth=8"])  # what the line says to type is accepted
    assert job.workload.params == {"depth": 8}


# ---- item 5: labels say what built the inputs ----


def test_measure_labels_rows_by_their_arguments_not_an_element_count():
    def loss(params, x, y):
        return ((x @ params["w"] - y) ** 2).sum()

    params, x, y = {"w": np.ones((4, 1), np.float32)}, np.ones((16, 4), np.float32), np.zeros((16, 1), np.float32)
    measured = jitexp.measure(loss, params, x, y, modes="jit", timing="quick", isolate="none")
    row = measured.row("jit")
    assert (row["inputs"], row["input_shapes"], row["size"]) == ("given", "f32[16,4] f32[16,1] +params", 64)
    assert repr(measured).startswith("test_measure_labels_rows_by_their_arguments_not_an_element_count.<locals>"
                                     ".loss f32[16,4] f32[16,1] +params float32 cpu: jit ")  # fmt: skip
    named = jitexp.measure(loss, params, x, y, modes="jit", timing="quick", isolate="none", size=7, name="loss")
    assert repr(named).startswith("loss size=7 float32 cpu: jit ") and named.row("jit")["inputs"] == "size"


def test_how_a_job_built_its_inputs_follows_the_setups_signature_as_the_worker_found_it():
    import hlcode

    assert inputs_kind(None) == "size"  # args specs in terms of ${size}
    assert inputs_kind(SETUP_LABEL) == "given"
    assert setup_kind(hlcode.make_kw) == "size"  # a setup taking size, as docs/howto/models.md's mymodel.init
    assert setup_kind(hlcode.make_pos) == "setup"  # size reaches it only through **kw: it ignores it
    assert inputs_kind("hlcode.make_pos", reported="setup") == "setup"
    assert inputs_kind("hlcode.make_pos") == "size"  # no worker imported it (it failed first): the size, as before
    assert run(compose([*QUICK, "workload.setup=hlcode.make_pos", "mode.static_argnums=[1]"])).row["inputs"] == "setup"
    assert run(compose([*QUICK, "workload.setup=hlcode.make_kw", "mode.static_argnames=[cfg]"])).row["inputs"] == "size"
