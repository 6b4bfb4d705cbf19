"""Issue 61: does the user's own loop still drift after its 30 batches, and do committed inputs dispatch alike?

benchmarks/user_plain.py's loop (3 warm-up calls, calls per batch doubled to >= 10 ms, then batches) run for
`--batches` batches in one fresh process: the median of each window of 30 batches against the first window's (the
plain side of user_pairs.py measures only that first window, ~0.3 s after the warm-up; jitexp's rounds come after
seconds of warm-up and calibration). Then, in the same process, the same jitted call on inputs placed as a user's
`jnp.asarray` places them (uncommitted) and on `jax.device_put(x, device)` (committed), batches rotated, the median of
the per-round ratios committed/uncommitted with a bootstrap 95% CI.

    python benchmarks/plain_drift.py CASE [--batches 300] [--rounds 40]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import user_pairs  # noqa: E402
import user_plain  # noqa: E402

WINDOW = user_plain.BATCHES


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=sorted(user_plain.CASES))
    p.add_argument("--batches", type=int, default=300)
    p.add_argument("--rounds", type=int, default=40)
    a = p.parse_args()
    import jax

    loop = user_plain.user_loop(a.case)
    start = time.perf_counter()
    loop(3)
    number = user_plain.calls_per_batch(loop)
    samples = np.array([loop(number) for _ in range(a.batches)])
    took = time.perf_counter() - start
    windows = samples[: samples.size // WINDOW * WINDOW].reshape(-1, WINDOW)
    medians = np.median(windows, axis=1)
    print(
        f"{a.case} on {jax.devices()[0].platform}: {number} calls a batch, {a.batches} batches in {took:.1f} s; "
        f"median of each {WINDOW} batches (first = what user_pairs' plain side reports), ratio to the first"
    )
    print("  " + "  ".join(f"{m * 1e6:.1f}us ({m / medians[0]:.3f})" for m in medians))
    if "setup" in user_plain.CASES[a.case]:
        return
    fn = jax.jit(user_plain.CASES[a.case]["fn"])
    loose = user_plain.inputs(a.case)
    device = jax.devices()[0]
    placed = [jax.device_put(np.asarray(x), device) for x in loose]

    loops = {"uncommitted": user_plain.timed_loop(fn, loose), "committed": user_plain.timed_loop(fn, placed)}
    got: dict[str, list[float]] = {"uncommitted": [], "committed": []}
    for r in range(a.rounds):
        for name in ("uncommitted", "committed")[:: 1 if r % 2 else -1]:
            got[name].append(loops[name](number))
    ratio = np.array(got["committed"]) / np.array(got["uncommitted"])
    lo, hi = user_pairs.bootstrap_ci(ratio)
    print(
        f"  committed/uncommitted over {a.rounds} rounds: {np.median(ratio):.3f} ({lo:.3f}-{hi:.3f}); medians "
        f"{np.median(got['uncommitted']) * 1e6:.1f}us uncommitted, {np.median(got['committed']) * 1e6:.1f}us committed"
    )


if __name__ == "__main__":
    main()
