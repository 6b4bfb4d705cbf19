"""Issue 61: what the garbage collector does to the user's own loop, in one process (A and B interleaved).

The user's loop (benchmarks/user_plain.py: `f(*args).block_until_ready()` in batches of >= 10 ms) with the collector
as a user leaves it (on), off (as jitexp's rounds run it, after one collection before the first round), and on after gc.freeze() (jitexp's
forkserver freezes its imports). Arms rotate batch by batch, so drift falls on all of them alike; the table gives
each arm's median seconds per call and its ratio to `on` with a bootstrap 95% CI over the rounds.

    python benchmarks/gc_user_loop.py [CASE] [--rounds 60]
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import user_plain  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("case", nargs="?", default="compute_heavy")
    p.add_argument("--rounds", type=int, default=60)
    a = p.parse_args()
    loop = user_plain.user_loop(a.case)
    loop(3)
    number = user_plain.calls_per_batch(loop)

    def on() -> float:
        gc.enable()
        return loop(number)

    def off() -> float:  # no collection here: one right before a batch cools the caches its calls use
        gc.disable()
        try:
            return loop(number)
        finally:
            gc.enable()

    def frozen() -> float:
        gc.freeze()
        try:
            return loop(number)
        finally:
            gc.unfreeze()

    gc.collect()
    got = user_plain.rotated({"on": on, "off": off, "frozen": frozen}, a.rounds)
    import jax

    print(
        f"{a.case} on {jax.devices()[0].platform}, python {sys.version.split()[0]}, {number} calls a batch, "
        f"{a.rounds} rounds; gc thresholds {gc.get_threshold()}, {len(gc.get_objects())} tracked objects"
    )
    base = np.array(got["on"])
    rng = np.random.default_rng(0)
    print(f"{'arm':8} {'median':>10} {'ratio to on':>12} {'95% CI':>14}")
    for k, v in got.items():
        ratio = np.array(v) / base
        boot = np.median(rng.choice(ratio, (2000, len(ratio))), axis=1)
        lo, hi = np.quantile(boot, [0.025, 0.975])
        print(f"{k:8} {np.median(v) * 1e6:9.2f}us {np.median(ratio):12.3f} {lo:6.3f}-{hi:.3f}")


if __name__ == "__main__":
    main()
