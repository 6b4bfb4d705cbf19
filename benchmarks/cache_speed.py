"""Does a program read from JAX's persistent compilation cache run as fast as a freshly compiled one? And is a cold
call into an empty cache of its own (as jitexp's cold processes make it) as long as one in a process without a cache?

Fresh processes in pairs, the order alternating: `fresh` compiles with the cache off, `cached` reads the program from a
cache folder filled beforehand, `own` compiles into an empty cache of its own (the write included). Each process
times its first call and then the median of 30 samples of the steady loop (`f(x).block_until_ready()`, samples of at
least 10 ms). Printed per case: the paired ratios (Hodges-Lehmann, Wilcoxon CI: jitexp.analysis.stats.paired_change)
of the steady state cached/fresh (target 1 +- 0.02, CI covering 1) and of the first call own/fresh (target within
10%).

    python benchmarks/cache_speed.py [--pairs 10] [--cases add_one,matmul_256,compute_heavy_1000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile

from jitexp.analysis.stats import paired_change

CASES = {
    "add_one": ("lambda x: x + 1", "jnp.ones(1000)"),
    "matmul_256": ("lambda x: x @ x", "jnp.ones((256, 256))"),
    "compute_heavy_1000": ("lambda x: jnp.sum(jnp.log(jnp.abs(jnp.sin(x @ x)) + 1))", "jnp.ones((1000, 1000))"),
}
WORKER = """
import json, sys, time
import jax, jax.numpy as jnp
fn, arg, cache = sys.argv[1], sys.argv[2], sys.argv[3]
if cache != "off":
    jax.config.update("jax_compilation_cache_dir", cache)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_enable_xla_caches", "none")
x = eval(arg); x.block_until_ready()
jax.jit(lambda v: jnp.cos(v) + v)(jnp.ones((4, 4))).block_until_ready()  # the backend's start-up, as jitexp's warm-up
f = jax.jit(eval(fn))
start = time.perf_counter(); f(x).block_until_ready(); first = time.perf_counter() - start
for _ in range(3): f(x).block_until_ready()
number = 1
while True:
    start = time.perf_counter()
    for _ in range(number): f(x).block_until_ready()
    if time.perf_counter() - start >= 0.01: break
    number *= 2
samples = []
for _ in range(30):
    start = time.perf_counter()
    for _ in range(number): f(x).block_until_ready()
    samples.append((time.perf_counter() - start) / number)
samples.sort()
print(json.dumps({"first": first, "steady": samples[len(samples) // 2]}))
"""


def one(fn: str, arg: str, cache: str) -> dict:
    out = subprocess.run([sys.executable, "-c", WORKER, fn, arg, cache], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--cases", default=",".join(CASES))
    options = parser.parse_args()
    print(f"{'case':<20} {'pairs':>5} {'steady cached/fresh (95% CI)':>30} {'first own/fresh (95% CI)':>28}  target")
    for name in options.cases.split(","):
        fn, arg = CASES[name]
        filled = tempfile.mkdtemp(prefix="jitexp-cache-speed-")
        one(fn, arg, filled)  # fills the cache
        fresh, cached, own = [], [], []
        for i in range(options.pairs):
            kinds = ["fresh", "cached", "own"] if i % 2 == 0 else ["own", "cached", "fresh"]
            for kind in kinds:
                folder = {"fresh": "off", "cached": filled, "own": tempfile.mkdtemp(prefix="jitexp-own-")}[kind]
                {"fresh": fresh, "cached": cached, "own": own}[kind].append(one(fn, arg, folder))
        steady = paired_change([r["steady"] for r in fresh], [r["steady"] for r in cached])
        first = paired_change([r["first"] for r in fresh], [r["first"] for r in own])
        text = lambda c: f"{c['ratio']:.3f} ({c['ratio_ci_low']:.3f}-{c['ratio_ci_high']:.3f})"  # noqa: E731
        print(f"{name:<20} {options.pairs:5d} {text(steady):>30} {text(first):>28}  1+-0.02 / 1+-0.10", flush=True)


if __name__ == "__main__":
    main()
