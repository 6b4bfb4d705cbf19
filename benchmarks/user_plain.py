"""The user's side of benchmarks/user_pairs.py: each case's function, its inputs, and the loop a user writes.

Imports no jitexp (the point: a process a user would start), unless asked to run the loop in a forkserver child as
jitexp's worker runs (`forkserver`: the server preloads jitexp's worker as jitexp's does; `forkserver_bare`: nothing),
or in a child multiprocessing spawns (`spawn`).
`fresh_frozen` and `fresh_gcoff` are the user's process with the garbage collector as jitexp's worker has it (main's
`collector`). The jitexp side runs the same functions by import
path (`workload=custom workload.fn=user_plain.NAME`), on the same input values: `inputs` draws them as jitexp's
`workload.make_array` does for `init: normal` (default_rng([seed, argument position]), standard normal in float32).

    python benchmarks/user_plain.py CASE [fresh|fresh_frozen|fresh_gcoff|forkserver|forkserver_bare|spawn]   ->  one JSON line: {"median_s", "number", "samples_s", "platform"}

The loop: 3 warm-up calls, calls per batch doubled until a batch lasts >= 10 ms, then 30 batches; the median.
"""

from __future__ import annotations

import functools
import gc
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

BATCH_S = 0.01
BATCHES = 30

# --- the functions (the jitexp side imports them by path) ---------------------------------------------


def add_one(x):
    """x + 1."""
    return x + 1


def chain(x):
    """jitexp's elementwise_chain: sin, then 8 x (tanh(1.5y + 0.1) - 0.5 cos y)."""
    y = jnp.sin(x)
    for _ in range(8):
        y = jnp.tanh(y * 1.5 + 0.1) - 0.5 * jnp.cos(y)
    return y


def compute_heavy(x, y):
    """jitexp's compute_heavy: dot -> sin -> log|.| -> sum."""
    z = jnp.dot(x, y)
    z = jnp.sin(z)
    z = jnp.log(jnp.abs(z) + 1e-6)
    return jnp.sum(z)


def _loss(params, x, y):
    import optax  # here, not above: the other cases run where optax is not installed

    h = x
    for layer in params[:-1]:
        h = jax.nn.relu(h @ layer["w"] + layer["b"])
    logits = h @ params[-1]["w"] + params[-1]["b"]
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


@functools.cache
def _adam():
    import optax

    return optax.adam(1e-3)


def optax_step(params, opt_state, x, y):
    """One Adam step of an MLP: (params, opt_state, x, y) -> (new params, new opt_state, loss)."""
    import optax

    loss, grads = jax.value_and_grad(_loss)(params, x, y)
    updates, opt_state = _adam().update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def setup_optax(size: int, dtype: str, seed: int, **_: object):
    """(params, adam state, x, y): 256 features -> one hidden layer of width `size` -> 10 classes, batch 32."""
    rng = np.random.default_rng(seed)
    sizes = [256, size, 10]
    params = [
        {
            "w": jnp.asarray(rng.standard_normal((a, b), dtype=np.float32) * np.float32(np.sqrt(2.0 / a))),
            "b": jnp.zeros((b,), jnp.float32),
        }
        for a, b in zip(sizes[:-1], sizes[1:])
    ]
    x = jnp.asarray(rng.standard_normal((32, 256), dtype=np.float32))
    y = jnp.asarray(rng.integers(0, 10, size=(32,)), dtype=jnp.int32)
    return params, _adam().init(params), x, y


# --- the cases: function, argument shapes (None: a setup), carried outputs ----------------------------

CASES: dict[str, dict[str, Any]] = {
    "add_one": {"fn": add_one, "shapes": [[]]},
    "chain_1e5": {"fn": chain, "shapes": [[100000]]},
    "compute_heavy": {"fn": compute_heavy, "shapes": [[1000, 1000], [1000, 1000]]},
    # a call of ~0.5-1 ms on the 2-core VM: timing=quick's one-call samples, as x + 1's ~550 us round trip on the TPU
    "compute_small": {"fn": compute_heavy, "shapes": [[256, 256], [256, 256]]},
    "optax_step": {"fn": optax_step, "setup": setup_optax, "size": 64, "carry": {0: 0, 1: 1}},
}


def inputs(case: str, seed: int = 0) -> list:
    """The case's arguments as a user holds them (jnp arrays), the values jitexp's make_array draws."""
    spec = CASES[case]
    if "setup" in spec:
        return list(spec["setup"](size=spec["size"], dtype="float32", seed=seed))
    return [
        jnp.asarray(np.random.default_rng([seed, i]).standard_normal(tuple(shape), dtype=np.float32))
        for i, shape in enumerate(spec["shapes"])
    ]


def user_loop(case: str) -> Callable[[int], float]:
    """The case's jitted function in the user's loop, on its inputs (timed_loop)."""
    spec = CASES[case]
    return timed_loop(jax.jit(spec["fn"]), inputs(case), tuple(spec.get("carry", {}).items()))


def timed_loop(f: Callable, args: list, carry: tuple = ()) -> Callable[[int], float]:
    """`f(*args).block_until_ready()` n times (a training loop feeds the carried outputs back, output k into argument
    i for each (k, i) of `carry`): seconds per call."""

    def loop(n: int) -> float:
        start = time.perf_counter_ns()
        if carry:
            for _ in range(n):
                out = f(*args)
                for k, i in carry:
                    args[i] = out[k]
                jax.block_until_ready(out)
        else:
            for _ in range(n):
                f(*args).block_until_ready()
        return (time.perf_counter_ns() - start) / 1e9 / n

    return loop


def rotated(arms: dict[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Each arm's samples over `rounds` rounds, one sample of every arm a round, the order rotated each round, so that
    drift falls on every arm alike (the in-process A/B of busy_host, gc_user_loop and eager_beside_jit)."""
    got: dict[str, list[float]] = {k: [] for k in arms}
    names = list(arms)
    for r in range(rounds):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            got[name].append(arms[name]())
    return got


def calls_per_batch(loop: Callable[[int], float]) -> int:
    """Calls doubled until a batch lasts >= BATCH_S, by the faster of two timings: one slow call while calibrating
    (on the TPU, compute_heavy's first calls after the warm-up) had stopped the doubling at 2 calls, ~1 ms batches."""
    number = 1
    while min(loop(number), loop(number)) * number < BATCH_S:
        number *= 2
    return number


def main(case: str, send: Callable[[str], Any] = print, collector: str = "on") -> None:
    """The plain loop's median, as one JSON line passed to `send` (printed, or sent back from a forked child).

    `collector`: "on", as a user leaves it; "frozen", gc.freeze() over the imports before the inputs are made (what
    jitexp's forkserver does to its workers); "off", a collection and then none from the warm-up on (jitexp's rounds)."""
    if collector == "frozen":
        gc.freeze()
    loop = user_loop(case)
    if collector == "off":
        gc.collect()
        gc.disable()
    loop(3)
    number = calls_per_batch(loop)
    samples = [loop(number) for _ in range(BATCHES)]
    platform = jax.devices()[0].platform
    send(
        json.dumps(
            {"median_s": float(np.median(samples)), "number": number, "samples_s": samples, "platform": platform}
        )
    )


def _child(case: str, conn: Any) -> None:
    main(case, conn.send)


def jitexp_preload() -> list[str]:
    """What jitexp's forkserver preloads (engine.processes: its worker, then gc.freeze over the imports)."""
    from jitexp.engine.processes import FROZEN, WORKER

    return [WORKER.module, FROZEN]


def in_child(case: str, preload: list[str], method: str = "forkserver") -> None:
    """The same loop in a forkserver child, as jitexp's worker runs (issue 61: is the 3% the worker's process?), or
    in a spawned child (`method="spawn"`: an interpreter of its own started by multiprocessing; on the chip jitexp's
    workers read 1.097 of the user's process started so, 2026-12-07).

    `preload` is the forkserver's imports: jitexp's own (its worker entry, then gc.freeze over them) or none."""
    import multiprocessing

    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(preload)
    here, there = ctx.Pipe()
    child = ctx.Process(target=_child, args=(case, there))
    child.start()
    print(here.recv())
    child.join()


COLLECTOR = {"fresh": "on", "fresh_frozen": "frozen", "fresh_gcoff": "off"}

if __name__ == "__main__":
    # python user_plain.py CASE [fresh|fresh_frozen|fresh_gcoff|forkserver|forkserver_bare|spawn]
    where = sys.argv[2] if len(sys.argv) > 2 else "fresh"
    if where in COLLECTOR:
        main(sys.argv[1], collector=COLLECTOR[where])
    elif where == "spawn":
        in_child(sys.argv[1], [], "spawn")
    else:
        in_child(sys.argv[1], jitexp_preload() if where == "forkserver" else [])
