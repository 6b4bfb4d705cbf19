"""How jitexp-history's cost grows with runs (issue 24's scale target: 1,000 runs of 50 cases gathered, searched
for steps and drawn in under 20 s on the 2-core VM).

Synthetic run folders (a results.csv of 50 cases in two modes and its processes.csv, as a gathered run holds), one
per commit, with a step at the middle; each phase timed: gather (history.csv's rows), steps, the page.

    python benchmarks/history.py [--runs 100,300,1000] [--cases 50]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.report.history.page import write_page
from jitexp.report.history.timeline import history, steps_table
from jitexp.store.csvio import write_csv
from jitexp.store.folders import PROCESSES_CSV, RESULTS_CSV

TARGET_S = 20.0


def make_runs(root: Path, runs: int, cases: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for r in range(runs):
        level = 1.0 if r < runs // 2 else 1.3
        rows, procs = [], []
        for c in range(cases):
            for mode in ("eager", "jit"):
                value = 1e-4 * (c + 1) * level * np.exp(rng.normal(0, 0.05))
                rows.append(
                    {
                        "workload": f"w{c}",
                        "mode": mode,
                        "size": 64,
                        "dtype": "float32",
                        "status": "ok",
                        "median_s": value,
                        "ci95_low_s": value * 0.98,
                        "ci95_high_s": value * 1.02,
                        "first_call_s": 0.05,
                        "compile_s": 0.02 * np.exp(rng.normal(0, 0.1)),
                        "trace_s": 0.004,
                        "n_processes": 6,
                        "steal_median": 0.0,
                        "hostname": "vm",
                        "cpu_model": "cpu",
                        "device_kind": "cpu",
                        "jax_version": "0.10.2",
                        "code_commit": f"{r:040x}",
                        "code_commit_date": (pd.Timestamp("2026-01-01", tz="UTC") + pd.Timedelta(hours=r)).isoformat(),
                        "code_subject": f"commit {r}",
                        "timestamp": (pd.Timestamp("2026-02-01", tz="UTC") + pd.Timedelta(hours=r)).isoformat(),
                    }
                )
                procs += [{"workload": f"w{c}", "mode": mode, "process": p, "compile_s": 0.02} for p in range(6)]
        folder = root / f"run{r:04d}"
        write_csv(pd.DataFrame(rows), folder / RESULTS_CSV)
        write_csv(pd.DataFrame(procs), folder / PROCESSES_CSV)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", default="100,300,1000")
    parser.add_argument("--cases", type=int, default=50)
    args = parser.parse_args()
    print(f"{'runs':>6} {'cases':>6} {'gather s':>9} {'steps s':>8} {'page s':>7} {'total s':>8}  target")
    for runs in (int(n) for n in args.runs.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            make_runs(root, runs, args.cases)
            start = time.perf_counter()
            tidy = history(str(root / "run*"))
            gathered = time.perf_counter()
            steps = steps_table(tidy)
            stepped = time.perf_counter()
            write_page(tidy, steps, root / "out")
            drawn = time.perf_counter()
        total = drawn - start
        print(
            f"{runs:>6} {args.cases:>6} {gathered - start:>9.1f} {stepped - gathered:>8.1f} {drawn - stepped:>7.1f} "
            f"{total:>8.1f}  {'<' if runs == 1000 else ''}{TARGET_S if runs == 1000 else '-'}"
        )


if __name__ == "__main__":
    main()
