"""A flax.linen CNN train step on a TrainState, for benchmarks/accuracy.py (two convs and a dense layer, SGD + momentum).

TrainState.create leaves `step` a Python int while the jitted step returns it as an int32 array;
setup makes it an array first so the state can be carried as it is.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax.training import train_state


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.relu(nn.Conv(16, (3, 3))(x))
        x = nn.avg_pool(x, (2, 2), (2, 2))
        x = nn.relu(nn.Conv(32, (3, 3))(x))
        x = nn.avg_pool(x, (2, 2), (2, 2))
        return nn.Dense(10)(x.reshape(x.shape[0], -1))


def cnn_step(state: train_state.TrainState, x: jax.Array, y: jax.Array):
    """One SGD-with-momentum step: (state, batch) -> (new state, loss)."""

    def loss_fn(params):
        logits = state.apply_fn({"params": params}, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


def setup_cnn(size: int, dtype: str, seed: int, **_: object):
    """(state, x, y): a batch of `size` 28x28x1 images and their labels."""
    rng = np.random.default_rng(seed)
    x = jnp.asarray(rng.standard_normal((size, 28, 28, 1), dtype=np.float32))
    y = jnp.asarray(rng.integers(0, 10, size=(size,)), dtype=jnp.int32)
    model = CNN()
    params = model.init(jax.random.key(seed), x)["params"]
    state = train_state.TrainState.create(apply_fn=model.apply, params=params, tx=optax.sgd(0.01, momentum=0.9))
    return state.replace(step=jnp.asarray(state.step, jnp.int32)), x, y
