"""jitexp-history RUN...: many runs on one timeline, ordered by the commit they measured, and the steps in it.

Writes history/history.csv (one row per run, case and metric) and history/steps.csv (each change of level, with
its commit range and a CI). Each RUN is a run or sweep folder, or a glob pattern of them (quote it, so that the
shell leaves it to jitexp).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis.formatting.values import format_bytes, format_seconds
from jitexp.analysis.stats import CHANGE_METRICS, THRESHOLD
from jitexp.report.history.page import PAGE, write_page
from jitexp.report.history.timeline import (
    METRICS,
    commit_range,
    counted,
    failing_steps,
    history,
    short_commit,
    step_change,
    steps_table,
)
from jitexp.report.shared.memory import MEMORY_METRICS, metric_names
from jitexp.store.csvio import BadCsv, write_csv
from jitexp.store.owned import NotOurs, record, refuse_foreign

DEFAULT_OUT = "history"

HISTORY_CSV = "history.csv"
STEPS_CSV = "steps.csv"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jitexp-history",
        description=__doc__.splitlines()[0],
        epilog="Exit status: 0; 1 with --fail-on-step when the newest runs are an established slower step in a "
        "--fail-on metric (or a possible one, with --fail-on-possible); "
        "2 on a usage mistake. `jitexp-history bisect GOOD BAD -- jitexp ARGS...` finds the first slower commit "
        "(jitexp-history bisect --help).",
    )
    parser.add_argument("runs", metavar="RUN", nargs="+", help="run or sweep folders, or glob patterns of them")
    parser.add_argument("--out", default=DEFAULT_OUT, help="the folder the files are written to (default: history)")
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
        "--markdown",
        action="store_true",
        help="print a markdown table of the newest run against the level before it, steps flagged (for a CI job "
        "summary or a pull-request comment) instead of the plain lines",
    )
    parser.add_argument(
        "--fail-on-step",
        action="store_true",
        help="exit 1 when the newest runs of a line are an established slower step (or more memory) in a "
        "--fail-on metric",
    )
    parser.add_argument(
        "--fail-on-possible",
        action="store_true",
        help="with --fail-on-step, fail on a possible step too (a large change in the newest runs that is not "
        "established yet: 'possible, needs more runs')",
    )
    return parser


def write_history(
    runs: Sequence[str], out: str | Path, threshold: float = THRESHOLD
) -> tuple[pd.DataFrame, pd.DataFrame, Path]:
    """The runs' history and steps, written to out/history.csv, out/steps.csv and the page out/index.html."""
    out = Path(out)
    refuse_foreign(out, (HISTORY_CSV, STEPS_CSV, PAGE), "jitexp-history", default=out == Path(DEFAULT_OUT))
    tidy = history(runs, progress=Progress())
    steps = steps_table(tidy, threshold)
    write_csv(tidy, out / HISTORY_CSV)
    write_csv(steps, out / STEPS_CSV)
    if not tidy.empty:
        write_page(tidy, steps, out)
    record(out, [name for name in (HISTORY_CSV, STEPS_CSV, PAGE) if (out / name).is_file()])
    return tidy, steps, out


class Progress:
    """`reading runs: 300/1000` on stderr, rewritten in place, once reading has taken over AFTER_S seconds."""

    AFTER_S = 2.0

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if not self.shown and time.perf_counter() - self.start < self.AFTER_S:
            return
        self.shown = True
        end = "\n" if done == total else ""
        print(f"\rreading runs: {done}/{total}", end=end, file=sys.stderr, flush=True)


def summary(tidy: pd.DataFrame, steps: pd.DataFrame) -> str:
    """`12 runs, 2 cases, 5 metrics, on 1 machine; 2 steps (1 possible)`: what the history holds."""
    said = ", ".join(counted(tidy[c].nunique(), c) for c in ("run", "case", "metric"))
    possible = int((~steps["established"].astype(bool)).sum()) if len(steps) else 0
    established = counted(len(steps) - possible, "step")
    more = f" (and {possible} possible)" if possible else ""
    return f"{said}, on {counted(tidy['machine'].nunique(), 'machine')}; {established}{more}"


def step_line(step: pd.Series) -> str:
    """`workload=matmul ... mode=jit steady: 1.5x slower (95% CI 1.41x-1.6x), between abc12345..def67890 "subject"`."""
    commits = commit_range(step)
    subject = f' "{step["subject_after"]}"' if isinstance(step["subject_after"], str) and step["subject_after"] else ""
    said = f"{step['case']} {step['metric']}: {step_change(step)}, between {commits}{subject}"
    sure = "" if _established(step) else "possible, needs more runs: "
    return f"{sure}{said}; {step['evidence']}" if isinstance(step.get("evidence"), str) else f"{sure}{said}"


def _established(step: pd.Series) -> bool:
    """Whether a steps.csv row is an established step (rows without the column, from before issue 49, are)."""
    return bool(step.get("established", True))


def markdown(tidy: pd.DataFrame, steps: pd.DataFrame) -> str:
    """The newest run against the level before it, per case and metric on the newest run's machine: a step that
    the newest runs are on is flagged; otherwise the level is the runs since the last step."""
    if tidy.empty:
        return "No runs."
    newest = tidy.loc[tidy["order"].idxmax()]
    lines = [
        f"**jitexp-history**: newest run {short_commit(newest['code_commit'])} "
        f"({newest['code_subject'] if isinstance(newest['code_subject'], str) else newest['run']}), "
        f"jax {newest['jax_version']}",
        "",
        "| case | metric | newest | before | change | step |",
        "|---|---|---|---|---|---|",
    ]
    mine = tidy[(tidy["line"] == newest["line"])]
    for (case, metric), runs in mine.groupby(["case", "metric"], sort=False):
        runs = runs.sort_values("order")
        if runs["order"].iloc[-1] != newest["order"] or len(runs) < 2:
            continue
        found = steps[(steps["case"] == case) & (steps["metric"] == metric) & (steps["line"] == newest["line"])]
        maybe = found[~found["established"].astype(bool)] if "established" in found.columns else found.iloc[:0]
        found = found.drop(maybe.index)
        last = found.iloc[-1] if len(found) else None
        show = format_bytes if metric in MEMORY_METRICS else format_seconds
        if last is not None and bool(last["newest"]):
            before = runs.iloc[
                len(runs) - int(last["n_after"]) - int(last["n_before"]) : len(runs) - int(last["n_after"])
            ]
            flag = f"**{step_change(last)}** since {short_commit(last['commit_after'])}"
        else:
            start = 0
            if last is not None:
                start = int(runs["run"].tolist().index(last["first_after"]))
            before = runs.iloc[start:-1]
            flag = f"possible, needs more runs: {step_change(maybe.iloc[-1])}" if len(maybe) else ""
        known = before["value"].to_numpy(float)
        # the geometric mean; a memory metric can be 0 bytes (no temporaries), where the median says the level
        level = float(np.exp(np.log(known).mean())) if (known > 0).all() else float(np.median(known))
        value = float(runs["value"].iloc[-1])
        commits = f"{short_commit(before['code_commit'].iloc[0])}..{short_commit(before['code_commit'].iloc[-1])}"
        lines.append(
            f"| {case} | {metric} | {show(value)} | {show(level)} ({len(before)} runs, {commits}) | "
            f"{f'{value / level:.3g}x' if level > 0 else '-'} | {flag} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    fail_on = metric_names(args.fail_on)  # a column's name (temp_size_bytes) or history's old peak_memory too
    unknown = [m for m in fail_on if m not in METRICS]
    what = (
        f"--fail-on={unknown[0]!r} is invalid; valid choices: {', '.join(METRICS)}"
        if unknown
        else f"--threshold={args.threshold} is invalid; must lie in [0, 1)"
        if not 0 <= args.threshold < 1
        else ""
    )
    if what:
        print(f"jitexp-history: error: {what}", file=sys.stderr)
        return 2
    try:
        tidy, steps, out = write_history(args.runs, args.out, args.threshold)
    except (FileNotFoundError, NotOurs, BadCsv) as error:
        print(f"jitexp-history: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # an --out that cannot be written
        print(f"jitexp-history: error: {error.filename or args.out}: {error.strerror or error}", file=sys.stderr)
        return 2
    if args.markdown:
        print(markdown(tidy, steps))
    else:
        print(f"{summary(tidy, steps)}: {out / HISTORY_CSV}, {out / STEPS_CSV}, {out / PAGE}")
        for _, step in steps.iterrows():
            print("  " + step_line(step))
    failing = failing_steps(steps, fail_on, possible=args.fail_on_possible)
    if args.fail_on_step and len(failing):
        print(f"jitexp-history: {len(failing)} slower step(s) in the newest runs (--fail-on-step)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
