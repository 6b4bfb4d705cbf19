"""Do separate invocations agree? The same paired job run 5 times as separate `jitexp` commands.

For each case, `jitexp experiment=seed_speedup OVERRIDES` runs --runs times in a row (each a
fresh command, its own forkserver and worker processes). The table prints every run's paired
speedup with its 95% CI and verdict, then the median of the runs' speedups, how many runs'
CIs contain it (target: at least 4 of 5) and how many verdicts differ from the most common one
(target: 0).

    python benchmarks/reproducibility.py [--runs 5] [--timing default]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

CASES = {
    "compute_heavy 1000 (seed_speedup)": [],
    "elementwise_chain 1e4": ["workload=elementwise_chain", "size=10000"],
}


def jitexp_command() -> list[str]:
    return [sys.executable, "-m", "jitexp"]


def run_once(overrides: list[str], timing: str, folder: Path) -> tuple[pd.Series, float]:
    start = time.perf_counter()
    proc = subprocess.run(
        [*jitexp_command(), "experiment=seed_speedup", *overrides, f"timing={timing}", f"hydra.run.dir={folder}"],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"jitexp failed:\n{proc.stderr[-2000:]}")
    rows = pd.read_csv(folder / "results.csv").set_index("mode")
    return rows.loc["jit"], wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timing", default="default")
    args = parser.parse_args()
    need = args.runs - 1 if args.runs >= 5 else args.runs
    print(
        f"{args.runs} separate invocations per case, timing={args.timing}, "
        f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.2f}\n"
    )
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        for case, overrides in CASES.items():
            rows = []
            for i in range(args.runs):
                row, wall = run_once(overrides, args.timing, Path(tmp) / f"{len(summary)}_{i}")
                rows.append(row)
                print(
                    f"{case:36} run {i + 1}: {row['speedup']:.3f}x  CI {row['speedup_ci_low']:.3f}-"
                    f"{row['speedup_ci_high']:.3f}  {row['verdict']:26} jit median {row['median_s'] * 1e3:.3f} ms, "
                    f"{int(row['n_processes'])} processes, {wall:.1f} s"
                )
            speedups = np.array([r["speedup"] for r in rows])
            middle = float(np.median(speedups))
            inside = sum(r["speedup_ci_low"] <= middle <= r["speedup_ci_high"] for r in rows)
            verdicts = Counter(r["verdict"] for r in rows)
            flips = args.runs - verdicts.most_common(1)[0][1]
            summary.append((case, middle, inside, flips, verdicts.most_common(1)[0][0]))
            print()
    print(f"{'case':36} {'median':>7} {'CIs containing it':>18} {'target':>7} {'verdict flips':>14} {'target':>7}  ok")
    failures = 0
    for case, middle, inside, flips, common in summary:
        ok = inside >= need and flips == 0
        failures += not ok
        print(
            f"{case:36} {middle:6.3f}x {inside:>12} of {args.runs} {'>=' + str(need):>7} {flips:>14} {'0':>7}  "
            f"{'yes' if ok else 'NO'}  ({common})"
        )
    print(f"\n{failures} case(s) outside the target")


if __name__ == "__main__":
    main()
