"""Workloads for more than one device: functions written for one device that the job's mesh and
`workload.shardings` spread over several (XLA inserts the collectives; rows count them)."""

from __future__ import annotations

from typing import Any

import jax
from jax.sharding import PartitionSpec as P

Array = Any  # a jax.Array (or a tracer of one)


def tp_mlp_layer(x: Array, w_up: Array, w_down: Array) -> Array:
    """A transformer MLP block, gelu(x @ w_up) @ w_down, as Megatron splits it over a `model` axis.

    Shows tensor parallelism: w_up sharded by columns and w_down by rows keep the hidden activations
    local to each device, so one all-reduce of the output is the whole cost of the split.
    """
    return jax.nn.gelu(x @ w_up) @ w_down


def shard_map_matmul(x: Array, w: Array) -> Array:
    """x @ w with its contraction split over a `model` axis by hand: `jax.shard_map` gives each device its slice of
    x's columns and of w's rows, each multiplies its slices, and an explicit `lax.psum` adds the partial products.

    Shows a collective written by hand (one all-reduce: the psum) where tp_mlp leaves it to XLA. The mesh is the one
    the arguments are sharded over; on one device (no mesh, or none with a `model` axis) it is the plain matmul.
    """
    mesh = _mesh_of(x)
    if mesh is None or "model" not in mesh.axis_names:
        return x @ w
    split = jax.shard_map(_partial_matmul, mesh=mesh, in_specs=(P(None, "model"), P("model", None)), out_specs=P())
    return split(x, w)


def _partial_matmul(x: Array, w: Array) -> Array:
    return jax.lax.psum(x @ w, "model")


def _mesh_of(x: Array) -> Any:
    """The mesh x is sharded over (from its type under explicit axes, else from its sharding), or None."""
    mesh = jax.typeof(x).sharding.mesh
    if not mesh.empty:
        return mesh
    return getattr(getattr(x, "sharding", None), "mesh", None)
