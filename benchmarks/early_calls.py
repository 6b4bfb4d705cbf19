"""A fresh executable's early calls against its later ones, in fresh processes (issue 61's warm-up).

Each process (a fresh interpreter, no jitexp import) jits compute_heavy at --size, makes its cold call, then times
--calls calls one by one; per bucket of call indices, the median over the steady state (the last 40% of the calls).
Across processes: the quartiles of each bucket, and the share of processes where it read above 1.05. A timing=quick
job's samples of a ~1 ms call fall at calls ~5-40 (one warm-up call, calibration's one, a settle call before each).

    JAX_PLATFORMS=cpu python benchmarks/early_calls.py [--size 256] [--processes 16] [--calls 500]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

BUCKETS = [(0, 3), (3, 10), (10, 20), (20, 40), (40, 80), (80, 150), (150, 300)]
CHILD = """
import json, sys, time
import jax, jax.numpy as jnp, numpy as np
sys.path.insert(0, {here!r})
from user_plain import compute_heavy
n, calls = {size}, {calls}
rng = np.random.default_rng(0)
x, y = (jnp.asarray(rng.standard_normal((n, n), dtype=np.float32)) for _ in range(2))
f = jax.jit(compute_heavy)
f(x, y).block_until_ready()
t = []
for _ in range(calls):
    s = time.perf_counter_ns(); f(x, y).block_until_ready(); t.append(time.perf_counter_ns() - s)
t = np.array(t, float); steady = np.median(t[int(calls * 0.6):])
print(json.dumps([float(np.median(t[a:b]) / steady) for a, b in {buckets}]))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--processes", type=int, default=16)
    parser.add_argument("--calls", type=int, default=500)
    args = parser.parse_args()
    code = CHILD.format(here=str(Path(__file__).parent), size=args.size, calls=args.calls, buckets=BUCKETS)
    rows = [
        json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
        for _ in range(args.processes)
    ]
    a = np.array(rows)
    print(
        f"compute_heavy at {args.size}: each bucket's median call over the steady state "
        f"(calls {int(args.calls * 0.6)}-{args.calls}), {args.processes} fresh processes"
    )
    print("calls        " + " ".join(f"{f'{lo}-{hi}':>8s}" for lo, hi in BUCKETS))
    for q in (25, 50, 75):
        print(f"quartile {q:2d}  " + " ".join(f"{v:8.3f}" for v in np.percentile(a, q, axis=0)))
    print("share >1.05  " + " ".join(f"{v:8.2f}" for v in (a > 1.05).mean(axis=0)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
