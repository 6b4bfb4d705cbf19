"""The textbook cases and the older built-ins: plain JAX functions that conf/workload/<name>.yaml names by
import path (fn: jitexp.workloads.<name>)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

# --- the textbook cases -------------------------------------------------------------


def compute_heavy(x, y):
    """dot -> sin -> log|.| -> sum: one matmul plus elementwise work that jit can fuse."""
    z = jnp.dot(x, y)
    z = jnp.sin(z)
    z = jnp.log(jnp.abs(z) + 1e-6)
    return jnp.sum(z)


def _grow(x):
    # lax.cond needs both branches to return x's shape; for a vector x, x @ x.T is a scalar.
    return jnp.broadcast_to(x @ x.T * 2, x.shape)


def _shrink(x):
    return x / 2


def conditional(x, threshold):
    """A Python `if` on a traced value: fine eagerly, a TracerBoolConversionError under jit."""
    if jnp.sum(x) > threshold:
        return _grow(x)
    return _shrink(x)


def conditional_lax(x, threshold):
    """The same choice through jax.lax.cond, which traces both branches and works under jit."""
    return lax.cond(jnp.sum(x) > threshold, _grow, _shrink, x)


def apply_n_times(x, n):
    """A Python loop whose trip count is an argument: n must be static under jit."""
    y = x
    for _ in range(n):
        y = y @ x
    return y


# --- more built-ins (the workload library's newer ones live in jitexp.workloads.library) -----------


def add_one(x):
    """x + 1: next to no work, so a call's time is dispatch and synchronisation alone."""
    return x + 1


def _times_x(_, carry):
    # module level, not a lambda per call: eager fori_loop caches its traced body by identity
    y, x = carry
    return y @ x, x


def apply_n_times_fori(x, n):
    """apply_n_times with lax.fori_loop: n may stay traced, one compile serves every n."""
    return lax.fori_loop(0, n, _times_x, (x, x))[0]


def matmul(x, y):
    """A single matmul: little for jit to fuse, so speedup comes from dispatch alone."""
    return x @ y


def elementwise_chain(x):
    """Many cheap elementwise ops: eager pays dispatch and memory traffic per op, jit fuses them."""
    y = jnp.sin(x)
    for _ in range(8):
        y = jnp.tanh(y * 1.5 + 0.1) - 0.5 * jnp.cos(y)
    return y


def softmax_cross_entropy(logits, labels_onehot):
    """A reduction-heavy loss: log-softmax and a mean, typical of a training step's tail."""
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels_onehot, axis=-1))
