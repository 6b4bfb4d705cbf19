"""Workloads for more than one device: functions written for one device that the job's mesh and
`workload.shardings` spread over several (XLA inserts the collectives; rows count them)."""

from __future__ import annotations

from typing import Any

import jax

Array = Any  # a jax.Array (or a tracer of one)


def tp_mlp_layer(x: Array, w_up: Array, w_down: Array) -> Array:
    """A transformer MLP block, gelu(x @ w_up) @ w_down, as Megatron splits it over a `model` axis.

    Shows tensor parallelism: w_up sharded by columns and w_down by rows keep the hidden activations
    local to each device, so one all-reduce of the output is the whole cost of the split.
    """
    return jax.nn.gelu(x @ w_up) @ w_down
