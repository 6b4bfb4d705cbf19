"""The rounds' own cost in one process (issue 61): `timing.measure_rounds` as before the fix, with each half of it,
with both, and samples back to back with nothing between, in rotated order, paired run by run.

Each run is one process's sampling as `timing=quick` plans it (the job's median of its samples) on a case of
benchmarks/user_plain.py. Arms: old (no settle calls, the collection right before the first sample), settle,
collect_first, both (today's rounds), bare (calibrate, then 14 samples back to back). Printed: each arm's median and
the median of its per-run ratio to old with a bootstrap 95% CI. The figures in docs/decisions.md ("The user's own
process") came from `taskset -c 1 python benchmarks/settle_ab.py --runs 100` on the 2-core VM.

    python benchmarks/settle_ab.py [--runs 100] [--case add_one]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import user_plain  # noqa: E402

from jitexp import noise  # noqa: E402
from jitexp.config import TimingConfig  # noqa: E402
from jitexp.worker.timing import calibrate, measure_rounds  # noqa: E402

# timing=quick as it was when these figures were taken (2026-12-06); since then 100 warm-up calls and 10 ms samples
QUICK = TimingConfig(
    warmup=1, min_samples=3, max_samples=20, min_sample_time_s=0.0005, max_time_s=0.2, target_rel_ci=0.1
)


def arms(case: str) -> dict:
    """Each arm: a function returning one run's median seconds per call."""
    f, args = jax.jit(user_plain.CASES[case]["fn"]), user_plain.inputs(case)

    def loop(n: int) -> tuple[float, object]:
        start = time.perf_counter_ns()
        for _ in range(n - 1):
            f(*args).block_until_ready()
        out = f(*args).block_until_ready()
        return (time.perf_counter_ns() - start) / 1e9 / n, out

    def rounds(**kw: bool):
        return lambda: float(
            np.median(measure_rounds({"jit": loop}, QUICK, tick=noise.cpu_times, **kw).samples_s["jit"])
        )

    def bare() -> float:
        loop(1)
        n = calibrate(loop, QUICK.min_sample_time_s).number
        return float(np.median([loop(n)[0] for _ in range(14)]))

    loop(100)
    return {
        "old": rounds(settle=False, collect_first=False),
        "settle": rounds(settle=True, collect_first=False),
        "collect_first": rounds(settle=False, collect_first=True),
        "both": rounds(),
        "bare": bare,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--case", default="add_one", choices=[c for c in user_plain.CASES if c != "optax_step"])
    a = parser.parse_args()
    runs = arms(a.case)
    names = list(runs)
    got: dict[str, list[float]] = {n: [] for n in names}
    for i in range(a.runs):
        k = i % len(names)
        order = names[k:] + names[:k]
        for name in order if (i // len(names)) % 2 == 0 else order[::-1]:
            got[name].append(runs[name]())
    old = np.asarray(got["old"])
    rng = np.random.default_rng(0)
    for name, values in got.items():
        ratio = np.asarray(values) / old
        boot = np.median(ratio[rng.integers(0, ratio.size, (5000, ratio.size))], axis=1)
        print(
            f"{name:13} median {np.median(values) * 1e6:9.2f}us  ratio to old {np.median(ratio):.3f} "
            f"(95% CI {np.percentile(boot, 2.5):.3f}-{np.percentile(boot, 97.5):.3f})  runs {ratio.size}"
        )


if __name__ == "__main__":
    main()
