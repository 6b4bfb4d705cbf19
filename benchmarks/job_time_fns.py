"""A user's small conv-net training step in plain JAX (two conv layers, a dense layer, one SGD step), for
benchmarks/job_time.py: the params and batch come from a setup function, as a user's own code would build them."""

from __future__ import annotations

import jax
import jax.numpy as jnp


def make(size: int = 64, dtype: str = "float32", seed: int = 0, **_: object) -> tuple:
    """(params, images, labels): a batch of `size` 32x32x3 images and 10 classes."""
    k = jax.random.split(jax.random.key(seed), 5)
    dt = jnp.dtype(dtype)
    params = {
        "c1": jax.random.normal(k[0], (3, 3, 3, 32), dt) * 0.1,
        "c2": jax.random.normal(k[1], (3, 3, 32, 64), dt) * 0.05,
        "w": jax.random.normal(k[2], (8 * 8 * 64, 10), dt) * 0.01,
    }
    images = jax.random.normal(k[3], (size, 32, 32, 3), dt)
    labels = jax.random.randint(k[4], (size,), 0, 10)
    return params, images, labels


def _conv(x: jax.Array, w: jax.Array) -> jax.Array:
    y = jax.lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.nn.relu(y)
    return jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def _loss(params: dict, images: jax.Array, labels: jax.Array) -> jax.Array:
    h = _conv(_conv(images, params["c1"]), params["c2"])
    logits = h.reshape(h.shape[0], -1) @ params["w"]
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), labels[:, None], axis=1))


def step(params: dict, images: jax.Array, labels: jax.Array) -> tuple:
    """One SGD step: (new params, loss)."""
    loss, grads = jax.value_and_grad(_loss)(params, images, labels)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), loss
