"""NumPy twins of the built-in workloads (`numpy_fn:` in conf/workload/*.yaml), for mode=numpy.

A twin takes the workload's arguments as host NumPy arrays (static literals as they are) and
computes the same result with NumPy alone. NumPy has no bfloat16 arithmetic of its own
(ml_dtypes emulates it element by element) and runs float16 through slow conversions, so a
twin computes half-precision inputs in float32 and returns float32; the worker's comparison
casts both sides to float64 and applies the job dtype's tolerance. Other dtypes stay as given.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

_HALF = {"float16", "bfloat16"}


def host(x: Any) -> np.ndarray:
    """x as a NumPy array, half-precision floats widened to float32."""
    a = np.asarray(x)
    return a.astype(np.float32) if a.dtype.name in _HALF else a


# --- the textbook cases and the older built-ins (jitexp.workloads) ---------------------------


def compute_heavy(x: Any, y: Any) -> Any:
    """Twin of workloads.compute_heavy: dot -> sin -> log|.| -> sum."""
    z = np.sin(np.dot(host(x), host(y)))
    return np.sum(np.log(np.abs(z) + 1e-6))


def conditional(x: Any, threshold: Any) -> np.ndarray:
    """Twin of workloads.conditional and conditional_lax: a plain Python if (NumPy values are concrete)."""
    x = host(x)
    if np.sum(x) > host(threshold):
        return np.broadcast_to(x @ x.T * 2, x.shape)
    return x / 2


def apply_n_times(x: Any, n: Any) -> np.ndarray:
    """Twin of workloads.apply_n_times and apply_n_times_fori: y = y @ x, n times."""
    x = host(x)
    y = x
    for _ in range(int(n)):
        y = y @ x
    return y


def add_one(x: Any) -> np.ndarray:
    """Twin of workloads.add_one."""
    return host(x) + 1


def matmul(x: Any, y: Any) -> np.ndarray:
    """Twin of workloads.matmul and library.small_matmul."""
    return host(x) @ host(y)


def elementwise_chain(x: Any) -> np.ndarray:
    """Twin of workloads.elementwise_chain."""
    y = np.sin(host(x))
    for _ in range(8):
        y = np.tanh(y * 1.5 + 0.1) - 0.5 * np.cos(y)
    return y


def _log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - np.max(z, axis=-1, keepdims=True)
    return z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))


def softmax_cross_entropy(logits: Any, labels_onehot: Any) -> Any:
    """Twin of workloads.softmax_cross_entropy."""
    return -np.mean(np.sum(_log_softmax(host(logits)) * host(labels_onehot), axis=-1))


# --- the workload library (jitexp.workloads.library) ----------------------------------------------------


def many_small_ops(x: Any) -> Any:
    """Twin of library.many_small_ops."""
    y = host(x)
    for _ in range(8):
        y = y * 0.9 + 0.1
        y = np.sin(y)
        y = y - np.mean(y)
        y = np.maximum(y, -1.0)
    return np.sum(y * y)


def softmax(x: Any) -> np.ndarray:
    """Twin of library.softmax."""
    x = host(x)
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def attention(q: Any, k: Any, v: Any) -> np.ndarray:
    """Twin of library.attention."""
    q, k, v = host(q), host(k), host(v)
    scores = np.einsum("hqd,hkd->hqk", q, k) / np.sqrt(np.asarray(q.shape[-1], q.dtype))
    return np.einsum("hqk,hkd->hqd", softmax(scores), v)


def _gelu(x: np.ndarray) -> np.ndarray:
    # jax.nn.gelu's default (approximate=True): the tanh form
    return 0.5 * x * (1 + np.tanh(np.asarray(math.sqrt(2 / math.pi), x.dtype) * (x + 0.044715 * x**3)))


ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "relu": lambda x: np.maximum(x, 0),
    "gelu": _gelu,
    "tanh": np.tanh,
}


def tp_mlp_layer(x: Any, w_up: Any, w_down: Any) -> np.ndarray:
    """Twin of sharded.tp_mlp_layer (one host, no split)."""
    return _gelu(host(x) @ host(w_up)) @ host(w_down)


def mlp(
    x: Any, w_in: Any, b_in: Any, w_hidden: Any, b_hidden: Any, w_out: Any, b_out: Any, activation: str
) -> np.ndarray:
    """Twin of library.mlp."""
    act = ACTIVATIONS[activation]
    w_hidden, b_hidden = host(w_hidden), host(b_hidden)
    h = act(host(x) @ host(w_in) + host(b_in))
    for i in range(w_hidden.shape[0]):
        h = act(h @ w_hidden[i] + b_hidden[i])
    z = h @ host(w_out) + host(b_out)
    e = np.exp(z - np.max(z, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def grad_mlp(x: Any, w1: Any, w2: Any, targets: Any) -> tuple[np.ndarray, np.ndarray]:
    """Twin of library.grad_mlp: the backward pass of the tanh MLP's cross-entropy, by hand."""
    x, w1, w2, t = host(x), host(w1), host(w2), host(targets)
    h = np.tanh(x @ w1)
    logits = h @ w2
    p = np.exp(_log_softmax(logits))
    d_logits = (p * np.sum(t, axis=-1, keepdims=True) - t) / x.shape[0]
    d_pre = (d_logits @ w2.T) * (1 - h * h)
    return x.T @ d_pre, h.T @ d_logits


def recurrence(w: Any, x: Any, steps: Any) -> np.ndarray:
    """Twin of library.python_loop, fori_loop and scan: h <- tanh(W h + x), steps times."""
    w, x = host(w), host(x)
    h = x
    for _ in range(int(steps)):
        h = np.tanh(w @ h + x)
    return h


def rnn(w_x: Any, w_h: Any, b: Any, xs: Any, unroll: Any) -> np.ndarray:
    """Twin of library.rnn_scan: h <- tanh(x_t W_x + h W_h + b) over the steps (unroll changes nothing here)."""
    w_x, w_h, b, xs = host(w_x), host(w_h), host(b), host(xs)
    h = np.zeros((xs.shape[1], w_h.shape[0]), xs.dtype)
    for x_t in xs:
        h = np.tanh(x_t @ w_x + h @ w_h + b)
    return h


def batched_matvec(a: Any, x: Any) -> np.ndarray:
    """Twin of library.vmap_matvec and loop_matvec: one einsum over the batch."""
    return np.einsum("bij,bj->bi", host(a), host(x))


def grow_while(x: Any, threshold: Any) -> np.ndarray:
    """Twin of library.while_cond and while_lax: a plain Python while (NumPy values are concrete)."""
    y, limit = host(x), host(threshold)
    while np.max(np.abs(y)) < limit:
        y = y * 2.0 + 0.5
    return y


def negative_sum(x: Any) -> Any:
    """Twin of library.boolean_mask and boolean_mask_where: NumPy's boolean indexing has no trace to fail."""
    x = host(x)
    return np.sum(x[x < 0])


# --- the model workloads (jitexp.workloads.models) ----------------------------------------------------------


def _layer_norm(x: np.ndarray, scale: np.ndarray, bias: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.mean(np.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + np.asarray(eps, x.dtype)) * scale + bias


def transformer_block(params: dict[str, Any], x: Any) -> np.ndarray:
    """Twin of models.transformer_block: pre-LN self-attention and gelu MLP, each with its residual."""
    p = {name: {k: host(v) for k, v in group.items()} for name, group in params.items()}
    x = host(x)
    a, m = p["attn"], p["mlp"]
    n = _layer_norm(x, p["ln1"]["scale"], p["ln1"]["bias"])
    q, k, v = (np.einsum("bsd,dhk->bhsk", n, a[w]) for w in ("wq", "wk", "wv"))
    scores = np.einsum("bhqk,bhsk->bhqs", q, k) / np.sqrt(np.asarray(q.shape[-1], q.dtype))
    heads = np.einsum("bhqs,bhsk->bqhk", softmax(scores), v)
    h = x + np.einsum("bqhk,hkd->bqd", heads, a["wo"])
    u = _gelu(_layer_norm(h, p["ln2"]["scale"], p["ln2"]["bias"]) @ m["w1"] + m["b1"])
    return h + u @ m["w2"] + m["b2"]


__all__ = [
    "host",
    "compute_heavy",
    "conditional",
    "apply_n_times",
    "add_one",
    "matmul",
    "elementwise_chain",
    "softmax_cross_entropy",
    "many_small_ops",
    "softmax",
    "attention",
    "mlp",
    "grad_mlp",
    "recurrence",
    "batched_matvec",
    "grow_while",
    "negative_sum",
    "transformer_block",
]
