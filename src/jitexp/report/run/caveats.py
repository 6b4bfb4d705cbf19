"""The caveats under a report: rows whose numbers deserve doubt, counted by kind, and the host's CPU steal.

Each takes a results frame and returns lines of text (no printing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd

from jitexp.analysis.formatting.answer import split_reasons
from jitexp.analysis.formatting.values import cell_text, format_seconds, is_missing, is_true
from jitexp.analysis.speedups import NO_WORK, not_work
from jitexp.labels import size_text
from jitexp.report.shared.cases import (
    KNOBS,
    STATIC_ARGNUMS,
    case_columns,
    get_column,
    knob_text,
    one_per_job,
    params_labels,
    replaced_processes,
    varying,
)


def caveats(df: pd.DataFrame) -> list[str]:
    """One line per row whose numbers deserve doubt: unstable, recompiled while timed, or not matching eager."""
    lines = []
    for (_, row), params in zip(df.iterrows(), params_labels(df)):
        note = row_notes(row)
        if note:
            label = str(row.get("workload")) + (f" ({params})" if params else "")
            label += " ".join(["", str(row.get("mode")), size_text(row, " ")]).rstrip()
            if not is_missing(row.get(STATIC_ARGNUMS)):
                label += f" static_argnums={row.get(STATIC_ARGNUMS)}"
            lines.append(f"{label}: {note}")
    return lines


def row_notes(row: pd.Series, short: bool = False) -> str:
    """A row's caveats in one line (unstable, compiled while timed, result differs); short: the table's note."""
    notes = []
    if is_true(row.get("unstable")):
        reason = row.get("unstable_reason")
        notes.append(f"unstable ({reason})" if not (short or is_missing(reason)) else "unstable")
        steal = row.get("steal_median")
        if short and "CPU steal" in str(reason) and not is_missing(steal):
            notes.append(f"CPU steal {steal:.0%}")  # beside the figure it moved (the reason says so in full)
    compiles = row.get("compiles_during_timing")
    if not is_missing(compiles) and compiles > 0:
        notes.append(f"{int(compiles)} compile(s) while timed")
    if not is_missing(row.get("matches_eager")) and not bool(row.get("matches_eager")):
        notes.append("result differs from eager")
    elif cell_text(row.get("check_vs_eager")).startswith("cannot compare"):
        notes.append("result not comparable with eager")
    kind, why = not_work(row)
    if kind == NO_WORK:  # its time is no speedup: the verdict says "no work", the line says why first
        notes.append("no work measured" if short else why)
    return "; ".join(notes)


def caveat_summary(df: pd.DataFrame) -> list[str]:
    """Caveats counted by kind, not repeated per row.

    ``unstable: 7 of 12 rows (waited to run: 7 rows, samples within a process spread: 2 rows)``;
    the rows and their full reasons are in results.csv (unstable, unstable_reason).
    """
    n = len(df)
    lines = []
    knobs = varying_knobs(df)
    unstable = df[get_column(df, "unstable").map(is_true).astype(bool)] if n else df
    if len(unstable):
        kinds: dict[str, int] = {}
        for reason in get_column(unstable, "unstable_reason"):
            for kind in {reason_kind(r) for r in split_reasons(reason)}:
                kinds[kind] = kinds.get(kind, 0) + 1
        detail = ", ".join(
            f"{k}: {v} row{'s' if v != 1 else ''}" for k, v in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        lines.append(
            f"unstable: {len(unstable)} of {n} rows"
            + (f" ({detail})" if detail else "")
            + "; reasons per row in results.csv (unstable_reason)"
            + _examples(unstable, total=n, knobs=knobs)
        )
    compiles = pd.to_numeric(get_column(df, "compiles_during_timing"), errors="coerce").fillna(0)
    if (compiles > 0).any():
        lines.append(
            f"compiled while timed: {int((compiles > 0).sum())} of {n} rows "
            f"({int(compiles.sum())} compile(s)): their steady state was not steady"
            + _examples(df[compiles > 0], knobs=knobs)
        )
    lines += steal_caveats(df)
    lines += seed_caveats(df)
    lines += unavailable_caveats(df)
    for column, text in (("matches_eager", "differs from eager"), ("matches_numpy", "differs from NumPy")):
        values = get_column(df, column)
        bad = values.notna() & ~values.map(is_true).astype(bool)
        if bad.any():
            lines.append(f"result {text}: {int(bad.sum())} of {n} rows" + _examples(df[bad], knobs=knobs))
    no_work = pd.Series([not_work(row)[0] == NO_WORK for _, row in df.iterrows()], index=df.index, dtype=bool)
    if no_work.any():
        lines.append(
            f"no work measured: {int(no_work.sum())} of {n} rows (XLA removed a computation whose result is not "
            "returned, or the function computes nothing from its inputs): their times are no speedup"
            + _examples(df[no_work], knobs=knobs)
        )
    for against in ("eager", "NumPy"):  # no figure at all: the check says why in check_vs_<against>
        uncomparable = (
            get_column(df, f"check_vs_{against.lower()}").map(cell_text).astype(str).str.startswith("cannot compare")
        )  # astype: a frame of no rows (a sweep stopped before its first job ended) maps to floats
        if uncomparable.any():
            lines.append(
                f"result not comparable with {against}: {int(uncomparable.sum())} of {n} rows "
                f"(check_vs_{against.lower()} says why)" + _examples(df[uncomparable], knobs=knobs)
            )
    return lines


def seed_caveats(df: pd.DataFrame) -> list[str]:
    """Rows of one case at several seeds are one row in the report's tables (shared.cases.aggregate): said once, so
    that a `-m seed=0,1` sweep is not read as one measurement."""
    if "seed" not in df.columns or len(df) < 2:
        return []
    keys = [k for k in case_columns(df) if k not in ("seed", "mode")]  # a case: its modes together
    seeds = df.assign(_seed=df["seed"].map(cell_text))
    pooled = seeds.groupby([seeds[k].map(cell_text) for k in keys], dropna=False)["_seed"].nunique()
    pooled = pooled[pooled > 1]
    if pooled.empty:
        return []
    values = sorted(set(seeds["_seed"]), key=lambda v: (len(v), v))
    return [
        f"seeds pooled: {len(pooled)} case(s) measured at seeds {', '.join(values)} are one row each in these tables "
        "(the median of their medians, the CI the union of theirs); each seed's own row is in results.csv"
    ]


def unavailable_caveats(df: pd.DataFrame) -> list[str]:
    """What the host or backend could not give, in one line: the `unavailable` note a job writes on each of its rows
    (``noise: not available on this host (...); device_peak_bytes: the CPU backend keeps ...``), each column's
    reason once, with how many jobs it covers when not all; none without such a note."""
    jobs = one_per_job(df)
    counts: dict[str, int] = {}
    for text in get_column(jobs, "unavailable"):
        for reason in dict.fromkeys(UNAVAILABLE_ITEM.split(cell_text(text))):
            if reason.strip():
                counts[reason.strip()] = counts.get(reason.strip(), 0) + 1
    if not counts:
        return []
    n = len(jobs)
    parts = [reason + ("" if count == n else f" ({count} of {n} jobs)") for reason, count in counts.items()]
    return ["not available here, so those columns are empty: " + "; ".join(parts)]


# the `unavailable` note's items: ``column: why``, joined by "; " (a why may hold "; " itself)
UNAVAILABLE_ITEM = re.compile(r";\s+(?=[A-Za-z_][\w]*: )")


# A host probe's job medians further apart than this (max/min - 1) say the host moved between jobs:
# pyperf's 10% limit on spread, as the rows' own instability test uses (rows.MAX_SPREAD).
HOST_MOVED = 0.10


def steal_caveats(df: pd.DataFrame) -> list[str]:
    """CPU steal over the rows and the host probe's spread across jobs, each only when there is something to
    act on: a row above timing.max_steal or a process replaced under steal; a probe that moved beyond HOST_MOVED."""
    lines = []
    steal = pd.to_numeric(get_column(df, "steal_median"), errors="coerce")
    reasons = get_column(df, "unstable_reason").astype("string").fillna("")
    moved = reasons.str.contains("CPU steal").astype(bool)  # above the job's timing.max_steal
    replaced = replaced_processes(df)
    if steal.notna().any() and (moved.any() or replaced):
        worst = pd.to_numeric(get_column(df, "steal_max"), errors="coerce").max()
        lines.append(
            f"CPU steal (hypervisor): median process {steal.min():.1%}..{steal.max():.1%} over {len(df)} rows, "
            f"worst process {worst:.1%}; {int(moved.sum())} row(s) above timing.max_steal"
            + (_examples(df[moved], knobs=varying_knobs(df)) if moved.any() else "")
            + (f"; {replaced} process(es) replaced under steal" if replaced else "")
        )
    spreads = []
    jobs = one_per_job(df)  # one probe per job's (env's) workers
    widest = 1.0
    for col in [c for c in df.columns if c.startswith("host_probe_")]:
        values = pd.to_numeric(jobs[col], errors="coerce").dropna()
        if len(values) > 1 and values.min() > 0:
            name = col.removeprefix("host_probe_").removesuffix("_s")
            widest = max(widest, values.max() / values.min())
            spreads.append(
                f"{name} {format_seconds(values.min())}..{format_seconds(values.max())} "
                f"({values.max() / values.min():.2f}x)"
            )
    if spreads and widest > 1 + HOST_MOVED:
        lines.append(
            f"the host moved between jobs: the same small kernels, timed in each of {len(jobs)} jobs "
            "(host_probe_*_s), read "
            + ", ".join(spreads)
            + "; figures from different jobs differ by as much for the host's own reasons"
        )
    return lines


def reason_kind(reason: str) -> str:
    """An instability reason without its numbers or details: ``process medians spread 14% (robust cv; limit 10%)``
    -> ``process medians spread``, ``waited to run 12% of the time (...)`` -> ``waited to run``."""
    text = reason.strip().split(" (", 1)[0]
    text = re.sub(r"-?\d+(\.\d+)?%?( of the time)?", "", text)
    return re.sub(r"\s+", " ", text).strip()


def _examples(rows: pd.DataFrame, limit: int = 3, total: int | None = None, knobs: Sequence[str] = ()) -> str:
    """A few rows named, with the knobs that tell a sweep's jobs apart (`varying_knobs`)."""
    if rows.empty or len(rows) > limit or len(rows) == total:
        return ""
    labels = []
    for (_, row), params in zip(rows.iterrows(), params_labels(rows)):
        told = "".join(f" {knob_text(k, row.get(k))}" for k in knobs)
        labels.append(
            f"{row.get('workload')}{' (' + params + ')' if params else ''} {row.get('mode')} "
            f"{size_text(row, ' ')}".rstrip()
            + told
        )
    return ": " + "; ".join(labels)


def varying_knobs(df: pd.DataFrame) -> list[str]:
    """The jit and mesh knobs (and env) whose value differs between the frame's rows."""
    return varying(df, KNOBS)
