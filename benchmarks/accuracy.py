"""Does jitexp measure what a careful person would? Against a plain loop over 8 processes and pyperf.

For each kernel (jit mode): two `jitexp ... mode=jit` runs (default timing), interleaved with
8 fresh processes that each time the plain loop a user would write
(`for _ in range(n): f(*args).block_until_ready()`, batches of >= 10 ms, median of 30), and
then `python -m pyperf timeit` on the same call (needs the `bench` extra). It prints jitexp's
median against the median of the 8 plain processes (target: within +-5%), whether each jitexp
run's CI covers that reference, the pyperf figure, and the wall time to an answer against
pyperf's (target: at most 1/3).

    python benchmarks/accuracy.py [--kernels add_one,elementwise_chain,compute_heavy]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

KERNELS = {"add_one": 1, "elementwise_chain": 100_000, "compute_heavy": 1000}
HERE = Path(__file__).resolve().parent
PLAIN = """
import sys, time
import numpy as np
sys.path.insert(0, {here!r})
from accuracy import setup
f, args = setup({workload!r}, {size})
out = f(*args).block_until_ready()
start = time.perf_counter(); f(*args).block_until_ready(); one = time.perf_counter() - start
number = max(1, int(0.01 / one))
for _ in range(3):
    f(*args).block_until_ready()
times = []
for _ in range(30):
    start = time.perf_counter_ns()
    for _ in range(number):
        f(*args).block_until_ready()
    times.append((time.perf_counter_ns() - start) / 1e9 / number)
print(np.median(times))
"""


def setup(workload: str, size: int):
    """The jitted function and its inputs, built exactly as jitexp builds them (same seed and dtype)."""
    import jax

    import jitexp
    from jitexp import workloads

    cfg = jitexp.compose([f"workload={workload}", f"size={size}", "mode=jit"])
    args = workloads.build_args(cfg, jax.devices("cpu")[0])
    return jax.jit(workloads.import_fn(cfg.workload.fn), static_argnums=cfg.static_argnums), args


def jitexp_run(workload: str, size: int, folder: Path) -> tuple[pd.Series, float]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "jitexp", f"workload={workload}", f"size={size}", "mode=jit", f"hydra.run.dir={folder}"],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    return pd.read_csv(folder / "results.csv").iloc[0], time.perf_counter() - start


def plain_process(workload: str, size: int) -> float:
    code = PLAIN.format(here=str(HERE), workload=workload, size=size)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(proc.stdout.strip().splitlines()[-1])


def pyperf_run(workload: str, size: int, out: Path) -> tuple[float, float]:
    setup_code = (
        f"import sys; sys.path.insert(0, {str(HERE)!r}); from accuracy import setup; "
        f"f, args = setup({workload!r}, {size}); f(*args).block_until_ready()"
    )
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyperf",
            "timeit",
            "--quiet",
            "-o",
            str(out),
            "-s",
            setup_code,
            "f(*args).block_until_ready()",
        ],
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        return float("nan"), wall
    import pyperf

    return pyperf.Benchmark.load(str(out)).median(), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", default=",".join(KERNELS))
    parser.add_argument("--no-pyperf", action="store_true")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.2f}\n")
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.kernels.split(","):
            size = KERNELS[name]
            runs, plain = [], []
            for half in range(2):  # jitexp, 4 plain processes, jitexp, 4 plain processes
                runs.append(jitexp_run(name, size, Path(tmp) / f"{name}_{half}"))
                plain += [plain_process(name, size) for _ in range(4)]
            reference = float(np.median(plain))
            medians = [r["median_s"] for r, _ in runs]
            covers = sum(r["ci95_low_s"] <= reference <= r["ci95_high_s"] for r, _ in runs)
            ours = float(np.median(medians))
            jit_wall = float(np.mean([w for _, w in runs]))
            perf, perf_wall = (
                (float("nan"), float("nan")) if args.no_pyperf else pyperf_run(name, size, Path(tmp) / f"{name}.json")
            )
            lines.append(
                (
                    name,
                    size,
                    ours,
                    reference,
                    covers,
                    len(runs),
                    perf,
                    jit_wall,
                    perf_wall,
                    json.dumps([round(m * 1e6, 2) for m in medians]),
                    [round(p * 1e6, 2) for p in plain],
                )
            )
            print(f"{name} {size}: jitexp runs {lines[-1][9]} us, plain processes {lines[-1][10]} us")
    print(
        f"\n{'kernel':22} {'jitexp':>10} {'plain x8':>10} {'ratio':>6} {'target':>8} {'CI covers':>9} "
        f"{'pyperf':>10} {'ratio':>6} {'wall jitexp':>11} {'wall pyperf':>11} {'ratio':>6} {'target':>6}  ok"
    )
    failures = 0
    for name, size, ours, ref, covers, n, perf, jw, pw, _, _ in lines:
        ratio, wall_ratio = ours / ref, jw / pw
        ok = abs(ratio - 1) <= 0.05 and (not np.isfinite(wall_ratio) or wall_ratio <= 1 / 3)
        failures += not ok
        print(
            f"{name + ' ' + str(size):22} {ours * 1e6:8.2f}us {ref * 1e6:8.2f}us {ratio:6.3f} {'1+-0.05':>8} "
            f"{covers:>5} of {n} {perf * 1e6:8.2f}us {ours / perf:6.3f} {jw:10.1f}s {pw:10.1f}s {wall_ratio:6.2f} "
            f"{'<=0.33':>6}  {'yes' if ok else 'NO'}"
        )
    print(f"\n{failures} kernel(s) outside the targets")


if __name__ == "__main__":
    main()
