"""Does a long sweep stay flat? Per-job overhead and driver memory over a 200-job sweep.

Runs `jitexp -m workload=add_one size=1 mode=jit timing=quick seed=range(0,N)` twice, in-process
(`isolate=none`) and with fresh workers (`isolate=process`), sampling the driver's resident memory
(VmRSS) every 0.25 s. Per-job overhead = (sweep wall time - the time workers spent measuring,
`measure_s` summed over rows) / jobs: Hydra, the preflight, starting workers, statistics and CSV
writing. Targets: <= 0.5 s per job with workers; driver RSS growth <= 100 MB from the 10th job on.

    python benchmarks/sweep.py [--jobs 200]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd


def rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def run(isolate: str, jobs: int, folder: Path) -> dict:
    args = [
        sys.executable,
        "-m",
        "jitexp",
        "-m",
        "workload=add_one",
        "size=1",
        "mode=jit",
        "timing=quick",
        f"seed=range(0,{jobs})",
        f"isolate={isolate}",
        f"hydra.sweep.dir={folder}",
    ]
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    samples = []  # (jobs done, rss MB)
    while proc.poll() is None:
        value = rss_mb(proc.pid)
        if value is not None:
            samples.append((sum(1 for _ in folder.glob("*/results.csv")), value))
        time.sleep(0.25)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(proc.stderr.read()[-2000:])
    rows = pd.read_csv(folder / "results.csv")
    after_ten = [rss for done, rss in samples if done >= 10]
    return {
        "isolate": isolate,
        "jobs": jobs,
        "wall_s": wall,
        "measure_s": rows["measure_s"].sum(),
        "overhead_s": (wall - rows["measure_s"].sum()) / jobs,
        "rss_start_mb": after_ten[0] if after_ten else float("nan"),
        "rss_growth_mb": (max(after_ten) - after_ten[0]) if after_ten else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=200)
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.2f}, {args.jobs} jobs per sweep\n")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for isolate in ("none", "process"):
            results.append(run(isolate, args.jobs, Path(tmp) / isolate))
    print(
        f"{'isolate':8} {'wall':>8} {'measuring':>10} {'overhead/job':>13} {'target':>7} "
        f"{'RSS at job 10':>14} {'RSS growth':>11} {'target':>7}  ok"
    )
    failures = 0
    for r in results:
        target = 0.5 if r["isolate"] == "process" else None
        ok = (target is None or r["overhead_s"] <= target) and r["rss_growth_mb"] <= 100
        failures += not ok
        print(
            f"{r['isolate']:8} {r['wall_s']:7.1f}s {r['measure_s']:9.1f}s {r['overhead_s']:12.3f}s "
            f"{'<=0.5s' if target else '-':>7} {r['rss_start_mb']:12.0f}MB {r['rss_growth_mb']:9.1f}MB "
            f"{'<=100MB':>7}  {'yes' if ok else 'NO'}"
        )
    print(f"\n{failures} row(s) outside the targets")


if __name__ == "__main__":
    main()
