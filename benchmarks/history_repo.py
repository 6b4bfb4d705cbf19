"""Issue 24's history, for real: a git repository of 12 commits of a small workload, one `jitexp` run per commit at
`timing=default`, then `jitexp-history` over the runs. Commit 7 makes the steady state 1.5x slower (a fori_loop of
20 matmuls becomes 30: the same program, more trips); commit 10 makes compiling about 2x costlier (a `lax.cond` branch
that is never taken grows from 2 to 8 sorts: compiled, never run; 105 -> ~200 ms of compile in one process. A
branch of matmuls did not do it: XLA compiled 2 or 12 of them in the same ~110 ms). Then 12 runs of one unchanged commit.

Expected: steady steps at c6..c7 and compile at c9..c10 (first_call and trace may step at c10 too: a cold call
includes its compile); no step in the unchanged history. About 9 minutes on the 2-core VM. Then `jitexp-history
bisect` over the same 12 commits (commit 1 good, commit 12 bad, each tested commit against commit 1 in one
`timing=default` envs job): expected to name commit 7 (steady), and commit 10 with `--metric compile` against commit
7. About 3 minutes each.

    python benchmarks/history_repo.py [--commits 12] [--only changes|unchanged|bisect]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

MODULE = """import jax
import jax.numpy as jnp

TRIPS = {trips}
BRANCH = {branch}


def _never(y):
    for i in range(BRANCH):
        y = jnp.sort(y * (i + 1), axis=i % 2)
    return y


def step(x):
    y = jax.lax.fori_loop(0, TRIPS, lambda i, v: jnp.tanh(v @ x), x)
    return jax.lax.cond(y[0, 0] > 1e30, _never, lambda v: v, y)
"""
BIN = Path(sys.executable).parent


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


ARGS = ["workload=custom", "workload.fn=wl.step", "workload.args=[{shape:[128,128]}]", "mode=jit"]


def commit(repo: Path, i: int, changes: bool) -> None:
    """Commit i of the history: 1.5x the steady work from 7, a costlier compile from 10 (with changes)."""
    if i == 1:
        git(repo, "init", "-q")
        git(repo, "config", "user.email", "dev@example.com")
        git(repo, "config", "user.name", "dev")
        (repo / ".gitignore").write_text("runs/\nhistory/\nbisect*/\n__pycache__/\n")
    trips = 30 if changes and i >= 7 else 20
    branch = 8 if changes and i >= 10 else 2
    (repo / "wl.py").write_text(MODULE.format(trips=trips, branch=branch))
    git(repo, "add", "wl.py", ".gitignore")
    git(repo, "commit", "-qm", f"commit {i}", "--allow-empty")


def history(repo: Path, commits: int, changes: bool) -> pd.DataFrame:
    for i in range(1, commits + 1):
        commit(repo, i, changes)
        run = subprocess.run(
            [str(BIN / "jitexp"), *ARGS, f"hydra.run.dir=runs/{i:02d}"], cwd=repo, capture_output=True, text=True
        )
        if run.returncode:
            raise SystemExit(run.stderr[-2000:])
        print(f"  commit {i:2d}: {run.stdout.splitlines()[0][:110]}", flush=True)
    out = subprocess.run(
        [str(BIN / "jitexp-history"), "runs/*"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    print(out)
    return pd.read_csv(repo / "history" / "steps.csv")


def bisect(repo: Path, commits: int) -> None:
    """`jitexp-history bisect` over the history's commits: steady from commit 1, compile from commit 7."""
    for i in range(1, commits + 1):
        commit(repo, i, changes=True)
    shas = git(repo, "log", "--reverse", "--format=%H").split()
    for metric, good, expected in (("steady", 1, 7), ("compile", 7, 10)):
        started = time.perf_counter()
        out = f"bisect-{metric}"
        run = subprocess.run(
            [str(BIN / "jitexp-history"), "bisect", shas[good - 1], shas[-1], "--metric", metric, "--out", out]
            + ["--", "jitexp", *ARGS],
            cwd=repo,
            capture_output=True,
            text=True,
        )
        print(run.stdout + run.stderr[-2000:])
        table = pd.read_csv(repo / out / "bisect.csv")
        found = table.loc[table["first_slower"], "subject"].tolist()
        print(
            f"bisect {metric} from commit {good}: found {found or 'none'}, expected ['commit {expected}'], "
            f"{len(table)} commits measured in {time.perf_counter() - started:.0f} s\n",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=12)
    parser.add_argument("--only", choices=["changes", "unchanged", "bisect"])
    args = parser.parse_args()
    if args.only in (None, "bisect"):
        with tempfile.TemporaryDirectory() as tmp:
            bisect(Path(tmp), args.commits)
        if args.only:
            return
    for changes in [c for c in (True, False) if args.only != ("unchanged" if c else "changes")]:
        print("a 1.5x steady slowdown at commit 7, compile doubled at 10" if changes else "one unchanged commit")
        with tempfile.TemporaryDirectory() as tmp:
            steps = history(Path(tmp), args.commits, changes)
        found = [f"{metric} at {subject}" for metric, subject in zip(steps["metric"], steps["subject_after"])]
        print(f"steps: {found or 'none'}\n")


if __name__ == "__main__":
    main()
