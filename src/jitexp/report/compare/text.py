"""jitexp-compare's output: the comparison table in words, and the notes and gate line under it."""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import pandas as pd

from jitexp.analysis.formatting.phrases import verdict_words
from jitexp.analysis.formatting.values import format_bytes, format_seconds
from jitexp.analysis.stats import ALPHA, CANNOT_TELL, THRESHOLD
from jitexp.report.compare.gate import BROKEN, MISSING
from jitexp.report.compare.host_drift import host_moved
from jitexp.report.compare.runs import BYTES, COLUMNS, HOST_COLUMNS, NOTE, RATIO, Side, case_groups, new_over_base
from jitexp.report.shared.memory import DONATION_LOST, MORE

WIDTH = 120  # the terminal's lines: the default table, the header and the notes fit (issue 50)
ALWAYS = ("workload", "mode")  # case columns shown even when every row shares them


def case_keys(table: pd.DataFrame) -> list[str]:
    """The table's identity columns (what a case is matched on), in order."""
    return [c for c in table.columns if c not in (*COLUMNS, *BYTES, *HOST_COLUMNS, NOTE)]


def split_keys(table: pd.DataFrame, keys: Sequence[str]) -> tuple[list[str], list[str]]:
    """The case columns worth a column (workload, mode and those whose values differ between rows), and
    ``key=value`` of the others every row shares (blank ones left out)."""
    text = {k: table[k].astype("string").fillna("") for k in keys}
    shown = [k for k, v in text.items() if k in ALWAYS or v.nunique() > 1]
    shared = [f"{k}={v.iloc[0]}" for k, v in text.items() if k not in shown and len(v) and v.iloc[0] not in ("", "nan")]
    return shown, shared


def render(
    table: pd.DataFrame, threshold: float = THRESHOLD, alpha: float = ALPHA, *, every: bool = False
) -> pd.DataFrame:
    """The table for reading, one direction throughout: case, metric, times, NEW/BASE with its 95% CI
    (``1.05 (1.02-1.1)``: above 1 NEW is slower), p, the verdict in words. By default only the case columns that
    differ between rows (and workload, mode) and no note (`notes` says them under the table); with `every`, every
    case column, the note and the process counts."""
    keys = case_keys(table)
    shown = keys if every else split_keys(table, keys)[0]
    view = table[[*shown, "metric"]].copy()
    view["base"] = _values(table, "base")
    view["new"] = _values(table, "new")
    view[RATIO] = [new_over_base(*v) for v in zip(table["ratio"], table["ratio_ci_low"], table["ratio_ci_high"])]
    view["p"] = table["p_value"].map(lambda p: f"{p:.3g}" if pd.notna(p) else "-")
    view["verdict"] = [verdict_words(v, p, threshold, alpha) for v, p in zip(table["verdict"], table["p_value"])]
    if every:
        notes = table[NOTE].fillna("").astype(str) if NOTE in table.columns else pd.Series("", index=table.index)
        if notes.str.len().any():
            view[NOTE] = notes
        view["processes"] = [f"{_count(a)} / {_count(b)}" for a, b in zip(table["n_base"], table["n_new"])]
    return view


def _values(table: pd.DataFrame, side: str) -> list[str]:
    """A side's value in words: a time (`1.2 ms`), or a memory metric's bytes (`4 MiB`; the exact bytes are in
    the note and compare.csv)."""
    times = table[f"{side}_s"]
    sizes = table[f"{side}_bytes"] if f"{side}_bytes" in table.columns else pd.Series(float("nan"), index=table.index)
    return [format_seconds(t) if pd.notna(t) or pd.isna(b) else format_bytes(b) for t, b in zip(times, sizes)]


def _count(n: object) -> str:
    return "-" if pd.isna(n) else str(int(n))  # type: ignore[call-overload]


def shared_line(table: pd.DataFrame) -> str:
    """``every row: dtype=float32, device_kind=cpu``: the case columns the default table leaves out; empty if none."""
    shared = split_keys(table, case_keys(table))[1]
    return f"every row: {', '.join(shared)}" if shared else ""


def notes(table: pd.DataFrame) -> list[str]:
    """The notes the default table leaves out, one per row that has one: ``matmul jit steady: host dispatch 1.01``."""
    if NOTE not in table.columns:
        return []
    shown = split_keys(table, case_keys(table))[0]
    out = []
    for _, row in table.iterrows():
        note = "" if pd.isna(row[NOTE]) else str(row[NOTE])
        if note:
            case = " ".join(key_text(k, row[k]) for k in shown if not pd.isna(row[k]) and str(row[k]) != "")
            out.append(f"{case} {row['metric']}: {note}")
    return out


def key_text(key: str, value: object) -> str:
    """A workload or mode as it is; any other case column as ``key=value`` (a param without its ``param_``)."""
    return str(value) if key in ALWAYS else f"{key.removeprefix('param_')}={value}"


def wrapped(lines: Sequence[str], indent: str = "") -> list[str]:
    """Each line cut at word boundaries to WIDTH characters, its continuation indented two more."""
    out = []
    for line in lines:
        out += textwrap.wrap(
            line,
            WIDTH,
            initial_indent=indent,
            subsequent_indent=indent + "    ",
            break_long_words=False,  # a path stays whole
            break_on_hyphens=False,
        ) or [""]
    return out


def no_case_in_common(base: Side, new: Side, keys: Sequence[str]) -> str:
    """The one line for two runs that share no case."""
    count = lambda side: len(case_groups(side.every_row, list(keys)))  # noqa: E731
    if not count(base) and not count(new):
        return "nothing to compare: BASE and NEW hold no rows"
    shared = set(case_groups(base.every_row, list(keys))) & set(case_groups(new.every_row, list(keys)))
    if shared:  # alike, but nothing to compare: a results.csv without its processes.csv (hand-made, or copied alone)
        return (
            f"nothing to compare: BASE and NEW share {len(shared)} case(s), but no per-process times for them "
            "(processes.csv beside results.csv, as jitexp writes it); compare the run folders jitexp wrote"
        )
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
            f"{alpha} (use timing=default, 6 processes, or raise timing.processes on both runs), a metric one "
            "run lacks, or XLA's memory analysis across jax versions or backends (not comparable there)"
        )
    broken = (table["verdict"] == BROKEN).sum()
    if broken:
        lines.append(
            f"{broken} case(s) broken: ok in BASE, an error in NEW (see note); this fails whatever --fail-on says"
        )
    grew = (table["verdict"] == MORE).sum()
    if grew:
        lines.append(
            f"{grew} memory metric(s) grew (see note: before and after in bytes); this fails when --fail-on names it"
        )
    lost = (table["verdict"] == DONATION_LOST).sum()
    if lost:
        lines.append(
            f"{lost} donation(s) lost: alias bytes above 0 in BASE, 0 in NEW (see note); this fails when --fail-on "
            "names any memory metric"
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
