"""The built-in workload library: every workload runs (or fails as it should) under jit, and the NumPy twins agree.

Jobs run in this process (isolate=none); the worker process is tested in tests/e2e."""

from __future__ import annotations

from functools import cache
from importlib import resources

import jax
import numpy as np
import pytest

from jitexp import compose, run
from jitexp.config import import_fn
from jitexp.errors import hint_for, qualified_name
from jitexp.worker import workload
from jitexp.worker.checks import output_error as compare

QUICK = ["timing=quick", "size=8", "isolate=none"]


def builtins() -> list[str]:
    """Every built-in workload of the library (custom is a template; the models extra's are in test_models)."""
    folder = resources.files("jitexp.conf").joinpath("workload")
    return sorted(
        p.name[:-5]
        for p in folder.iterdir()
        if p.name.endswith(".yaml") and p.name != "custom.yaml" and "jitexp.workloads.models." not in p.read_text()
    )


# the built-ins that are meant to fail under jit: the exception and a word of its hint
FAILS_UNDER_JIT = {
    "conditional": ("jax.errors.TracerBoolConversionError", "lax.cond"),
    "while_cond": ("jax.errors.TracerBoolConversionError", "lax.cond"),
    "boolean_mask": ("jax.errors.NonConcreteBooleanIndexError", "jnp.where(mask, x, 0)"),
}


@cache
def config(name: str, *overrides: str):
    """The composed config of a workload at size 8 (composed once: Hydra takes ~0.2 s a compose)."""
    return compose([f"workload={name}", "size=8", *overrides])


def inputs(name: str, *overrides: str) -> tuple:
    """The config, the function, its device inputs and the twin's host inputs for a workload at size 8."""
    cfg = config(name, *overrides)
    args = workload.build_args(cfg, jax.devices("cpu")[0])
    return cfg, import_fn(cfg.workload.fn), args, workload.to_host(args)


def test_the_library_is_there():
    assert {
        "many_small_ops",
        "softmax",
        "attention",
        "mlp",
        "python_loop",
        "fori_loop",
        "scan",
        "grad_mlp",
        "vmap_matvec",
        "loop_matvec",
        "while_cond",
        "while_lax",
        "boolean_mask",
        "boolean_mask_where",
        "small_matmul",
    } <= set(builtins())
    for name in builtins():
        cfg = config(name)
        assert cfg.workload_name == name and cfg.workload.description and "\n" not in cfg.workload.description


@pytest.mark.parametrize("name", builtins())
def test_every_builtin_runs_in_eager_and_jit(name):
    # called as the worker calls it (its inputs, its jit options, its checks), without a job's timing: the job
    # itself runs below for a built-in that fails under jit, and for softmax in three modes
    cfg, fn, args, _ = inputs(name)
    eager = jax.block_until_ready(fn(*args))
    jitted = jax.jit(fn, static_argnums=cfg.static_argnums)
    if name in FAILS_UNDER_JIT:
        error_type, hint = FAILS_UNDER_JIT[name]
        with pytest.raises(Exception) as caught:
            jitted(*args)
        assert qualified_name(type(caught.value)) == error_type and hint in hint_for(caught.value)
    else:
        assert compare(jax.block_until_ready(jitted(*args)), eager, cfg.dtype)["matches_eager"] is True
        compiled = jitted._cache_size()
        jax.block_until_ready(jitted(*args))
        assert jitted._cache_size() == compiled  # the timed calls compile nothing


def test_a_builtin_failing_under_jit_is_an_error_row_with_its_hint():
    # one paired job, in this process: eager measured, jit an error row of the trace phase with the hint
    result = run(compose([*QUICK, "workload=conditional", "mode=[eager,jit]"]))
    eager, jit = result.by_mode("eager"), result.by_mode("jit")
    assert eager["status"] == "ok", eager
    error_type, hint = FAILS_UNDER_JIT["conditional"]
    assert (jit["status"], jit["error_phase"], jit["error_type"]) == ("error", "trace", error_type)
    assert hint in jit["hint"]


def reference(name: str, *overrides: str) -> tuple:
    """The JAX result (jitted; eager where jit must fail), the twin's result and the job dtype."""
    cfg, fn, args, host = inputs(name, *overrides)
    expected = fn(*args) if name in FAILS_UNDER_JIT else jax.jit(fn, static_argnums=cfg.static_argnums)(*args)
    return expected, import_fn(cfg.workload.numpy_fn)(*host), cfg.dtype


def test_every_builtin_has_a_twin_that_agrees_at_float32():
    assert all(config(name).workload.numpy_fn for name in builtins())
    for name in builtins():
        expected, got, _ = reference(name)
        assert jax.tree.structure(got) == jax.tree.structure(expected), name
        for g, e in zip(jax.tree.leaves(got), jax.tree.leaves(expected)):
            assert isinstance(g, (np.ndarray, np.generic)), (name, type(g))  # NumPy alone, no JAX array
            e = np.asarray(e, np.float64)
            scale = max(float(np.max(np.abs(e))), 1e-30)
            np.testing.assert_allclose(np.asarray(g, np.float64), e, rtol=0, atol=1e-5 * scale, err_msg=name)


@pytest.mark.parametrize("name", ["many_small_ops", "softmax", "attention", "mlp", "grad_mlp", "compute_heavy"])
def test_a_float32_twin_matches_a_bfloat16_result(name):
    expected, got, dtype = reference(name, "dtype=bfloat16")
    assert all(np.asarray(e).dtype == jax.numpy.bfloat16 for e in jax.tree.leaves(expected))
    assert all(np.asarray(g).dtype == np.float32 for g in jax.tree.leaves(got))
    assert compare(got, expected, dtype)["matches_eager"] is True  # the worker's own check (float64, bf16 tolerance)


def test_the_three_loops_compute_one_recurrence_and_differ_in_statics():
    outputs = []
    for name in ("python_loop", "fori_loop", "scan"):
        cfg, fn, args, _ = inputs(name, "workload.params.steps=5")
        outputs.append(np.asarray(jax.jit(fn, static_argnums=cfg.static_argnums)(*args)))
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-5)
    np.testing.assert_allclose(outputs[0], outputs[2], rtol=1e-5)
    assert [config(n).static_argnums for n in ("python_loop", "fori_loop", "scan")] == [(2,), (), (2,)]
    w, x = jax.numpy.ones((4, 4)), jax.numpy.ones(4)
    from jitexp.workloads import library

    eqns = [len(jax.make_jaxpr(library.python_loop, static_argnums=2)(w, x, n).eqns) for n in (2, 8)]
    assert eqns[1] > 3 * eqns[0]  # the Python loop unrolls into the trace
    assert len(jax.make_jaxpr(library.fori_loop)(w, x, 2).eqns) == len(jax.make_jaxpr(library.fori_loop)(w, x, 8).eqns)


def test_rnn_scan_unroll_reaches_the_scan_and_changes_the_program_not_the_result():
    # the knobs a tuning study searches (docs/howto/tune.md): batch shapes the inputs, unroll the scan
    outputs = []
    for unroll in (1, 4):
        cfg, fn, args, host = inputs("rnn_scan", f"workload.params.unroll={unroll}", "workload.params.batch=3")
        assert args[3].shape == (128, 3, 8) and args[4] == unroll and cfg.static_argnums == (4,)
        [eqn] = [e for e in jax.make_jaxpr(fn, static_argnums=4)(*args).eqns if e.primitive.name == "scan"]
        assert eqn.params["unroll"] == unroll
        outputs.append(np.asarray(jax.jit(fn, static_argnums=4)(*args)))
    assert outputs[0].shape == (3, 8)
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-5, atol=1e-6)
    assert not np.allclose(outputs[0], 0)  # a state that moved: tanh of real inputs, not the zeros it starts from


def test_mlp_depth_width_and_activation_shape_the_network():
    cfg, fn, args, host = inputs(
        "mlp", "workload.params.depth=3", "workload.params.width=16", "workload.params.activation=relu"
    )
    assert args[3].shape == (3, 16, 16) and args[4].shape == (3, 16) and args[-1] == "relu"
    probs = np.asarray(fn(*args))
    assert probs.shape == (64, 10)
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0, rtol=1e-5)
    outs = {act: np.asarray(fn(*args[:-1], act)) for act in ("relu", "gelu", "tanh")}
    assert not np.allclose(outs["relu"], outs["tanh"])
    with pytest.raises(ValueError, match="relu, gelu, tanh"):
        fn(*args[:-1], "swish")


def test_numpy_pairs_with_eager_and_jit_in_one_job_at_bfloat16():
    # eager, jit and the twin measured together; the float32 twin compares with bfloat16 results
    result = run(compose([*QUICK, "workload=softmax", "dtype=bfloat16", "mode=[eager,jit,numpy]"]))
    assert [r["mode"] for r in result.rows] == ["eager", "jit", "numpy"]
    assert all(r["status"] == "ok" for r in result.rows), result.rows
    assert result.by_mode("jit")["matches_eager"] is True and result.by_mode("jit")["compiles_during_timing"] == 0
    numpy_row = result.by_mode("numpy")
    assert numpy_row["matches_eager"] is True and numpy_row["compile_s"] == 0
    for mode in ("eager", "jit"):
        row = result.by_mode(mode)
        assert row["matches_numpy"] is True
        assert row["speedup_vs_numpy"] == pytest.approx(numpy_row["median_s"] / row["median_s"])


def test_a_traced_string_argument_says_to_make_it_static():
    # mlp's activation is a string; tracing it fails with a hint naming static_argnums
    row = run(compose([*QUICK, "workload=mlp", "mode=jit", "mode.static_argnums=[]"])).row
    assert (row["status"], row["error_phase"], row["error_type"]) == ("error", "trace", "TypeError")
    assert "as an abstract array" in row["error_message"]
    assert "mode.static_argnums=[7]" in row["hint"] and "(activation)" in row["hint"]


def test_library_scan_sweeps_every_jit_safe_builtin_in_three_modes():
    from omegaconf import OmegaConf

    preset = OmegaConf.create(resources.files("jitexp.conf").joinpath("experiment/library_scan.yaml").read_text())
    params = preset.hydra.sweeper.params
    assert preset.hydra.mode == "MULTIRUN"
    assert sorted(params.workload.split(",")) == sorted(set(builtins()) - set(FAILS_UNDER_JIT))
    assert [int(s) for s in str(params.size).split(",")] == [16, 64, 256]
    assert {"override /mode": ["eager", "jit", "numpy"]} in list(preset.defaults)
