"""jitexp-compare's output: the comparison table in words, and the notes and gate line under it."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from jitexp.analysis.formatting import format_seconds, ratio_cell, verdict_words
from jitexp.analysis.stats import ALPHA, CANNOT_TELL, THRESHOLD
from jitexp.report.compare import BROKEN, MISSING
from jitexp.report.compare_runs import COLUMNS, HOST_COLUMNS, NOTE, Side, case_groups
from jitexp.report.host_drift import host_moved


def render(table: pd.DataFrame, threshold: float = THRESHOLD, alpha: float = ALPHA) -> pd.DataFrame:
    """The table for reading: case, metric, times, NEW against BASE in words (``1.05x slower (95% CI 1.02x-1.10x)``,
    one direction for figure and CI), p, the verdict in words, and a note where there is one."""
    keys = [c for c in table.columns if c not in (*COLUMNS, *HOST_COLUMNS, NOTE)]
    view = table[[*keys, "metric"]].copy()
    view["base"] = table["base_s"].map(format_seconds)
    view["new"] = table["new_s"].map(format_seconds)
    view["new vs base"] = [ratio_cell(*v) for v in zip(table["ratio"], table["ratio_ci_low"], table["ratio_ci_high"])]
    view["p"] = table["p_value"].map(lambda p: f"{p:.3g}" if pd.notna(p) else "-")
    view["verdict"] = [verdict_words(v, p, threshold, alpha) for v, p in zip(table["verdict"], table["p_value"])]
    notes = table[NOTE].fillna("").astype(str) if NOTE in table.columns else pd.Series("", index=table.index)
    if notes.str.len().any():
        view[NOTE] = notes
    return view


def no_case_in_common(base: Side, new: Side, keys: Sequence[str]) -> str:
    """The one line for two runs that share no case."""
    count = lambda side: len(case_groups(side.every_row, list(keys)))  # noqa: E731
    return (
        f"no case in common: BASE has {count(base)} case(s), NEW {count(new)}, none alike in "
        f"{', '.join(keys) or 'any identity column'} (--ignore COLUMNS matches on fewer, e.g. --ignore mode)"
    )


def gate_notes(table: pd.DataFrame, alpha: float, excuse: bool | str = False) -> list[str]:
    """What the reader should know below the table: cannot tell, broken, missing, a host that moved too."""
    lines = []
    undecided = table[table["verdict"].str.startswith(CANNOT_TELL)]
    if len(undecided):
        lines.append(
            f"{len(undecided)} comparison(s) cannot tell: too few processes for a significant result at alpha "
            f"{alpha} (use timing=default, 6 processes, or raise timing.processes on both runs), or a metric one "
            "run lacks"
        )
    broken = (table["verdict"] == BROKEN).sum()
    if broken:
        lines.append(
            f"{broken} case(s) broken: ok in BASE, an error in NEW (see note); this fails whatever --fail-on says"
        )
    missing = (table["verdict"] == MISSING).sum()
    if missing:
        lines.append(f"{missing} case(s) of BASE missing from NEW; this fails unless --allow-missing")
    moved = host_moved(table)
    if len(moved) and not excuse:
        lines.append(
            f"{len(moved)} slower steady state(s) where the matching host probe moved the same way (see note): "
            "still a failure; --excuse-host-drift excuses one that moved no further than its probe"
        )
    return ["", *lines] if lines else []


def gate_line(bad: pd.DataFrame) -> str:
    """`gate: pass`, or `gate: fail (...)` counting what fails it."""
    if bad.empty:
        return "gate: pass"
    counts = bad["verdict"].map(lambda v: CANNOT_TELL if str(v).startswith(CANNOT_TELL) else str(v)).value_counts()
    return "gate: fail (" + ", ".join(f"{n} {v}" for v, n in counts.items()) + ")"
