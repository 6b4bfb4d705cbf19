"""Record an A/A history on this machine (issue 49): N default runs of one unchanged small function, back to back,
in a git repository of one commit, then keep what the step test is calibrated on in a small CSV.

Each run is `jitexp workload=custom workload.fn=hm.f workload.args=[{shape:[128,128]}] mode=jit` at
`timing=default` (6-12 processes, ~10-20 s). Kept: each process's median (processes.csv) in
tests/data/aa_history/<name>_processes.csv (run, process, median_s) and each process's rounds (samples.csv) in
<name>_rounds.csv (run, process, per_call_s). benchmarks/history_steps.py and tests/unit/test_steps.py simulate
lines by resampling these runs and their processes (report/steps_sim.py).

    python benchmarks/history_aa_record.py [--runs 24] [--name cpu_vm] [--work /tmp/aa]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd

MODULE = """import jax.numpy as jnp


def f(x):
    for _ in range(2):
        x = jnp.tanh(x @ x)
    return x
"""
ARGS = ["workload=custom", "workload.fn=hm.f", "workload.args=[{shape:[128,128]}]", "mode=jit"]
BIN = Path(sys.executable).parent
OUT = Path(__file__).resolve().parents[1] / "tests" / "data" / "aa_history"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def record(work: Path, runs: int) -> None:
    """`runs` default runs of hm.f in work/runs/NN, one commit, back to back."""
    work.mkdir(parents=True, exist_ok=True)
    if not (work / ".git").exists():
        git(work, "init", "-q")
        git(work, "config", "user.email", "dev@example.com")
        git(work, "config", "user.name", "dev")
        (work / ".gitignore").write_text("runs/\nhistory/\n__pycache__/\n")
        (work / "hm.py").write_text(MODULE)
        git(work, "add", "hm.py", ".gitignore")
        git(work, "commit", "-qm", "unchanged")
    for i in range(1, runs + 1):
        if (work / "runs" / f"{i:02d}" / "results.csv").is_file():
            continue
        run = subprocess.run(
            [str(BIN / "jitexp"), *ARGS, f"hydra.run.dir=runs/{i:02d}"], cwd=work, capture_output=True, text=True
        )
        if run.returncode:
            raise SystemExit(run.stderr[-2000:])
        print(f"run {i:2d}: {run.stdout.splitlines()[0][:110]}", flush=True)


def kept(work: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """What the calibration needs of every run: each process's median (the level a default run's processes
    give) and each process's rounds (what a one-process quick run is made of)."""
    procs, rounds = [], []
    for folder in sorted((work / "runs").iterdir()):
        p = pd.read_csv(folder / "processes.csv")
        if "replaced" in p.columns:
            p = p[~p["replaced"].astype(bool)]
        procs.append(pd.DataFrame({"run": int(folder.name), "process": p["process"], "median_s": p["median_s"]}))
        r = pd.read_csv(folder / "samples.csv")
        r = r[r["process"].isin(p["process"])]
        rounds.append(pd.DataFrame({"run": int(folder.name), "process": r["process"], "per_call_s": r["per_call_s"]}))
    return pd.concat(procs, ignore_index=True), pd.concat(rounds, ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=24)
    parser.add_argument("--name", default="cpu_vm")
    parser.add_argument("--work", default="/tmp/aa")
    args = parser.parse_args()
    record(Path(args.work), args.runs)
    OUT.mkdir(parents=True, exist_ok=True)
    procs, rounds = kept(Path(args.work))
    procs.to_csv(OUT / f"{args.name}_processes.csv", index=False, float_format="%.5g")
    rounds.to_csv(OUT / f"{args.name}_rounds.csv", index=False, float_format="%.5g")
    print(f"{OUT}/{args.name}_*.csv: {procs['run'].nunique()} runs, {len(procs)} processes, {len(rounds)} rounds")


if __name__ == "__main__":
    main()
