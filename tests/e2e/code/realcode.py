"""Six kinds of real JAX code, written as a user writes them from the how-to guides (issue 23): nothing here is
shaped for jitexp beyond the setup functions' keyword signature."""

import dataclasses
import os

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax
from flax.training import train_state

import jitexp


# 1. a flax.linen CNN train step on a TrainState
class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Conv(4, (3, 3))(x))
        return nn.Dense(10)(x.reshape((x.shape[0], -1)))


def init_cnn(seed=0, batch=4, **kw):
    model = CNN()
    x = jax.random.normal(jax.random.key(seed + 1), (batch, 8, 8, 1))
    if os.environ.get("SETUP_LOG"):  # lets a test count how often setup builds (eval_shape traces it: abstract)
        with open(os.environ["SETUP_LOG"], "a") as log:
            log.write(f"{os.getpid()} {'abstract' if isinstance(x, jax.core.Tracer) else 'concrete'}\n")
    params = model.init(jax.random.key(seed), x)["params"]
    state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.adam(1e-3))
    return state, x, jnp.arange(batch) % 10


def train_step(state, x, y):
    def loss_fn(params):
        logits = state.apply_fn({"params": params}, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


# 2. per-example gradients with vmap(grad)
def linear_loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


def per_example_grads(w, xs, ys):
    return jax.vmap(jax.grad(linear_loss), in_axes=(None, 0, 0))(w, xs, ys)


def init_linear(size, dtype, seed, batch=8, **kw):
    keys = jax.random.split(jax.random.key(seed), 3)
    w = jax.random.normal(keys[0], (size,), dtype)
    return w, jax.random.normal(keys[1], (batch, 2, size), dtype), jax.random.normal(keys[2], (batch, 2), dtype)


# 3. a lax.scan RNN against a Python-loop RNN
def init_rnn(size, dtype, seed, steps=6, **kw):
    keys = jax.random.split(jax.random.key(seed), 2)
    return jax.random.normal(keys[0], (size, size), dtype) / size**0.5, jax.random.normal(keys[1], (steps, size), dtype)


def rnn_scan(w, xs):
    def cell(h, x):
        h = jnp.tanh(w @ h + x)
        return h, h

    return jax.lax.scan(cell, jnp.zeros_like(xs[0]), xs)[0]


def rnn_loop(w, xs):
    h = jnp.zeros_like(xs[0])
    for x in xs:
        h = jnp.tanh(w @ h + x)
    return h


# 4. a frozen dataclass as a static keyword
@dataclasses.dataclass(frozen=True)
class LayerConfig:
    activation: str = "tanh"
    scale: float = 0.5


def layer(x, cfg):
    act = jnp.tanh if cfg.activation == "tanh" else jax.nn.relu
    return act(x * cfg.scale)


def init_layer(size, dtype, seed, **kw):
    return jitexp.Inputs(args=(jax.random.normal(jax.random.key(seed), (size,), dtype),), kwargs={"cfg": LayerConfig()})


# 5. remat against no remat (and float32 against bfloat16 as a dtype variant)
def mlp_loss(params, x):
    for w in params:
        x = jnp.tanh(x @ w)
    return jnp.mean(x**2)


def mlp_grad(params, x):
    return jax.grad(mlp_loss)(params, x)


def mlp_grad_remat(params, x):
    return jax.grad(jax.checkpoint(mlp_loss))(params, x)


def init_mlp(size, dtype, seed, depth=3, **kw):
    keys = jax.random.split(jax.random.key(seed), depth + 1)
    params = [jax.random.normal(k, (size, size), dtype) / size**0.5 for k in keys[:depth]]
    return params, jax.random.normal(keys[-1], (4, size), dtype)


# the check against eager: a real mismatch, and an output that cannot be compared
def jit_differs(x):
    """jnp.sin under jit, its value plus 1 when eager (a Python-side flag jit does not see: isinstance)."""
    return jnp.sin(x) + (0.0 if isinstance(x, jax.core.Tracer) else 1.0)


def jit_other_tree(x):
    """A dict under jit, a tuple when eager: no leaf-for-leaf comparison exists."""
    return {"y": jnp.sin(x)} if isinstance(x, jax.core.Tracer) else (jnp.sin(x),)
