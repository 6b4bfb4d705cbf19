"""Issue 61: a jitted call costs more the deeper the Python stack it is called from (jaxlib's tracebacks).

jaxlib records the caller's Python traceback with each array a call returns (`tracebacks_enabled()`, on by default),
walking every frame on the thread's stack. In one process, arms interleaved round by round: `f(x).block_until_ready()`
called 0, 10 and 30 frames deep, with tracebacks on (as every user runs) and off; the median per call of each and
its ratio to depth 0 with tracebacks on. No jitexp code: the user's loop only.

    JAX_PLATFORMS=cpu python benchmarks/stack_depth.py [--case add_one] [--rounds 9] [--calls 20000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--case", default="add_one")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--calls", type=int, default=20000)
    a = p.parse_args()
    import jax
    import user_plain
    from jax._src.lib import _jax  # set_tracebacks_enabled: not public API

    f, args = jax.jit(user_plain.CASES[a.case]["fn"]), user_plain.inputs(a.case)

    def loop() -> float:
        start = time.perf_counter_ns()
        for _ in range(a.calls):
            f(*args).block_until_ready()
        return (time.perf_counter_ns() - start) / a.calls

    def at(depth: int) -> float:
        return loop() if depth == 0 else at(depth - 1)

    loop()
    arms = [(tb, d) for tb in (True, False) for d in (0, 10, 30)]
    got: dict[tuple[bool, int], list[float]] = {arm: [] for arm in arms}
    for r in range(a.rounds):
        for tb, d in arms[r % len(arms) :] + arms[: r % len(arms)]:
            _jax.set_tracebacks_enabled(tb)
            got[(tb, d)].append(at(d))
    _jax.set_tracebacks_enabled(True)
    base = np.array(got[(True, 0)])
    print(
        f"{a.case} on {jax.devices()[0].platform}, jax {jax.__version__}, {a.calls} calls a sample, {a.rounds} rounds"
    )
    print(f"{'tracebacks':10} {'depth':>5} {'median':>10} {'ratio':>7} {'range':>13}")
    for (tb, d), values in got.items():
        ratio = np.array(values) / base
        print(
            f"{'on' if tb else 'off':10} {d:5d} {np.median(values):8.0f}ns {np.median(ratio):7.3f} "
            f"{ratio.min():6.3f}-{ratio.max():.3f}"
        )


if __name__ == "__main__":
    main()
