"""The model workloads (jitexp.workloads.models) called directly, as their YAMLs name them: setups, carry, jit wrappers, twins.

Needs the models extra (flax, optax, equinox); skipped without it. Each test imports the workload's
fn/setup/jit_fn from conf/workload/<name>.yaml and calls them itself, at tiny sizes; the models_scan preset's
jobs run in this process (isolate=none), and one of them through the installed command in tests/e2e.
"""

from __future__ import annotations

import inspect
import warnings
from functools import cache
from importlib import resources

import pytest

pytest.importorskip("flax")
pytest.importorskip("optax")
pytest.importorskip("equinox")

import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402
from flax import nnx  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

from jitexp import compose, run  # noqa: E402
from jitexp.config import import_fn  # noqa: E402
from jitexp.worker.checks import output_error  # noqa: E402
from jitexp.worker.payload import pack, unpack  # noqa: E402
from jitexp.worker.workload import Workload  # noqa: E402
from jitexp.workloads import models  # noqa: E402

MODELS = ["mlp_train_step", "eqx_mlp_grad", "nnx_train_step", "transformer_block", "rng_dropout"]
CARRIED = ["mlp_train_step", "rng_dropout"]
SIZE = 8


@cache
def spec(name: str) -> dict:
    """conf/workload/<name>.yaml as a plain dict (loaded with OmegaConf, not composed by the engine)."""
    path = resources.files("jitexp.conf").joinpath("workload", f"{name}.yaml")
    return OmegaConf.to_container(OmegaConf.load(str(path)), resolve=True)


def build(name: str, size: int = SIZE, dtype: str = "float32", seed: int = 0, **params) -> tuple:
    """The workload's arguments, from its setup called as the engine calls it (size, dtype, seed, params)."""
    s = spec(name)
    return import_fn(s["setup"])(size=size, dtype=dtype, seed=seed, **{**s["params"], **params})


def abstract(name: str, dtype: str) -> tuple:
    """The shapes and dtypes setup would return (eqx.filter_eval_shape: traced, nothing compiled or run)."""
    s = spec(name)
    return eqx.filter_eval_shape(import_fn(s["setup"]), size=SIZE, dtype=dtype, seed=0, **s["params"])


def jitted(name: str, **options):
    """The workload's fn under its jit_fn; static_argnums passed only when there are some (filter_jit refuses it)."""
    s = spec(name)
    jit_fn = import_fn(s.get("jit_fn") or "jax.jit")
    if s["static_argnums"]:
        options["static_argnums"] = s["static_argnums"]
    return jit_fn(import_fn(s["fn"]), **options)


def avals(tree) -> object:
    """The tree with every leaf replaced by its shape and dtype (a typed key keeps its key dtype)."""
    return jax.tree.map(lambda leaf: jax.ShapeDtypeStruct(jnp.shape(leaf), leaf.dtype), tree)


def arrays(tree) -> list:
    """The tree's array leaves (an equinox module's activation functions and static floats left out)."""
    return [leaf for leaf in jax.tree.leaves(tree) if isinstance(leaf, jax.Array)]


def leaves_equal(a, b) -> bool:
    """Whether two trees have equal array leaves, in order (typed keys compared by their key data)."""
    unwrap = lambda x: jax.random.key_data(x) if jnp.issubdtype(x.dtype, jax.dtypes.prng_key) else x  # noqa: E731
    la, lb = arrays(a), arrays(b)
    return len(la) == len(lb) and all(
        np.array_equal(np.asarray(unwrap(x)), np.asarray(unwrap(y))) for x, y in zip(la, lb)
    )


def kernel(model: models.TwoLayerMLP) -> np.ndarray:
    """A host copy of the nnx model's first weight matrix."""
    return np.array(model.hidden.kernel[...])


# --- the YAMLs and the setups ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", MODELS)
def test_yaml_names_importable_code_and_setup_takes_its_params(name):
    s = spec(name)
    assert s["name"] == name and s["description"] and "\n" not in s["description"]
    assert s["fn"] == f"jitexp.workloads.models.{name}" and s["setup"] == f"jitexp.workloads.models.setup_{name}"
    for key in ("fn", "setup", "jit_fn", "numpy_fn"):
        if s.get(key):
            assert callable(import_fn(s[key], f"workload.{key}"))
    # the engine's call: size, dtype, seed and every param as keywords; no **kw, so a misspelled param is refused
    inspect.signature(import_fn(s["setup"])).bind(size=1, dtype="float32", seed=0, **s["params"])
    assert set(s["checks"]) <= set(s["params"])
    for out, arg in s.get("carry", {}).items():
        assert isinstance(out, int) and isinstance(arg, int)


def test_setups_return_the_documented_structure():
    p = spec("mlp_train_step")["params"]  # the YAML's own params, so later tests reuse the compiled random ops
    params, opt_state, batch, lr, remat = build("mlp_train_step")
    widths = [p["features"], *[SIZE] * p["depth"], p["classes"]]
    assert [{k: v.shape for k, v in layer.items()} for layer in params] == [
        {"w": (n_in, n_out), "b": (n_out,)} for n_in, n_out in zip(widths, widths[1:])
    ]
    assert isinstance(opt_state[0], optax.ScaleByAdamState) and avals(opt_state[0].mu) == avals(params)
    assert (batch["x"].shape, batch["x"].dtype, batch["y"].shape, batch["y"].dtype) == (
        (p["batch"], p["features"]),
        jnp.float32,
        (p["batch"],),
        jnp.int32,
    )
    assert lr == p["learning_rate"] and isinstance(lr, float) and remat == p["remat"] == "none"

    p = spec("eqx_mlp_grad")["params"]
    model, x, y = build("eqx_mlp_grad")
    assert isinstance(model, eqx.nn.MLP)
    assert (model.in_size, model.width_size, model.depth, model.out_size) == (
        p["features"],
        SIZE,
        p["depth"],
        p["classes"],
    )
    assert (x.shape, y.shape, y.dtype) == ((p["batch"], p["features"]), (p["batch"],), jnp.int32)

    p = spec("nnx_train_step")["params"]
    model, optimizer, x, y = build("nnx_train_step")
    assert isinstance(model, models.TwoLayerMLP) and isinstance(optimizer, nnx.Optimizer)
    assert (model.hidden.kernel.shape, model.out.kernel.shape, x.shape, y.dtype) == (
        (p["features"], SIZE),
        (SIZE, p["classes"]),
        (p["batch"], p["features"]),
        jnp.int32,
    )
    assert int(optimizer.step[...]) == 0

    p = spec("transformer_block")["params"]
    d, h, f = p["d_model"], p["heads"], p["d_model"] * p["mlp_ratio"]
    params, x = build("transformer_block")
    norm = {"scale": (d,), "bias": (d,)}
    assert jax.tree.map(jnp.shape, params) == {
        "ln1": norm,
        "attn": {"wq": (d, h, d // h), "wk": (d, h, d // h), "wv": (d, h, d // h), "wo": (h, d // h, d)},
        "ln2": norm,
        "mlp": {"w1": (d, f), "b1": (f,), "w2": (f, d), "b2": (d,)},
    }
    assert x.shape == (p["batch"], SIZE, d)
    with pytest.raises(ValueError, match="multiple of heads"):
        build("transformer_block", d_model=10, heads=3)

    p = spec("rng_dropout")["params"]
    key, x, rate = build("rng_dropout")
    assert str(key.dtype) == "key<fry>" and key.shape == ()  # a typed key, not a legacy uint32[2]
    assert (x.shape, rate.shape, rate.dtype) == ((p["batch"], SIZE), (), jnp.float32)
    assert float(rate) == pytest.approx(p["rate"])


@pytest.mark.parametrize("name", MODELS)
def test_setup_is_deterministic_in_seed_and_builds_floats_in_dtype(name):
    first, again, other = build(name), build(name), build(name, seed=1)
    assert leaves_equal(first, again) and not leaves_equal(first, other)
    leaves = [leaf for leaf in jax.tree.leaves(abstract(name, "bfloat16")) if isinstance(leaf, jax.ShapeDtypeStruct)]
    floats = [leaf for leaf in leaves if jnp.issubdtype(leaf.dtype, jnp.floating)]
    assert len(leaves) == len(arrays(first)) and floats and all(leaf.dtype == jnp.bfloat16 for leaf in floats)
    assert all(
        jnp.issubdtype(leaf.dtype, jnp.integer)
        or jnp.issubdtype(leaf.dtype, jax.dtypes.prng_key)
        or leaf.dtype == jnp.bfloat16
        for leaf in leaves
    )


# --- carry ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", CARRIED)
def test_carried_outputs_have_the_structure_shapes_and_dtypes_of_their_arguments(name):
    args, carry = build(name), spec(name)["carry"]
    eager, jit = (step(*args) for step in (import_fn(spec(name)["fn"]), jitted(name)))
    for out in (eager, jit):
        for o, a in carry.items():
            assert avals(out[o]) == avals(args[a]), (name, o, a)
    assert output_error(jit, eager, "float32")["matches_eager"] is True  # the worker's check
    # bfloat16 traced only (no compile): Adam's state and the new params must stay in bfloat16
    args = abstract(name, "bfloat16")
    out = jitted(name).trace(*args).out_info
    for o, a in carry.items():
        assert out[o] == args[a], (name, o, a)


@pytest.mark.parametrize("name", CARRIED)
def test_five_carried_jit_calls_each_use_the_previous_outputs(name):
    args = list(build(name))
    carry, step = spec(name)["carry"], jitted(name)
    firsts = []
    for _ in range(5):
        out = step(*args)
        firsts.append(out)
        for o, a in carry.items():
            args[a] = out[o]
    if name == "mlp_train_step":
        losses = [float(out[2]) for out in firsts]
        assert all(b < a for a, b in zip(losses, losses[1:])), losses
    else:  # the key advances, so every call draws a new mask
        masks = [np.asarray(out[1] == 0) for out in firsts]
        assert all(not np.array_equal(a, b) for a, b in zip(masks, masks[1:]))


@pytest.mark.parametrize("name", CARRIED)
def test_donating_the_carried_arguments_works_and_consumes_them(name):
    args = list(build(name))
    donated = spec(name)["donate_argnums"]
    assert sorted(donated) == sorted(spec(name)["carry"].values())
    step = jitted(name, donate_argnums=donated)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Some donated buffers were not usable" would fail here
        for _ in range(3):
            before = [args[a] for a in donated]
            out = step(*args)
            assert all(leaf.is_deleted() for leaf in jax.tree.leaves(before))
            for o, a in spec(name)["carry"].items():
                args[a] = out[o]


def test_a_remat_policy_changes_the_program_jax_hands_xla_not_the_step():
    # mlp_train_step's remat param (searched by conf/experiment/tune_mlp.yaml): the same loss and new params under
    # every policy; full recomputes the hidden layers' matmuls in the backward pass, so its program has more dots
    steps, dots = {}, {}
    for remat in models.REMAT_POLICIES:
        args = build("mlp_train_step", remat=remat)
        assert args[4] == remat
        steps[remat] = jitted("mlp_train_step")(*args)
        dots[remat] = jitted("mlp_train_step").lower(*args).as_text().count("dot_general")
    for remat, (params, _, loss) in steps.items():
        np.testing.assert_allclose(float(loss), float(steps["none"][2]), rtol=1e-5)
        for got, want in zip(jax.tree.leaves(params), jax.tree.leaves(steps["none"][0])):
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-6, err_msg=remat)
    assert dots["full"] > dots["none"]
    with pytest.raises(ValueError, match="remat='some' is not one of none, full, dots_saveable"):
        build("mlp_train_step", remat="some")


# --- the jit wrappers -------------------------------------------------------------------------------------


def test_mlp_train_step_is_an_honest_program_params_and_state_are_arguments_not_constants():
    args = build("mlp_train_step")
    compiled = jitted("mlp_train_step").lower(*args).compile()
    n_bytes = sum(leaf.nbytes for leaf in jax.tree.leaves(args[:3]))
    assert compiled.memory_analysis().argument_size_in_bytes >= n_bytes


@pytest.mark.parametrize("name", MODELS)
def test_every_model_compiles_ahead_of_time_and_agrees_with_jit(name):
    s = spec(name)
    args = build(name)
    compiled = jitted(name).lower(*args).compile()
    # a jax.jit Compiled takes the traced arguments only; filter_jit's and nnx.jit's take them all, objects included
    plain = (s.get("jit_fn") or "jax.jit") == "jax.jit"
    got = compiled(*[a for i, a in enumerate(args) if not (plain and i in s["static_argnums"])])
    assert leaves_equal(got, jitted(name)(*build(name)))  # on fresh arguments: nnx's step mutates its own


def test_eqx_module_fails_under_plain_jax_jit_and_works_under_filter_jit():
    model, x, y = build("eqx_mlp_grad")
    with pytest.raises(TypeError, match="abstract array"):
        jax.jit(models.eqx_mlp_grad)(model, x, y)
    loss, grads = eqx.filter_jit(models.eqx_mlp_grad)(model, x, y)
    eager_loss, eager_grads = models.eqx_mlp_grad(model, x, y)
    assert float(loss) == pytest.approx(float(eager_loss), rel=1e-5)
    for g, e in zip(jax.tree.leaves(grads), jax.tree.leaves(eager_grads)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-4, atol=1e-6)
    assert avals(eqx.filter(grads, eqx.is_array)) == avals(eqx.filter(model, eqx.is_array))
    # aot: filter_jit has .lower; its Compiled is called with the full arguments, module included
    compiled = eqx.filter_jit(models.eqx_mlp_grad).lower(model, x, y).compile()
    assert float(compiled(model, x, y)[0]) == pytest.approx(float(loss), rel=1e-6)
    # jitexp's worker wraps it as the YAML says: filter_jit refuses static_argnums / donate_argnums even empty, so
    # Workload.jitted passes only the options a job sets, and aot calls equinox's Compiled with every argument
    w = Workload(
        "eqx_mlp_grad",
        models.eqx_mlp_grad,
        (model, x, y),
        static_argnums=(),
        jit_fn=import_fn(spec("eqx_mlp_grad")["jit_fn"]),
    )
    assert float(w.jitted()(model, x, y)[0]) == pytest.approx(float(loss), rel=1e-6)
    assert w.aot_inputs() == ((model, x, y), {})


def test_nnx_step_under_nnx_jit_trains_the_model_in_place():
    model, optimizer, x, y = build("nnx_train_step", learning_rate=0.01)
    step = jitted("nnx_train_step")
    w0 = kernel(model)
    losses = [float(step(model, optimizer, x, y)) for _ in range(5)]
    assert not np.array_equal(kernel(model), w0) and int(optimizer.step[...]) == 5
    assert all(b < a for a, b in zip(losses, losses[1:])), losses


def test_nnx_eager_calls_mutate_the_model_and_plain_jax_jit_drops_the_update():
    model, optimizer, x, y = build("nnx_train_step")
    w0 = kernel(model)
    models.nnx_train_step(model, optimizer, x, y)  # eager: a real nnx loop's call, it advances the model
    w1 = kernel(model)
    assert not np.array_equal(w1, w0) and int(optimizer.step[...]) == 1
    jax.jit(models.nnx_train_step)(model, optimizer, x, y)  # runs, but on copies: the update is lost
    assert np.array_equal(kernel(model), w1) and int(optimizer.step[...]) == 1


def test_nnx_jit_lowers_and_its_compiled_step_also_updates_the_model():
    model, optimizer, x, y = build("nnx_train_step")
    compiled = nnx.jit(models.nnx_train_step).lower(model, optimizer, x, y).compile()
    w0 = kernel(model)
    loss = compiled(model, optimizer, x, y)  # the full arguments, objects included
    assert jnp.shape(loss) == () and not np.array_equal(kernel(model), w0) and int(optimizer.step[...]) == 1


def test_nnx_jit_donating_model_and_optimizer_keeps_training():
    model, optimizer, x, y = build("nnx_train_step")
    step = jitted("nnx_train_step", donate_argnums=spec("nnx_train_step")["donate_argnums"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        old = model.hidden.kernel[...]
        losses = [float(step(model, optimizer, x, y)) for _ in range(3)]
    assert old.is_deleted() and not model.hidden.kernel[...].is_deleted() and losses[-1] < losses[0]


# --- transformer_block and its twin ----------------------------------------------------------------------------


def test_transformer_block_twin_matches_jax_in_float32():
    params, x = build("transformer_block")
    twin = import_fn(spec("transformer_block")["numpy_fn"])
    expected = twin(jax.tree.map(np.asarray, params), np.asarray(x))
    for fn in (models.transformer_block, jitted("transformer_block")):
        np.testing.assert_allclose(np.asarray(fn(params, x)), expected, rtol=1e-5, atol=1e-5)
    assert expected.shape == x.shape and expected.dtype == np.float32


# --- rng_dropout ---------------------------------------------------------------------------------------------------


def test_rng_dropout_is_deterministic_in_its_key_scales_the_kept_and_traces_the_rate():
    key, x, rate = build("rng_dropout", size=256, rate=0.25)
    step = jitted("rng_dropout")
    (k1, y1), (k2, y2) = step(key, x, rate), step(key, x, rate)
    assert leaves_equal(k1, k2) and np.array_equal(np.asarray(y1), np.asarray(y2))
    assert leaves_equal(models.rng_dropout(key, x, rate), (k1, y1))
    assert str(k1.dtype) == "key<fry>" and not leaves_equal(k1, key)
    kept = np.asarray(y1) != 0
    assert abs(kept.mean() - 0.75) < 0.03
    np.testing.assert_allclose(np.asarray(y1)[kept], np.asarray(x)[kept] / 0.75, rtol=1e-6)
    compiled = step._cache_size()  # jax.jit's cache is shared by every jit of rng_dropout: count what this call adds
    step(key, x, jnp.asarray(0.5, jnp.float32))
    assert step._cache_size() == compiled  # one executable serves every rate
    assert np.array_equal(np.asarray(step(key, x, jnp.zeros((), jnp.float32))[1]), np.asarray(x))


# --- jitexp.measure's trip to a worker (payload.pack / unpack) --------------------------------------------------


def test_every_models_arguments_reach_a_worker_through_jitexps_payload_unchanged():
    # what jitexp.measure(fn, *args) does with a model's arguments: packed (cloudpickled, arrays and typed keys as
    # host values) in the driver, unpacked and put on the device in the worker, afresh for each set of inputs
    device = jax.devices()[0]
    for name in MODELS:
        args = build(name)
        payload, _ = pack(import_fn(spec(name)["fn"]), args, {}, None, pickled=True)
        assert isinstance(payload.function, bytes) and isinstance(payload.arguments, bytes), name
        fn, jit_fn, inputs = unpack(payload, spec(name).get("jit_fn") or "jax.jit", device)
        first, second = inputs(), inputs()
        assert leaves_equal(first.args, args) and leaves_equal(second.args, args), name
        assert arrays(first.args)[0] is not arrays(second.args)[0], name  # fresh buffers for each set of inputs
        assert fn.__name__ == name and jit_fn is import_fn(spec(name).get("jit_fn") or "jax.jit"), name


SCAN = ["timing=quick", "isolate=none", "size=16", "mode=[jit,aot]", "mode.donate_argnums=null", "check=false"]


def test_the_models_scan_preset_sweeps_every_model_with_and_without_donation():
    preset = OmegaConf.load(str(resources.files("jitexp.conf").joinpath("experiment/models_scan.yaml")))
    params = preset.hydra.sweeper.params
    assert preset.hydra.mode == "MULTIRUN" and {"override /mode": ["eager", "jit", "aot"]} in list(preset.defaults)
    assert params.workload.split(",") == MODELS and str(params.size) == "16,64,256"
    assert params["mode.donate_argnums"] == "[],null"


@pytest.mark.parametrize("name", MODELS)
def test_models_scan_jobs_run_every_model_under_its_jit_fn_in_jit_and_aot_donating_what_it_declares(name):
    # the preset's donating job at one size, in this process, its compiled modes only: eager's hundreds of op
    # compiles are the cost of a job, and jit agrees with eager below (called directly); a whole job of the
    # preset, eager included, runs through the installed command in tests/e2e/test_models_scan.py
    rows = run(compose([*SCAN, f"workload={name}"])).rows
    assert [r["mode"] for r in rows] == ["jit", "aot"]
    assert all(r["status"] == "ok" for r in rows), [(r["mode"], r.get("error_message")) for r in rows]
    declared = spec(name).get("donate_argnums") or []
    for row in rows:
        assert row["jit_fn"] == (spec(name).get("jit_fn") or "jax.jit")
        assert row["eager_ops"] > 0 and "attribution_error" not in row  # what the explanation reads
        assert (row["donate_argnums"] != "[]") == bool(declared), row["donate_argnums"]
        if spec(name).get("carry"):
            assert ("argument(s) " + str(sorted(declared)) + " donated") in row["donation"], row["donation"]


def test_nnx_train_step_under_nnx_jit_matches_eager_by_the_workers_check():
    # the other models' jit is checked against eager in the carry, equinox, transformer and dropout tests
    eager = models.nnx_train_step(*build("nnx_train_step"))  # fresh arguments each call: the step mutates its own
    assert output_error(jitted("nnx_train_step")(*build("nnx_train_step")), eager, "float32")["matches_eager"] is True
