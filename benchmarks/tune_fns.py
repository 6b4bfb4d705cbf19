"""The functions benchmarks/tune.py's studies search: one whose time has a planted optimum, one whose time is flat."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp

PLANTED_AT = 7  # the k of the fewest matmuls


def planted(x: Any, k: int) -> Any:
    """1 + 2|k - 7| rounds of tanh(x @ x): the steady time grows with k's distance from 7 (k static)."""
    for _ in range(1 + 2 * abs(k - PLANTED_AT)):
        x = jnp.tanh(x @ x)
    return x


def flat(x: Any, k: int) -> Any:
    """4 rounds of tanh(x @ x) whatever k is: every k compiles the same program (k static)."""
    for _ in range(4):
        x = jnp.tanh(x @ x)
    return x
