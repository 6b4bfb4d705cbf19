"""Attribution: op and kernel counts on small known functions (pinned to jax 0.10); the explanation rules that read
them are in tests/unit/test_explanation.py."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jitexp import workloads
from jitexp.worker.attribution import hlo_counts, jaxpr_counts, quietly


def counts(fn, *args, static=()):
    compiled = jax.jit(fn, static_argnums=static).lower(*args).compile()
    return {**jaxpr_counts(fn, args, static), **hlo_counts(compiled.as_text())}


def test_elementwise_chain_is_49_eager_ops_and_one_fused_kernel():
    c = counts(workloads.elementwise_chain, jnp.ones(1000, jnp.float32))
    assert (c["eager_ops"], c["xla_kernels"], c["xla_fusions"]) == (49, 1, 1)
    assert c["eager_bytes"] > 49 * 2 * 4000  # every op reads and writes the whole vector


def test_compute_heavy_is_six_ops_and_three_kernels():
    x = jnp.ones((64, 64), jnp.float32)
    assert {k: counts(workloads.compute_heavy, x, x)[k] for k in ("eager_ops", "xla_kernels")} == {
        "eager_ops": 6,
        "xla_kernels": 3,
    }


def test_a_python_loop_unrolls_and_a_lax_loop_is_one_eager_dispatch_with_its_body_in_the_hlo():
    x = jnp.ones((8, 8), jnp.float32)
    assert counts(workloads.apply_n_times, x, 3, static=(1,))["eager_ops"] == 3
    assert counts(workloads.apply_n_times, x, 5, static=(1,))["eager_ops"] == 5
    fori = counts(workloads.apply_n_times_fori, x, jnp.int32(3))
    assert fori["eager_ops"] == 1 and fori["jaxpr_eqns"] > 1  # while: one dispatch, its body traced once
    assert fori["xla_kernels"] > 1  # the matmul inside the loop body is counted


def test_a_nested_jit_is_one_dispatch_and_custom_jvp_runs_its_body():
    x = jnp.ones(10, jnp.float32)
    assert jaxpr_counts(lambda v: jax.jit(lambda u: jnp.sin(u) * 2)(v) + 1, (x,), ())["eager_ops"] == 2
    assert jaxpr_counts(lambda v: jax.nn.relu(v) + 1, (x,), ())["eager_ops"] == 2  # relu: custom_jvp around a jit


def test_unreadable_hlo_degrades_to_no_columns():
    assert hlo_counts("not hlo at all") == {}
    assert quietly(jaxpr_counts, workloads.conditional, (jnp.ones(3), jnp.float32(1)), ()) == {}  # fails to trace
