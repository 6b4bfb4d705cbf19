"""Functions for benchmarks/ab.py: a chain of matmuls, the same under another name, and one 10% longer."""

import jax.numpy as jnp


def _chain(x, n):
    for _ in range(n):
        x = jnp.tanh(x @ x) * 0.5
    return x


def chain10(x):
    """Ten 128x128 matmuls, each followed by a tanh."""
    return _chain(x, 10)


chain10_again = chain10  # A/A: the same function under a second import path


def chain11(x):
    """One matmul more than chain10: about 10% more work."""
    return _chain(x, 11)
