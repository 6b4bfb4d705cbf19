"""Does the harness add overhead? jitexp's timed loop vs a plain blocked loop, interleaved in one process.

For each kernel, samples alternate A (jitexp's own path: `modes.make_call` (a partial),
`modes.block_for` (the block specialised for the output) and `timing.time_calls`) and B (the
loop a user would write: `for _ in range(n): f(x).block_until_ready()`), with the same number
of calls per sample. The table prints the ratio of medians A/B per kernel. Target: at most
1.05 (the harness measures the call, not itself).

    python benchmarks/harness_overhead.py [--samples 200]
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from jitexp.modes import block_for, make_call
from jitexp.timing import calibrate, gc_disabled, time_calls
from jitexp.workloads import Workload, add_one, compute_heavy, elementwise_chain

TARGET = 1.05


def plain(f, x, number: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(number):
        f(x).block_until_ready()
    return (time.perf_counter_ns() - start) / 1e9 / number


def plain2(f, x, y, number: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(number):
        f(x, y).block_until_ready()
    return (time.perf_counter_ns() - start) / 1e9 / number


def kernels():
    x0 = jnp.ones(1, jnp.float32)
    x1 = jnp.ones(1000, jnp.float32)
    x2 = jnp.ones((128, 128), jnp.float32)
    one, chain, heavy = jax.jit(add_one), jax.jit(elementwise_chain), jax.jit(compute_heavy)
    return [
        ("x+1 (size 1)", Workload("add_one", add_one, (x0,), ()), lambda n: plain(one, x0, n)),
        ("elementwise_chain 1e3", Workload("chain", elementwise_chain, (x1,), ()), lambda n: plain(chain, x1, n)),
        ("compute_heavy 128", Workload("heavy", compute_heavy, (x2, x2), ()), lambda n: plain2(heavy, x2, x2, n)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    print(f"jax {jax.__version__}, {jax.devices()[0].device_kind}, samples of >= 10 ms, A/B interleaved\n")
    print(f"{'kernel':24} {'jitexp':>10} {'plain loop':>10} {'ratio':>7} {'target':>7}  ok")
    failures = 0
    for name, w, reference in kernels():
        call = make_call(w, "jit")
        block = block_for(call())
        number = calibrate(call, block, 0.01)
        a, b = [], []
        with gc_disabled():  # as in jitexp's rounds, for both sides
            for i in range(args.samples):
                if i % 2:
                    b.append(reference(number))
                    a.append(time_calls(call, number, block)[0])
                else:
                    a.append(time_calls(call, number, block)[0])
                    b.append(reference(number))
        ma, mb = float(np.median(a)), float(np.median(b))
        ratio = ma / mb
        ok = ratio <= TARGET
        failures += not ok
        print(
            f"{name:24} {ma * 1e6:8.2f}us {mb * 1e6:8.2f}us {ratio:7.3f} {'<=' + str(TARGET):>7}  {'yes' if ok else 'NO'}"
        )
    print(f"\n{failures} kernel(s) outside the target")


if __name__ == "__main__":
    main()
