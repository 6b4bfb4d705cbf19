"""Does the harness add overhead? jitexp's median vs a bare perf_counter loop, interleaved.

For each kernel, rounds alternate A (jitexp.timing.measure) and B (a minimal timeit-style
loop: batches of back-to-back call + block, perf_counter_ns around each batch) on the same
jitted callable; the table prints the ratio of medians A/B per kernel. Target: within
1.00 +- 0.10 (the harness measures the call, not itself). The reference times batches, not
single calls, on purpose: on CPU the median of single calls hides async dispatch's bimodal
slow tail, which a user's loop does pay (seen here as a 1.4x gap on elementwise_chain).

    python benchmarks/harness_overhead.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from jitexp.timing import Policy, measure
from jitexp.workloads import compute_heavy, elementwise_chain

TARGET = 0.10


def bare_loop(call, batches: int = 30, target_s: float = 0.01) -> float:
    start = time.perf_counter_ns()
    jax.block_until_ready(call())
    number = max(1, int(target_s / ((time.perf_counter_ns() - start) / 1e9)))
    times = np.empty(batches)
    for i in range(batches):
        start = time.perf_counter_ns()
        for _ in range(number):
            jax.block_until_ready(call())
        times[i] = (time.perf_counter_ns() - start) / 1e9 / number
    return float(np.median(times))


def kernels():
    x0 = jnp.float32(1.0)
    x1 = jnp.ones(1000, jnp.float32)
    x2 = jnp.ones((128, 128), jnp.float32)
    add = jax.jit(lambda x: x + 1)
    chain = jax.jit(elementwise_chain)
    heavy = jax.jit(compute_heavy)
    return {
        "x+1 scalar": lambda: add(x0),
        "elementwise_chain 1e3": lambda: chain(x1),
        "compute_heavy 128": lambda: heavy(x2, x2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    policy = Policy(warmup=5, min_samples=10, max_samples=200, min_sample_time_s=0.01, max_time_s=1.0,
                    target_rel_ci=0.02)  # timing=default, shorter budget
    print(f"{'kernel':24} {'harness':>10} {'bare loop':>10} {'ratio':>7}  ok")
    failures = 0
    for name, call in kernels().items():
        jax.block_until_ready(call())
        a, b = [], []
        for _ in range(args.rounds):  # interleaved: A then B, so drift hits both alike
            a.append(float(np.median(measure(call, policy).samples_s)))
            b.append(bare_loop(call))
        ma, mb = float(np.median(a)), float(np.median(b))
        ratio = ma / mb
        ok = abs(ratio - 1.0) <= TARGET
        failures += not ok
        print(f"{name:24} {ma * 1e6:8.2f}us {mb * 1e6:8.2f}us {ratio:7.3f}  {'yes' if ok else 'NO'}")
    print(f"\ntarget: ratio within 1 +- {TARGET}; {failures} kernel(s) outside")


if __name__ == "__main__":
    main()
