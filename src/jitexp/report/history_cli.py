"""jitexp-history RUN...: many runs on one timeline, ordered by the commit they measured, and the steps in it.

Writes history/history.csv (one row per run, case and metric) and history/steps.csv (each change of level, with
its commit range and a CI). Each RUN is a run or sweep folder, or a glob pattern of them (quote it, so that the
shell leaves it to jitexp).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from jitexp.analysis.formatting import ratio_cell
from jitexp.analysis.stats import CHANGE_METRICS, THRESHOLD
from jitexp.report.history import METRICS, failing_steps, history, steps_table
from jitexp.store.csvio import write_csv

HISTORY_CSV = "history.csv"
STEPS_CSV = "steps.csv"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jitexp-history",
        description=__doc__.splitlines()[0],
        epilog="Exit status: 0; 1 with --fail-on-step when the newest runs are a slower step in a --fail-on metric; "
        "2 on a usage mistake.",
    )
    parser.add_argument("runs", metavar="RUN", nargs="+", help="run or sweep folders, or glob patterns of them")
    parser.add_argument("--out", default="history", help="the folder the files are written to (default: history)")
    parser.add_argument(
        "--threshold",
        type=float,
        default=THRESHOLD,
        help=f"smallest change of level that is a step, as a fraction (default {THRESHOLD})",
    )
    parser.add_argument(
        "--fail-on",
        default=",".join(CHANGE_METRICS),
        help=f"metrics --fail-on-step judges (default: {','.join(CHANGE_METRICS)}; any of {', '.join(METRICS)})",
    )
    parser.add_argument(
        "--fail-on-step",
        action="store_true",
        help="exit 1 when the newest runs of a line are a slower step (or more memory) in a --fail-on metric",
    )
    return parser


def write_history(
    runs: Sequence[str], out: str | Path, threshold: float = THRESHOLD
) -> tuple[pd.DataFrame, pd.DataFrame, Path]:
    """The runs' history and steps, written to out/history.csv and out/steps.csv; returns both and out."""
    tidy = history(runs)
    steps = steps_table(tidy, threshold)
    out = Path(out)
    write_csv(tidy, out / HISTORY_CSV)
    write_csv(steps, out / STEPS_CSV)
    return tidy, steps, out


def summary(tidy: pd.DataFrame, steps: pd.DataFrame) -> str:
    """`12 runs, 2 cases, 5 metrics, on 1 machine; 2 steps`: what the history holds."""
    counts = [(tidy[c].nunique(), c) for c in ("run", "case", "metric")]
    counts.append((tidy["machine"].nunique(), "machine"))
    said = ", ".join(f"{n} {word}{'' if n == 1 else 's'}" for n, word in counts[:3])
    machines = f"on {counts[3][0]} machine{'' if counts[3][0] == 1 else 's'}"
    return f"{said}, {machines}; {len(steps)} step{'' if len(steps) == 1 else 's'}"


def step_line(step: pd.Series) -> str:
    """`workload=matmul ... mode=jit steady: 1.5x slower (95% CI 1.41x-1.6x), between abc12345..def67890 "subject"`."""
    commits = f"{_short(step['commit_before'])}..{_short(step['commit_after'])}"
    subject = f' "{step["subject_after"]}"' if isinstance(step["subject_after"], str) and step["subject_after"] else ""
    if step["metric"] == "peak_memory":
        change = f"{step['ratio']:.3g}x the memory (95% CI {step['ci_low']:.3g}x-{step['ci_high']:.3g}x)"
    else:
        change = ratio_cell(step["ratio"], step["ci_low"], step["ci_high"])
    return f"{step['case']} {step['metric']}: {change}, between {commits}{subject}"


def _short(commit: object) -> str:
    return str(commit)[:8] if isinstance(commit, str) and commit else "?"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    fail_on = [m.strip() for m in args.fail_on.split(",") if m.strip()]
    unknown = [m for m in fail_on if m not in METRICS]
    if unknown:
        parser.error(f"--fail-on={unknown[0]!r} is invalid; valid choices: {', '.join(METRICS)}")
    if not 0 <= args.threshold < 1:
        parser.error(f"--threshold={args.threshold} is invalid; must lie in [0, 1)")
    try:
        tidy, steps, out = write_history(args.runs, args.out, args.threshold)
    except FileNotFoundError as error:
        print(f"jitexp-history: error: {error}", file=sys.stderr)
        return 2
    print(f"{summary(tidy, steps)}: {out / HISTORY_CSV}, {out / STEPS_CSV}")
    for _, step in steps.iterrows():
        print("  " + step_line(step))
    failing = failing_steps(steps, fail_on)
    if args.fail_on_step and len(failing):
        print(f"jitexp-history: {len(failing)} slower step(s) in the newest runs (--fail-on-step)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
