"""Issue 61: does other work on the host make the chip's synced call read faster? One process, arms rotated.

The user's loop (benchmarks/user_plain.py: `f(*args).block_until_ready()` in batches of >= 10 ms) on the default
device, three arms rotated batch by batch so drift falls on all alike:
`alone`, nothing else running; `spin`, a child process spinning on the CPU during the batch (stopped with SIGSTOP
between batches); `ticker`, a thread of this process waking every 0.5 ms during the batch. A call that waits on the
device sleeps its thread, and how fast a sleeping CPU wakes can depend on what else keeps the host's cores awake: if
`spin` reads faster, a jitexp job's surroundings (its driver, the next worker) could make its figure read low.
The table gives each arm's median seconds per call and the median of the per-round ratios to `alone` with a
bootstrap 95% CI.

    python benchmarks/busy_host.py CASE [--rounds 60]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import user_pairs  # noqa: E402
import user_plain  # noqa: E402


def with_spinner(loop: Callable[[int], float], spinner: subprocess.Popen) -> Callable[[int], float]:
    """The batch with the spinning child let run during it."""

    def run(n: int) -> float:
        os.kill(spinner.pid, signal.SIGCONT)
        try:
            return loop(n)
        finally:
            os.kill(spinner.pid, signal.SIGSTOP)

    return run


def with_ticker(loop: Callable[[int], float], every_s: float = 0.0005) -> Callable[[int], float]:
    """The batch with a thread of this process waking every `every_s` during it."""

    def run(n: int) -> float:
        stop = threading.Event()

        def tick() -> None:
            while not stop.is_set():
                time.sleep(every_s)

        thread = threading.Thread(target=tick, daemon=True)
        thread.start()
        try:
            return loop(n)
        finally:
            stop.set()
            thread.join()

    return run


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("case", choices=sorted(user_plain.CASES))
    p.add_argument("--rounds", type=int, default=60)
    a = p.parse_args()
    import jax

    loop = user_plain.user_loop(a.case)
    loop(3)
    number = user_plain.calls_per_batch(loop)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    os.kill(spinner.pid, signal.SIGSTOP)
    try:
        arms = {"alone": loop, "spin": with_spinner(loop, spinner), "ticker": with_ticker(loop)}
        got = user_plain.rotated({name: partial(arm, number) for name, arm in arms.items()}, a.rounds)
    finally:
        spinner.kill()
        spinner.wait()
    print(f"{a.case} on {jax.devices()[0]}, {os.cpu_count()} cores, {number} calls a batch, {a.rounds} rounds")
    print(f"{'arm':<8} {'median':>10} {'ratio to alone':>15} {'95% CI':>14}")
    base = np.array(got["alone"])
    for name, values in got.items():
        ratio = np.array(values) / base
        lo, hi = user_pairs.bootstrap_ci(ratio) if name != "alone" else (1.0, 1.0)
        print(f"{name:<8} {np.median(values) * 1e6:>8.2f}us {np.median(ratio):>15.3f} {lo:>6.3f}-{hi:.3f}")


if __name__ == "__main__":
    main()
