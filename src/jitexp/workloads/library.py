"""The workload library: JAX functions that each show one thing jax.jit does (or cannot do).

Each function is named by a conf/workload/<name>.yaml (fn: jitexp.workloads.library.<name>) that maps
`size` and `dtype` to its arguments; its NumPy twin lives in jitexp.workloads.twins. Loop bodies are
module-level functions, not closures made per call: eager lax.while_loop / fori_loop / scan
cache their traced body by function identity, so a fresh lambda on every call would re-trace
and recompile on every eager call and measure that instead of the loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

Array = Any  # a jax.Array (or a tracer of one)

# --- dispatch-bound ------------------------------------------------------------------


def many_small_ops(x: Array) -> Array:
    """58 tiny elementwise ops and reductions (jaxpr equations) on a short vector.

    Shows dispatch cost: each op's work is nanoseconds, so eager pays ~5-10 us of Python and
    dispatch per op (hundreds of us a call) while jit runs one compiled program (a few us).
    """
    y = x
    for _ in range(8):
        y = y * 0.9 + 0.1
        y = jnp.sin(y)
        y = y - jnp.mean(y)
        y = jnp.maximum(y, -1.0)
    return jnp.sum(y * y)


def small_matmul(x: Array, y: Array) -> Array:
    """A single 8x8 to 64x64 matmul, where a call is all dispatch and NumPy can beat jit.

    Shows the floor of a call: jit removes Python-level overhead but still pays JAX's dispatch
    and synchronisation (~5 us), which NumPy's sub-microsecond matmul of tiny matrices does not.
    """
    return x @ y


# --- reductions and attention -----------------------------------------------------------


def softmax(x: Array) -> Array:
    """Numerically stable softmax over the last axis: max, subtract, exp, sum, divide.

    Shows fusion of reductions with elementwise work: eager materialises five intermediates,
    jit fuses them into a couple of kernels that read x once or twice.
    """
    z = x - jnp.max(x, axis=-1, keepdims=True)
    e = jnp.exp(z)
    return e / jnp.sum(e, axis=-1, keepdims=True)


def attention(q: Array, k: Array, v: Array) -> Array:
    """Scaled dot-product attention, heads x seq x head_dim: softmax(q k^T / sqrt(d)) v.

    Shows a typical transformer block: two batched matmuls around a softmax; jit fuses the
    scale, the softmax and its reductions between the matmuls.
    """
    scores = jnp.einsum("hqd,hkd->hqk", q, k) / jnp.sqrt(jnp.asarray(q.shape[-1], q.dtype))
    return jnp.einsum("hqk,hkd->hqd", softmax(scores), v)


# --- an MLP, its gradient -----------------------------------------------------------------

ACTIVATIONS: dict[str, Callable[[Array], Array]] = {"relu": jax.nn.relu, "gelu": jax.nn.gelu, "tanh": jnp.tanh}


def activation_fn(name: str) -> Callable[[Array], Array]:
    """The activation called `name`, or a ValueError naming the choices."""
    try:
        return ACTIVATIONS[name]
    except (KeyError, TypeError):
        raise ValueError(f"activation {name!r} is not one of {', '.join(ACTIVATIONS)}") from None


def mlp(
    x: Array, w_in: Array, b_in: Array, w_hidden: Array, b_hidden: Array, w_out: Array, b_out: Array, activation: str
) -> Array:
    """An MLP forward pass: input layer, `depth` hidden width x width layers, output layer, softmax.

    Shows a static argument that is not a number: `activation` is a string chosen in Python
    (static_argnums), so each choice compiles its own program. Hidden layers are stacked in one
    array and unrolled by a Python loop over its (static) first dimension.
    """
    act = activation_fn(activation)
    h = act(x @ w_in + b_in)
    for i in range(w_hidden.shape[0]):
        h = act(h @ w_hidden[i] + b_hidden[i])
    return jax.nn.softmax(h @ w_out + b_out, axis=-1)


def _mlp_loss(params: tuple[Array, Array], x: Array, targets: Array) -> Array:
    w1, w2 = params
    logits = jnp.tanh(x @ w1) @ w2
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * targets, axis=-1))


def grad_mlp(x: Array, w1: Array, w2: Array, targets: Array) -> tuple[Array, Array]:
    """jax.grad of a two-layer tanh MLP's cross-entropy loss with respect to both weights.

    Shows a transformation under jit: grad builds the backward pass while tracing, and jit
    compiles forward and backward as one program (eager dispatches every op of both).
    """
    return jax.grad(_mlp_loss)((w1, w2), x, targets)


# --- one recurrence, three ways ------------------------------------------------------------


def _step(h: Array, w: Array, x: Array) -> Array:
    return jnp.tanh(w @ h + x)


def python_loop(w: Array, x: Array, steps: int) -> Array:
    """h <- tanh(W h + x), `steps` times, in a Python for-loop (steps must be static under jit).

    Shows unrolling: jit traces the body `steps` times, so the jaxpr, the trace time and the
    compile time grow with steps, and every new steps value compiles again.
    """
    h = x
    for _ in range(steps):
        h = _step(h, w, x)
    return h


def _fori_body(_: Array, carry: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
    h, w, x = carry
    return _step(h, w, x), w, x


def fori_loop(w: Array, x: Array, steps: Array) -> Array:
    """The python_loop recurrence with lax.fori_loop: steps stays traced.

    Shows a compiled loop: the body is traced once, compile time does not grow with steps, and
    one executable serves every steps value.
    """
    return lax.fori_loop(0, steps, _fori_body, (x, w, x))[0]


def _scan_body(carry: tuple[Array, Array, Array], _: Any) -> tuple[tuple[Array, Array, Array], None]:
    h, w, x = carry
    return (_step(h, w, x), w, x), None


def scan(w: Array, x: Array, steps: int) -> Array:
    """The python_loop recurrence with lax.scan(length=steps): steps is static (a scan's length is a shape).

    Shows the loop JAX prefers for sequences: traced once like fori_loop, differentiable in
    reverse, but a new length compiles again.
    """
    return lax.scan(_scan_body, (x, w, x), None, length=steps)[0][0]


# --- a recurrent layer over a sequence, for tuning ---------------------------------------------


def _rnn_body(carry: tuple[Array, Array, Array, Array], x_t: Array) -> tuple[tuple[Array, Array, Array, Array], None]:
    h, w_x, w_h, b = carry
    return (jnp.tanh(x_t @ w_x + h @ w_h + b), w_x, w_h, b), None


def rnn_scan(w_x: Array, w_h: Array, b: Array, xs: Array, unroll: int) -> Array:
    """An Elman RNN over a sequence xs (steps x batch x features) with lax.scan: the final hidden state.

    Shows settings a tuner searches: scan's static `unroll` (loop iterations merged into one body) and the
    batch (examples per call); the weights ride in the carry, so the body is one module-level function.
    """
    h0 = jnp.zeros((xs.shape[1], w_h.shape[0]), xs.dtype)
    return lax.scan(_rnn_body, (h0, w_x, w_h, b), xs, unroll=unroll)[0][0]


# --- vmap against a Python loop over the batch ------------------------------------------------


def vmap_matvec(a: Array, x: Array) -> Array:
    """jax.vmap of a matvec over a batch of (matrix, vector) pairs: one batched kernel.

    Shows vectorisation as a transformation: the per-example function is written once and
    vmap turns it into a single batched contraction, eager or jit.
    """
    return jax.vmap(jnp.dot)(a, x)


def loop_matvec(a: Array, x: Array) -> Array:
    """The vmap_matvec result from a Python loop over the batch, stacked: what eager code often does.

    Shows what jit does to a loop over data: eager dispatches a slice, slice, dot per example;
    jit unrolls the loop (trace grows with the batch) and XLA may or may not re-batch it.
    """
    return jnp.stack([a[i] @ x[i] for i in range(a.shape[0])])


# --- value-dependent control flow ----------------------------------------------------------------


def _below(y: Array, threshold: Array) -> Array:
    return jnp.max(jnp.abs(y)) < threshold


def _grow(y: Array) -> Array:
    return y * 2.0 + 0.5


def while_cond(x: Array, threshold: Array) -> Array:
    """Double x (plus 0.5) while max|x| < threshold, in a Python while: fails under jit.

    Shows value-dependent Python control flow: the trip count depends on the data, so tracing
    needs a concrete bool and raises TracerBoolConversionError.
    """
    y = x
    while _below(y, threshold):
        y = _grow(y)
    return y


def _while_cond_fn(carry: tuple[Array, Array]) -> Array:
    return _below(*carry)


def _while_body_fn(carry: tuple[Array, Array]) -> tuple[Array, Array]:
    y, threshold = carry
    return _grow(y), threshold


def while_lax(x: Array, threshold: Array) -> Array:
    """The while_cond loop with lax.while_loop: the condition is traced, so it works under jit.

    Shows the fix: the loop runs inside the compiled program, one executable for every threshold.
    """
    return lax.while_loop(_while_cond_fn, _while_body_fn, (x, threshold))[0]


def boolean_mask(x: Array) -> Array:
    """Sum of the negative entries by boolean indexing, x[x < 0]: fails under jit.

    Shows a data-dependent shape: the result of x[x < 0] has as many elements as are negative,
    unknown while tracing, so jit raises NonConcreteBooleanIndexError.
    """
    return jnp.sum(x[x < 0])


def boolean_mask_where(x: Array) -> Array:
    """The boolean_mask sum with jnp.where(x < 0, x, 0): a fixed shape, so it works under jit.

    Shows the fix for data-dependent shapes: keep the shape, zero what the mask drops.
    """
    return jnp.sum(jnp.where(x < 0, x, 0))


__all__ = [
    "many_small_ops",
    "small_matmul",
    "softmax",
    "attention",
    "mlp",
    "grad_mlp",
    "python_loop",
    "fori_loop",
    "scan",
    "vmap_matvec",
    "loop_matvec",
    "while_cond",
    "while_lax",
    "boolean_mask",
    "boolean_mask_where",
    "ACTIVATIONS",
    "activation_fn",
]
