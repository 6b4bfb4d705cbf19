"""Time to an answer, now against before (issue 48): job_time.py's cases, this install ("now") and an older
checkout ("before", its src/ and conf/ first on PYTHONPATH) in turn, the order swapped each pair.

Prints per run the wall and the job line's split, then per case the pair-by-pair ratios now / before (<= 1: the
change did not slow it) and the command's own time (wall minus the job's wall from the split) of each side, and
each mode's cold first call (results.csv's first_call_s) now / before (issue 61: within 10%).

    git worktree add /tmp/before COMMIT && mkdir -p .before && cp -r /tmp/before/src .before/ \\
        && cp -r /tmp/before/conf .before/src/jitexp/conf
    python benchmarks/job_time_ab.py --before .before/src [--cases main,add_one] [--pairs 2]
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import job_time  # noqa: E402


def job_wall(split: str) -> float:
    """The job's own wall seconds from the block's job line: `28.2 s: setup 3.1 s, ...` or `624 ms: ...`."""
    found = re.match(r"([\d.]+) (s|ms):", split)
    if not found:
        return float("nan")
    return float(found[1]) * (1e-3 if found[2] == "ms" else 1.0)


def cold_calls(folder: Path) -> dict[str, float]:
    """Each mode's cold first call in seconds (results.csv's first_call_s), from a finished job's folder."""
    path = folder / "results.csv"
    if not path.exists():
        return {}
    with path.open() as f:
        return {r["mode"]: float(r["first_call_s"]) for r in csv.DictReader(f) if r.get("first_call_s")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="a folder holding the older jitexp package (with its conf)")
    parser.add_argument("--cases", default="main,add_one")
    parser.add_argument("--pairs", type=int, default=2)
    options = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="jitexp-job-time-ab-"))
    base = os.environ.get("PYTHONPATH", "")
    paths = {"now": base, "before": f"{Path(options.before).resolve()}{os.pathsep}{base}"}
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
    colds: dict[tuple[str, str], list[dict[str, float]]] = {}
    print(f"plain process: {job_time.plain():.2f} s", flush=True)
    job_time.run(*job_time.CASES["add_one"][:1], out, "warm-up")  # the peaks stored before either side is timed
    for pair in range(options.pairs):
        for name in options.cases.split(","):
            sides = ["now", "before"] if pair % 2 == 0 else ["before", "now"]
            for side in sides:
                os.environ["PYTHONPATH"] = paths[side]
                folder = f"{name}-{side}-{time.time_ns()}"
                wall, split = job_time.run(job_time.CASES[name][0], out, folder)
                runs.setdefault((name, side), []).append((wall, wall - job_wall(split)))
                colds.setdefault((name, side), []).append(cold_calls(out / folder))
                print(f"{side:<6} {name:<12} {wall:6.1f} s  {split}", flush=True)
    os.environ["PYTHONPATH"] = base
    print(f"\n{'case':<12} {'now / before (pair by pair)':<30} {'own time now / before':<24} target")
    for name in options.cases.split(","):
        now, before = runs[(name, "now")], runs[(name, "before")]
        ratios = " ".join(f"{n[0] / b[0]:.3f}" for n, b in zip(now, before))
        own = " ".join(f"{n[1]:.1f}/{b[1]:.1f}" for n, b in zip(now, before))
        print(f"{name:<12} {ratios:<30} {own:<24} <= 1")
    print(f"\n{'case':<12} {'mode':<8} {'cold first call now / before (pair by pair)':<46} target")
    for name in options.cases.split(","):
        now, before = colds[(name, "now")], colds[(name, "before")]
        for mode in sorted({m for c in now for m in c}):
            ratios = " ".join(f"{n[mode] / b[mode]:.3f}" for n, b in zip(now, before) if mode in n and mode in b)
            print(f"{name:<12} {mode:<8} {ratios:<46} 0.9-1.1")


if __name__ == "__main__":
    main()
