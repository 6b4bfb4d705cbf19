"""jitexp-compare BASE NEW: did a change make things faster or slower, per case, with CIs, and a gate (exit 1).

The command line: the table on the terminal, compare.csv, compare.md and compare.png, the gate's exit status.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis.stats import ALPHA, CHANGE_METRICS, THRESHOLD
from jitexp.noise import PROBES
from jitexp.report.compare.chart import compare_chart
from jitexp.report.compare.gate import MISSING, compare, failing
from jitexp.report.compare.host_drift import drift_lines
from jitexp.report.compare.runs import (
    DIRECTION,
    environment_diff,
    load_side,
    machine_scope,
    matched_columns,
    unmatched,
)
from jitexp.report.compare.text import gate_line, gate_notes, no_case_in_common, notes, render, shared_line, wrapped
from jitexp.report.shared.cases import case_columns
from jitexp.report.shared.memory import MEMORY_METRICS, memory_of, metric_names, parse_threshold
from jitexp.store.csvio import BadCsv, writable, write_atomic, write_csv
from jitexp.store.owned import NotOurs, record, refuse_foreign

COMPARE_FILES = ("compare.csv", "compare.md", "compare.png")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jitexp-compare",
        description=__doc__.splitlines()[0],
        epilog=(
            "Exit status: 0 when the gate passes; 1 when a --fail-on metric is significantly slower (or cannot "
            "tell, unless --allow-undetectable), a case broke (ok in BASE, an error in NEW: always), a case of "
            "BASE is missing from NEW (unless --allow-missing), or no case is in common; 2 on a usage mistake. "
            "The host probes' drift is printed for information and excuses nothing unless --excuse-host-drift."
        ),
    )
    parser.add_argument("base", metavar="BASE", help="the reference run or sweep folder")
    parser.add_argument("new", metavar="NEW", help="the run or sweep folder to judge")
    parser.add_argument(
        "--threshold",
        type=float,
        default=THRESHOLD,
        help=f"smallest change that counts, as a fraction (default {THRESHOLD})",
    )
    parser.add_argument("--alpha", type=float, default=ALPHA, help=f"significance level (default {ALPHA})")
    parser.add_argument(
        "--fail-on",
        default=",".join(CHANGE_METRICS),
        help="metrics whose significant slowdown (or a 'cannot tell') exits 1 (default: steady,first_call,compile); "
        "memory metrics too: " + ", ".join(MEMORY_METRICS) + " (XLA's analysis compared exactly, an increase "
        "beyond --memory-threshold fails; device_peak_bytes and peak_rss_growth_bytes over processes like a time; "
        "naming any of them also fails a lost donation); a broken case fails whatever this says",
    )
    parser.add_argument(
        "--memory-threshold",
        default="0",
        metavar="BYTES_OR_PERCENT",
        help="the largest increase of an exact memory metric (XLA's analysis) that passes: bytes (4096, 1MiB) or "
        "a percentage of BASE (2%%); default 0, any increase fails",
    )
    parser.add_argument(
        "--memory",
        action="store_true",
        help="every memory metric in the table (default: those --fail-on names, and a lost donation)",
    )
    parser.add_argument(
        "--allow-undetectable",
        action="store_true",
        help="a 'cannot tell' (too few processes to reach significance, or a metric one side lacks) does not "
        "fail --fail-on",
    )
    parser.add_argument(
        "--allow-missing",
        action="store_true",
        help="a case of BASE that NEW does not have at all does not fail (a case that errors in NEW still does)",
    )
    parser.add_argument(
        "--excuse-host-drift",
        nargs="?",
        const="auto",
        default=None,
        metavar="PROBE",
        help="turn a steady-state slower (or faster) into 'within host drift' when the host probe doing the "
        "case's kind of work (auto, the default; or PROBE: " + ", ".join(PROBES) + ") moved the same way, its "
        "CI over processes excluding 1, and the case moved no further than it beyond --threshold (name a probe as --excuse-host-drift=PROBE). Off unless given: a slowdown "
        "fails, whatever the host did (the table still shows the probe)",
    )
    parser.add_argument("--ignore", default="", help="identity columns not to match on, e.g. mode (comma-separated)")
    parser.add_argument(
        "--out", metavar="DIR", help="where compare.csv, compare.md, compare.png go (default NEW/compare)"
    )
    parser.add_argument(
        "--all",
        action="store_true",
        dest="every",
        help="every case column, the notes and the process counts in the table (default: the case columns that "
        "differ between rows, with workload and mode; the rest on one line above it, the notes below it)",
    )
    parser.add_argument("--no-plot", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: the table, files, and the gate's exit status (see build_parser's epilog)."""
    args = build_parser().parse_args(argv)
    fail_on = metric_names(args.fail_on)
    bad = [m for m in fail_on if m not in (*CHANGE_METRICS, *MEMORY_METRICS)]
    excuse = args.excuse_host_drift
    try:
        memory_threshold, threshold_error = parse_threshold(args.memory_threshold), ""
    except ValueError as exc:
        memory_threshold, threshold_error = (0.0, 0.0), f"--memory-threshold={exc}"
    what = (
        f"--fail-on={bad[0]!r} is invalid; valid choices: {', '.join((*CHANGE_METRICS, *MEMORY_METRICS))}"
        if bad
        else threshold_error
        if threshold_error
        else "--threshold and --alpha must lie in (0, 1)"
        if not (0 < args.threshold < 1 and 0 < args.alpha < 1)
        else f"--excuse-host-drift={excuse!r} is invalid; valid choices: auto, {', '.join(PROBES)}"
        if excuse not in (None, "auto", *PROBES)
        else ""
    )
    if what:
        print(f"jitexp-compare: error: {what}", file=sys.stderr)
        return 2
    ignore = [c.strip() for c in args.ignore.split(",") if c.strip()]
    try:
        base, new = load_side(args.base), load_side(args.new)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, BadCsv) as exc:
        print(f"jitexp-compare: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    known = set(case_columns(base.every_row)) | set(case_columns(new.every_row))
    unknown = [c for c in ignore if c not in known]
    if unknown:  # a typo would be ignored: no column of that name to leave out of the matching
        close = difflib.get_close_matches(unknown[0], sorted(known), n=1)
        guess = f"did you mean {close[0]}? " if close else ""
        print(
            f"jitexp-compare: error: --ignore={unknown[0]!r} is invalid; no identity column of either run has that "
            f"name; {guess}valid choices: {', '.join(sorted(known))}",
            file=sys.stderr,
        )
        return 2
    default = Path(args.new if Path(args.new).is_dir() else Path(args.new).parent) / "compare"
    out = Path(args.out) if args.out else default
    try:  # before a line is printed: a user's compare.md there is not replaced after the table
        refuse_foreign(out, COMPARE_FILES, "jitexp-compare", default=not args.out)
        writable(out)
    except NotOurs as exc:
        print(f"jitexp-compare: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a read-only NEW folder, an --out that cannot be made
        where = "--out" if args.out else "NEW's compare/ folder (choose another with --out)"
        print(f"jitexp-compare: error: {where} {out} cannot be written: {exc.strerror or exc}", file=sys.stderr)
        return 2
    memory = list(MEMORY_METRICS) if args.memory else memory_of(fail_on)
    table = compare(
        base,
        new,
        threshold=args.threshold,
        alpha=args.alpha,
        ignore=ignore,
        excuse_host_drift=excuse,
        memory=memory,
        memory_threshold=memory_threshold,
    )
    keys = matched_columns(base, new, ignore)
    if table.empty or (table["verdict"] == MISSING).all():
        print(f"jitexp-compare: {no_case_in_common(base, new, keys)}", file=sys.stderr)
        return 1
    env, missing = environment_diff(base, new), unmatched(base, new, ignore)
    scope = machine_scope(base, new)
    head = [
        *wrapped([f"jitexp-compare ({scope}; threshold {args.threshold:.0%}, alpha {args.alpha}); {DIRECTION}"]),
        f"  BASE {args.base}",
        f"  NEW  {args.new}",
        *wrapped([f"differs: {line}" for line in env], "  "),
        *wrapped(drift_lines(base, new, excuse), "  "),
    ]
    from jitexp.analysis.formatting.tables import markdown_table, text_table

    view = render(table, args.threshold, args.alpha, every=args.every)
    shared = "" if args.every else shared_line(table)
    below = [] if args.every else notes(table)
    lines = [*head, "", *wrapped([shared] if shared else []), text_table(view, width=40 if not args.every else 48)]
    lines += ["", "notes:", *wrapped(below, "  ")] if below else []
    lines += ["", *wrapped(missing)] if missing else []
    lines += wrapped(gate_notes(table, args.alpha, excuse))
    bad_rows = failing(table, fail_on, args.allow_undetectable, args.allow_missing)
    lines += ["", gate_line(bad_rows)]
    print("\n".join(lines))
    write_csv(table, out / "compare.csv")
    md = [
        "# jitexp-compare",
        "",
        f"BASE `{args.base}`, NEW `{args.new}` ({scope}); {DIRECTION}.",
        "",
        *(f"- differs: {line}" for line in env),
        *(f"- {line}" for line in drift_lines(base, new, excuse)),
        *([f"- {shared}"] if shared else []),
        "",
        markdown_table(view),
        "",
        *(f"- {line}" for line in below),
        *(f"- {m}" for m in missing),
        "",
        gate_line(bad_rows),
    ]
    if not args.no_plot and np.isfinite(table["ratio"].to_numpy(float)).any():
        compare_chart(table, keys, args.threshold, out / "compare.png")
        md += ["", "![compare](compare.png)"]
    write_atomic(out / "compare.md", ("\n".join(md) + "\n").encode())
    record(out, [name for name in COMPARE_FILES if (out / name).is_file()])
    print(f"\ncompare: {out / 'compare.md'}")
    return 1 if len(bad_rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
