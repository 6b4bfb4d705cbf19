"""Issue 61: does eager work just before a jit sample make the jit calls read faster (on the chip)? One process.

compute_heavy at 1000 (benchmarks/user_plain.py's function and inputs, as the plain process runs them), jitted and as
written (eager), on the default device. Two arms rotate batch by batch, so drift falls on both alike:
`alone` is the user's loop (a batch of >= 10 ms of jit calls, each blocked); `after_eager` is what a jit sample sees in
jitexp's rounds after an eager one: an eager sample (>= 10 ms of eager calls, each blocked), then the untimed jit calls
jitexp's `rewarm_numbers` gives for these two per-call times, then the same timed jit batch. The garbage collector is
off during the rounds (as in jitexp's). The table gives each arm's median seconds per call and the median of the
per-round ratios after_eager/alone with a bootstrap 95% CI.

    python benchmarks/eager_beside_jit.py [--rounds 60]
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import user_pairs  # noqa: E402
import user_plain  # noqa: E402

from jitexp.worker.timing import Calibrated, rewarm_numbers  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=60)
    a = p.parse_args()
    fn = user_plain.CASES["compute_heavy"]["fn"]
    args = user_plain.inputs("compute_heavy")
    jit_loop = user_plain.user_loop("compute_heavy")

    eager_loop = user_plain.timed_loop(fn, args)

    for loop in (jit_loop, eager_loop):
        loop(3)
    n_jit, n_eager = user_plain.calls_per_batch(jit_loop), user_plain.calls_per_batch(eager_loop)
    per_jit = min(jit_loop(n_jit) for _ in range(3))
    per_eager = min(eager_loop(n_eager) for _ in range(3))
    rewarm = rewarm_numbers({"eager": Calibrated(n_eager, per_eager), "jit": Calibrated(n_jit, per_jit)})["jit"]

    def alone() -> float:
        return jit_loop(n_jit)

    def after_eager() -> float:
        eager_loop(n_eager)
        jit_loop(rewarm)
        return jit_loop(n_jit)

    gc.collect()
    gc.disable()
    try:
        got = user_plain.rotated({"alone": alone, "after_eager": after_eager}, a.rounds)
    finally:
        gc.enable()
    import jax

    print(
        f"compute_heavy 1000 on {jax.devices()[0]}, jax {jax.__version__}, python {sys.version.split()[0]}, "
        f"{a.rounds} rounds; jit {n_jit} calls a batch ({per_jit * 1e6:.1f}us), eager {n_eager} calls a sample "
        f"({per_eager * 1e6:.1f}us), {rewarm} untimed jit calls after it (rewarm_numbers)"
    )
    ratio = np.array(got["after_eager"]) / np.array(got["alone"])
    lo, hi = user_pairs.bootstrap_ci(ratio)
    print(f"{'arm':12} {'median':>10} {'ratio to alone':>15} {'95% CI':>14}")
    print(f"{'alone':12} {np.median(got['alone']) * 1e6:9.2f}us {1.0:15.3f}")
    print(
        f"{'after_eager':12} {np.median(got['after_eager']) * 1e6:9.2f}us {np.median(ratio):15.3f} {lo:6.3f}-{hi:.3f}"
    )


if __name__ == "__main__":
    main()
