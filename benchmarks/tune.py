"""Does the tune sweeper (hydra/sweeper=tune, issue 58) find what is there, and only that? Three checks, one table.

1. planted: a function whose steady time is 1 + 2|k - 7| rounds of tanh(x @ x) (benchmarks/tune_fns.py), searched
   over k = int(interval(1,10)) with 8 trials (timing=quick, the default runoff, no confirmation), once per seed.
   Target: the study's best is k=7 in >= 9 of 10 seeds. Beside it, from the same studies, the k the search's own
   values would have named (the lowest trial value, as before the runoff).
2. flat: a function whose time does not depend on k (the same program for every k), searched over choice(1,2,3)
   with 3 trials, the best confirmed against k=0 in 6 paired fresh processes. Target: the line says "no setting is
   significantly faster than the baseline" in >= 19 of 20 studies.
3. the shipped CPU example, `jitexp experiment=tune_rnn` (8 trials of 20 points), beside the full grid of the same
   space as a plain sweep (`jitexp -m ... workload.params.unroll=1,2,4,8,16 workload.params.batch=1,4,16,64`, the
   same timing): the study's best, its confirmed speedup and CI and its wall time; the grid's winner per example,
   its wall time, and where the study's best stands in the grid (tied with the winner when their CIs overlap).
   Informational: the two run one after the other, so their wall times are one run's, on a shared host.

    python benchmarks/tune.py [--only planted,flat,rnn] [--seeds 10] [--flat 20] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from tune_fns import PLANTED_AT  # noqa: E402

FUNCTION = [
    "mode=jit",
    "timing=quick",
    "progress=false",
    "workload=custom",
    "workload.args=[{shape:[96,96]},{value:${workload.params.k}}]",
    "workload.static_argnums=[1]",
]
PLANTED = [*FUNCTION, "workload.fn=tune_fns.planted", "+workload.params.k=1"]
PLANTED += ["hydra.sweeper.params.workload.params.k=int(interval(1,10))", "tune.trials=8", "tune.confirm_processes=0"]
FLAT = [*FUNCTION, "workload.fn=tune_fns.flat", "+workload.params.k=0"]
FLAT += ["hydra.sweeper.params.workload.params.k=choice(1,2,3)", "tune.trials=3", "tune.confirm_processes=6"]
GRID = ["workload=rnn_scan", "mode=jit", "timing=quick", "progress=false", "size=32"]
GRID += ["workload.params.unroll=1,2,4,8,16", "workload.params.batch=1,4,16,64"]
NO_BETTER = "no setting is significantly faster than the baseline"
LINE = re.compile(
    r"best: (?P<params>.*): (?P<ratio>[\d.]+)x (?P<word>faster|slower) than the baseline \(95% CI (?P<ci>[^)]*)\)"
)


LOADS: list[float] = []  # the host's 1-minute load average at the end of each study: how loaded the run was


def jitexp(folder: Path, *args: str) -> tuple[float, subprocess.CompletedProcess]:
    """`python -m jitexp ARGS hydra.sweep.dir=FOLDER`, with benchmarks/ importable; its wall time and process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))}
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "jitexp", *args, f"hydra.sweep.dir={folder}"], capture_output=True, text=True, env=env
    )
    LOADS.append(os.getloadavg()[0])
    return time.monotonic() - start, proc


def verdict_line(folder: Path, proc: subprocess.CompletedProcess) -> str:
    """The study's last line (tune.txt), or what went wrong in one line."""
    path = folder / "tune.txt"
    if path.exists():
        return path.read_text().strip()
    return f"no verdict (exit {proc.returncode}): {(proc.stderr.strip().splitlines() or ['?'])[-1][:200]}"


def planted(root: Path, seeds: int) -> tuple[int, list[str], list[float], int, list[str]]:
    """Studies of the planted function, one per seed: how many found k=7, the k each found, their wall times, how
    many had k=7 as the best or tied with it, and the k each search's own values put lowest (no runoff)."""
    found, walls, tied, searched = [], [], 0, []
    for seed in range(seeds):
        folder = root / f"planted_{seed}"
        wall, proc = jitexp(folder, "-m", "hydra/sweeper=tune", *PLANTED, f"tune.seed={seed}")
        walls.append(wall)
        trials = pd.read_csv(folder / "trials.csv") if (folder / "trials.csv").exists() else pd.DataFrame()
        best = trials[trials["best"]] if "best" in trials else trials
        k = str(int(best["param_workload.params.k"].iloc[0])) if len(best) else f"none (exit {proc.returncode})"
        found.append(k)
        values = trials.dropna(subset=["value_0"]) if "value_0" in trials else trials
        searched.append(
            str(int(values.loc[values["value_0"].idxmin(), "param_workload.params.k"])) if len(values) else "-"
        )
        seven = trials[trials["param_workload.params.k"] == PLANTED_AT] if len(trials) else trials
        tied += bool(len(seven)) and bool(seven["best"].iloc[0] or seven["tied"].iloc[0])
        print(
            f"planted seed {seed}: best k={k} (the search's values: k={searched[-1]}) of {len(trials)} trials, "
            f"{wall:.0f} s",
            flush=True,
        )
    return sum(k == str(PLANTED_AT) for k in found), found, walls, tied, searched


def flat(root: Path, studies: int) -> tuple[int, list[str], list[float]]:
    """Studies of the flat function: how many said no setting is significantly faster, every line, wall times."""
    lines, walls = [], []
    for seed in range(studies):
        folder = root / f"flat_{seed}"
        wall, proc = jitexp(folder, "-m", "hydra/sweeper=tune", *FLAT, f"tune.seed={seed}")
        walls.append(wall)
        lines.append(verdict_line(folder, proc))
        print(f"flat seed {seed}: {lines[-1]} ({wall:.0f} s)", flush=True)
    return sum(line.startswith(NO_BETTER) for line in lines), lines, walls


def per_example(rows: pd.DataFrame) -> pd.DataFrame:
    """A grid's ok rows with their median and CI per example (divided by the batch)."""
    ok = rows[rows["status"] == "ok"].copy()
    for column in ("median_s", "ci95_low_s", "ci95_high_s"):
        ok[column.replace("_s", "_us")] = ok[column] / ok["param_batch"] * 1e6
    return ok


def rnn(root: Path) -> list[tuple[str, str]]:
    """The shipped study and the full grid of its space: the table's rows."""
    folder = root / "tune_rnn"
    wall, proc = jitexp(folder, "experiment=tune_rnn")
    line = verdict_line(folder, proc)
    trials = pd.read_csv(folder / "trials.csv") if (folder / "trials.csv").exists() else pd.DataFrame()
    print(f"tune_rnn: {line} ({wall:.0f} s)", flush=True)
    best = trials[trials["best"]].iloc[0] if "best" in trials and trials["best"].any() else None
    grid_folder = root / "grid_rnn"
    grid_wall, grid_proc = jitexp(grid_folder, "-m", *GRID)
    if not (grid_folder / "results.csv").exists():
        return [("tune_rnn study", f"{line}; {len(trials)} trials, {wall:.0f} s"), ("grid", grid_proc.stderr[-200:])]
    grid = per_example(pd.read_csv(grid_folder / "results.csv"))
    win = grid.loc[grid["median_us"].idxmin()]
    rows = [
        ("tune_rnn study", f"{line}; {len(trials)} trials, study wall {wall:.0f} s"),
        (
            "the same space as a grid",
            f"{len(grid)} jobs, wall {grid_wall:.0f} s; winner unroll={int(win['param_unroll'])} "
            f"batch={int(win['param_batch'])}: {win['median_us']:.1f} us per example "
            f"(95% CI {win['ci95_low_us']:.1f}-{win['ci95_high_us']:.1f})",
        ),
    ]
    if best is not None:
        unroll, batch = int(best["param_workload.params.unroll"]), int(best["param_workload.params.batch"])
        there = grid[(grid["param_unroll"] == unroll) & (grid["param_batch"] == batch)]
        if len(there):
            point = there.iloc[0]
            tied = point["ci95_low_us"] <= win["ci95_high_us"] and win["ci95_low_us"] <= point["ci95_high_us"]
            rows.append(
                (
                    "the study's best in the grid",
                    f"unroll={unroll} batch={batch}: {point['median_us']:.1f} us per example (95% CI "
                    f"{point['ci95_low_us']:.1f}-{point['ci95_high_us']:.1f}), rank "
                    f"{int((grid['median_us'] < point['median_us']).sum()) + 1} of {len(grid)}, "
                    f"{'tied with' if tied else 'not tied with'} the grid's winner",
                )
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="planted,flat,rnn")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--flat", type=int, default=20)
    parser.add_argument("--keep", type=Path, help="keep the studies' folders here (default: a temporary folder)")
    args = parser.parse_args(argv)
    only = set(args.only.split(","))
    root = args.keep or Path(tempfile.mkdtemp(prefix="tune_bench_"))
    root.mkdir(parents=True, exist_ok=True)
    table: list[tuple[str, str, str, str]] = []
    ok = True
    if "planted" in only:
        hits, found, walls, tied, searched = planted(root, args.seeds)
        need = -(-9 * args.seeds // 10)
        ok &= hits >= need
        table.append(
            (
                f"planted optimum k={PLANTED_AT} found (8 trials of 10 points)",
                f"{hits} of {args.seeds} seeds (best k: {' '.join(found)}; k={PLANTED_AT} best or tied: {tied}); "
                f"the search's values alone: {sum(k == str(PLANTED_AT) for k in searched)} of {args.seeds} "
                f"(k: {' '.join(searched)}); a study {statistics.median(walls):.0f} s",
                f">= {need} of {args.seeds}",
                "yes" if hits >= need else "NO",
            )
        )
    if "flat" in only:
        said, lines, walls = flat(root, args.flat)
        need = -(-19 * args.flat // 20)
        ok &= said >= need
        others = sorted({line for line in lines if not line.startswith(NO_BETTER)})
        table.append(
            (
                '"no setting is significantly faster" on a flat function',
                f"{said} of {args.flat} studies; a study {statistics.median(walls):.0f} s"
                + (f"; else: {' | '.join(others)}" if others else ""),
                f">= {need} of {args.flat}",
                "yes" if said >= need else "NO",
            )
        )
    if "rnn" in only:
        table += [(name, result, "-", "") for name, result in rnn(root)]
    width = max(len(row[0]) for row in table)
    print(f"\n{'check':{width}}  result  |  target  |  ok")
    for name, result, target, good in table:
        print(f"{name:{width}}  {result}  |  {target}  |  {good}")
    if LOADS:
        print(
            f"\nload average (1 min) at the studies' ends: min {min(LOADS):.1f}, median "
            f"{statistics.median(LOADS):.1f}, max {max(LOADS):.1f} ({len(LOADS)} studies)"
        )
    print(f"folders: {root}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
