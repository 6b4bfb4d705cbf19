"""Model workloads on real libraries: pytree arguments built by setup functions, carried training state.

Each workload is a function and a setup (`fn:` and `setup:` in conf/workload/<name>.yaml). A setup
is called in the worker as `setup(size=..., dtype=..., seed=..., **params)` and returns the
positional arguments, built deterministically from `seed`, floating-point leaves in `dtype` (integer
labels stay int32). Plain arrays are drawn on the host by NumPy, as jitexp's array specs are: a
jax.random draw in eager mode compiles a program per shape, seconds of setup in a fresh worker;
equinox and flax modules use their libraries' own initialisers. The training steps return their
new state at the argument positions that `carry:` names, with the same tree structure, shapes and
dtypes, so a timed loop can feed them back.

Needs the `models` extra (`pip install "jitexp[models]"`: flax, optax, equinox); nothing else in
jitexp imports this module.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx
from jax import lax

Array = Any  # a jax.Array (or a tracer of one)
Params = list[dict[str, Array]]  # an MLP's layers, each {"w": in x out, "b": out}


def _dtype(dtype: str) -> jnp.dtype:
    """The job's dtype name as a JAX dtype."""
    return jnp.dtype(dtype)


def _normal(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, scale: float = 1.0) -> Array:
    """A standard normal draw times scale, made on the host and placed on the default device in dtype."""
    return jnp.asarray((rng.standard_normal(shape, np.float32) * scale).astype(_dtype(dtype)))


def _classification_batch(
    rng: np.random.Generator, batch: int, features: int, classes: int, dtype: str
) -> tuple[Array, Array]:
    """Inputs x (batch x features, in dtype) and integer labels y (batch, int32) in [0, classes)."""
    return _normal(rng, (batch, features), dtype), jnp.asarray(rng.integers(0, classes, batch, dtype=np.int32))


# --- mlp_train_step: a params-dict MLP and optax.adam -----------------------------------------------


@functools.cache
def adam(learning_rate: float) -> optax.GradientTransformation:
    """optax.adam(learning_rate), one per learning rate: the step reaches it without closing over arrays."""
    return optax.adam(learning_rate)


# remat policies of mlp_train_step's hidden layers: what the backward pass keeps from the forward (jax.checkpoint)
REMAT_POLICIES: dict[str, Any] = {
    "none": None,  # no jax.checkpoint: every activation kept
    "full": jax.checkpoint_policies.nothing_saveable,  # keep a layer's input only, recompute the rest
    "dots_saveable": jax.checkpoint_policies.dots_saveable,  # keep the matmul outputs, recompute bias and ReLU
}


def _hidden(h: Array, layer: dict[str, Array]) -> Array:
    return jax.nn.relu(h @ layer["w"] + layer["b"])


def remat_layer(remat: str) -> Any:
    """The hidden layer's function under the named remat policy (REMAT_POLICIES); ValueError names the choices."""
    if remat not in REMAT_POLICIES:
        raise ValueError(f"remat={remat!r} is not one of {', '.join(REMAT_POLICIES)}")
    policy = REMAT_POLICIES[remat]
    return _hidden if remat == "none" else jax.checkpoint(_hidden, policy=policy)


def mlp_apply(params: Params, x: Array, remat: str = "none") -> Array:
    """Logits of a ReLU MLP whose layers are {"w", "b"} dicts (no activation after the last layer)."""
    hidden = remat_layer(remat)
    h = x
    for layer in params[:-1]:
        h = hidden(h, layer)
    return h @ params[-1]["w"] + params[-1]["b"]


def mlp_loss(params: Params, batch: dict[str, Array], remat: str = "none") -> Array:
    """Mean softmax cross-entropy of the MLP's logits against the batch's integer labels."""
    logits = mlp_apply(params, batch["x"], remat)
    return optax.softmax_cross_entropy_with_integer_labels(logits, batch["y"]).mean()


def mlp_train_step(
    params: Params, opt_state: optax.OptState, batch: dict[str, Array], learning_rate: float, remat: str = "none"
) -> tuple[Params, optax.OptState, Array]:
    """One Adam step on an MLP: (params, opt_state, batch) -> (new params, new opt_state, loss).

    Shows a training step as users write it: params and optimizer state are arguments (traced,
    not baked into the program as constants) and come back as outputs 0 and 1 to be carried;
    the learning rate is a static Python float that picks the cached optax.adam, and remat a
    static name of the hidden layers' jax.checkpoint policy (REMAT_POLICIES).
    """
    tx = adam(learning_rate)
    loss, grads = jax.value_and_grad(mlp_loss)(params, batch, remat)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def init_mlp(rng: np.random.Generator, sizes: list[int], dtype: str) -> Params:
    """He-normal weights and zero biases for layers sizes[0] -> sizes[1] -> ... -> sizes[-1], in dtype."""
    return [
        {"w": _normal(rng, (n_in, n_out), dtype, math.sqrt(2.0 / n_in)), "b": jnp.zeros((n_out,), _dtype(dtype))}
        for n_in, n_out in zip(sizes[:-1], sizes[1:])
    ]


def setup_mlp_train_step(
    size: int,
    dtype: str,
    seed: int,
    batch: int,
    features: int,
    depth: int,
    classes: int,
    learning_rate: float,
    remat: str = "none",
) -> tuple[Params, optax.OptState, dict[str, Array], float, str]:
    """(params, adam state, {"x", "y"}, learning_rate, remat): `depth` hidden layers of width `size`."""
    remat_layer(remat)  # a remat outside REMAT_POLICIES fails here, in setup, naming the choices
    rng = np.random.default_rng(seed)
    params = init_mlp(rng, [features, *[size] * depth, classes], dtype)
    x, y = _classification_batch(rng, batch, features, classes, dtype)
    return params, adam(float(learning_rate)).init(params), {"x": x, "y": y}, float(learning_rate), remat


# --- eqx_mlp_grad: an equinox.nn.MLP's loss and gradient ----------------------------------------------


def eqx_loss(model: eqx.nn.MLP, x: Array, y: Array) -> Array:
    """Mean softmax cross-entropy of an equinox MLP (vmapped over the batch) against integer labels."""
    logits = jax.vmap(model)(x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


def eqx_mlp_grad(model: eqx.nn.MLP, x: Array, y: Array) -> tuple[Array, eqx.nn.MLP]:
    """The loss and its gradient with respect to the model's arrays, by eqx.filter_value_and_grad.

    Shows a module argument with non-array leaves (its activation functions): plain jax.jit
    rejects it, equinox.filter_jit traces the arrays and holds the rest static.
    """
    return eqx.filter_value_and_grad(eqx_loss)(model, x, y)


def setup_eqx_mlp_grad(
    size: int, dtype: str, seed: int, batch: int, features: int, depth: int, classes: int
) -> tuple[eqx.nn.MLP, Array, Array]:
    """(model, x, y): an equinox.nn.MLP of `depth` hidden layers of width `size`, in dtype."""
    model = eqx.nn.MLP(features, classes, size, depth, dtype=_dtype(dtype), key=jax.random.key(seed))
    return (model, *_classification_batch(np.random.default_rng(seed), batch, features, classes, dtype))


# --- nnx_train_step: a flax.nnx model and optimizer, updated in place ------------------------------------


class TwoLayerMLP(nnx.Module):
    """features -> hidden (ReLU) -> classes, two nnx.Linear layers with params and activations in dtype."""

    def __init__(self, features: int, hidden: int, classes: int, dtype: str, rngs: nnx.Rngs):
        self.hidden = nnx.Linear(features, hidden, dtype=_dtype(dtype), param_dtype=_dtype(dtype), rngs=rngs)
        self.out = nnx.Linear(hidden, classes, dtype=_dtype(dtype), param_dtype=_dtype(dtype), rngs=rngs)

    def __call__(self, x: Array) -> Array:
        return self.out(jax.nn.relu(self.hidden(x)))


def nnx_loss(model: TwoLayerMLP, x: Array, y: Array) -> Array:
    """Mean softmax cross-entropy of the nnx model's logits against integer labels."""
    return optax.softmax_cross_entropy_with_integer_labels(model(x), y).mean()


def nnx_train_step(model: TwoLayerMLP, optimizer: nnx.Optimizer, x: Array, y: Array) -> Array:
    """One Adam step in flax.nnx style: updates model and optimizer in place, returns the loss.

    Shows nnx's stateful objects under nnx.jit, which carries their new state out of the
    compiled program and back into the Python objects; eager calls mutate them the same way.
    """
    loss, grads = nnx.value_and_grad(nnx_loss)(model, x, y)
    optimizer.update(model, grads)
    return loss


def setup_nnx_train_step(
    size: int, dtype: str, seed: int, batch: int, features: int, classes: int, learning_rate: float
) -> tuple[TwoLayerMLP, nnx.Optimizer, Array, Array]:
    """(model, nnx.Optimizer(model, optax.adam, wrt=nnx.Param), x, y): hidden width `size`."""
    model = TwoLayerMLP(features, size, classes, dtype, nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.adam(float(learning_rate)), wrt=nnx.Param)
    x, y = _classification_batch(np.random.default_rng(seed), batch, features, classes, dtype)
    return model, optimizer, x, y


# --- transformer_block: pre-LN attention and MLP in plain JAX -----------------------------------------------


def layer_norm(x: Array, scale: Array, bias: Array, eps: float = 1e-5) -> Array:
    """Layer norm over the last axis with a learned scale and bias."""
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + eps) * scale + bias


def self_attention(p: dict[str, Array], x: Array) -> Array:
    """Multi-head self-attention (no mask); heads and head size come from wq's shape (d_model x heads x head_dim)."""
    q = jnp.einsum("bsd,dhk->bhsk", x, p["wq"])
    k = jnp.einsum("bsd,dhk->bhsk", x, p["wk"])
    v = jnp.einsum("bsd,dhk->bhsk", x, p["wv"])
    scores = jnp.einsum("bhqk,bhsk->bhqs", q, k) / jnp.sqrt(jnp.asarray(q.shape[-1], x.dtype))
    heads = jnp.einsum("bhqs,bhsk->bqhk", jax.nn.softmax(scores, axis=-1), v)
    return jnp.einsum("bqhk,hkd->bqd", heads, p["wo"])


def transformer_block(params: dict[str, Any], x: Array) -> Array:
    """A pre-LN transformer block on batch x seq x d_model: x + attn(ln(x)), then h + mlp(ln(h)) with gelu.

    Shows a real model's forward pass with a params pytree: jit fuses the layer norms, the
    softmax, the gelu and the residual adds around the matmuls that eager runs one by one.
    """
    h = x + self_attention(params["attn"], layer_norm(x, **params["ln1"]))
    m = params["mlp"]
    u = jax.nn.gelu(layer_norm(h, **params["ln2"]) @ m["w1"] + m["b1"])
    return h + u @ m["w2"] + m["b2"]


def setup_transformer_block(
    size: int, dtype: str, seed: int, batch: int, d_model: int, heads: int, mlp_ratio: int
) -> tuple[dict[str, Any], Array]:
    """(params, x): x is batch x size (sequence length) x d_model; weights scaled by 1/sqrt(fan_in)."""
    if d_model % heads:
        raise ValueError(f"d_model={d_model} is not a multiple of heads={heads}")
    dt, head_dim, hidden = _dtype(dtype), d_model // heads, d_model * mlp_ratio
    rng = np.random.default_rng(seed)

    def dense(shape: tuple[int, ...], fan_in: int) -> Array:
        return _normal(rng, shape, dtype, 1 / math.sqrt(fan_in))

    def norm() -> dict[str, Array]:
        return {"scale": jnp.ones((d_model,), dt), "bias": jnp.zeros((d_model,), dt)}

    params = {
        "ln1": norm(),
        "attn": {
            "wq": dense((d_model, heads, head_dim), d_model),
            "wk": dense((d_model, heads, head_dim), d_model),
            "wv": dense((d_model, heads, head_dim), d_model),
            "wo": dense((heads, head_dim, d_model), d_model),
        },
        "ln2": norm(),
        "mlp": {
            "w1": dense((d_model, hidden), d_model),
            "b1": jnp.zeros((hidden,), dt),
            "w2": dense((hidden, d_model), hidden),
            "b2": jnp.zeros((d_model,), dt),
        },
    }
    return params, _normal(rng, (batch, size, d_model), dtype)


# --- rng_dropout: a typed PRNG key, split and carried ---------------------------------------------------------


def rng_dropout(key: Array, x: Array, rate: Array) -> tuple[Array, Array]:
    """Dropout of x with a traced `rate`, from a typed PRNG key that is split: returns (next key, y).

    Shows PRNG state as data: the key is an argument and the advanced key an output (carried,
    so each call draws a new mask), and one executable serves every rate (rate is traced).
    """
    key, sub = jax.random.split(key)
    keep = jax.random.bernoulli(sub, 1.0 - rate, x.shape)
    return key, jnp.where(keep, x / (1.0 - rate), jnp.zeros_like(x))


def setup_rng_dropout(size: int, dtype: str, seed: int, batch: int, rate: float) -> tuple[Array, Array, Array]:
    """(jax.random.key(seed), x of batch x size in dtype, rate as a dtype scalar)."""
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"rate={rate} is not in [0, 1)")
    x = _normal(np.random.default_rng(seed), (batch, size), dtype)
    return jax.random.key(seed), x, jnp.asarray(rate, _dtype(dtype))


__all__ = [
    "adam",
    "REMAT_POLICIES",
    "remat_layer",
    "mlp_apply",
    "mlp_loss",
    "mlp_train_step",
    "init_mlp",
    "setup_mlp_train_step",
    "eqx_loss",
    "eqx_mlp_grad",
    "setup_eqx_mlp_grad",
    "TwoLayerMLP",
    "nnx_loss",
    "nnx_train_step",
    "setup_nnx_train_step",
    "layer_norm",
    "self_attention",
    "transformer_block",
    "setup_transformer_block",
    "rng_dropout",
    "setup_rng_dropout",
]
