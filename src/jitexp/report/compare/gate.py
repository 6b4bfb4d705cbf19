"""Two runs compared case by case: NEW/BASE per metric with CIs, verdicts, and the rows that fail the gate.

Two runs or sweeps are matched case by case, over every row (ok and error). Per case and metric
(steady-state time, cold first call, compile) it reports NEW/BASE as the Hodges-Lehmann ratio of the
per-process values, with the 95% CI that inverts the Mann-Whitney test giving p
(`stats.two_sample_change`), widened by a between-run component measured on A/A pairs
(BETWEEN_RUN_SD), and a verdict that needs both significance and a change beyond a noise threshold.

The gate (exit 1) fails on: a significant slowdown (or a 'cannot tell', unless allowed) in a
--fail-on metric; a case that broke (ok in BASE, an error in NEW), whatever --fail-on says; a case
of BASE missing from NEW (unless --allow-missing); no case in common. A slowdown is never excused by
the host's own drift unless asked (--excuse-host-drift), and then only by the host probe doing the
case's kind of work, when that probe's CI over processes moved the same way.

Memory (issue 59; report/shared/memory.py): XLA's analysis (`temp_bytes`, `peak_memory_bytes`, ...) is compared
exactly, NEW against BASE in bytes (an increase beyond `memory_threshold` is `more memory`), and only where both
sides ran the same jax/jaxlib on the same backend (else 'cannot tell (analysis not comparable: ...)'); what was
measured (`device_peak_bytes`, `peak_rss_growth_bytes`) is judged over processes like a time, its verdicts worded
`more memory` / `less memory`. A donation that stopped working (alias bytes above 0 in BASE, 0 in NEW) is a
`donation lost` row whenever both sides have the analysis; it fails a gate that names any memory metric.

The runs are loaded and matched in runs.py, the host drift in host_drift.py, the text in
text.py, the ratio chart in chart.py, the command line (jitexp-compare) in cli.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis.speedups import NOT_WORK_VERDICTS
from jitexp.analysis.stats import ALPHA, CANNOT_TELL, CHANGE_METRICS, THRESHOLD, two_sample_change
from jitexp.noise import PROBES
from jitexp.report.compare.host_drift import host_columns, within_drift
from jitexp.report.compare.runs import (
    BYTES,
    COLUMNS,
    HOST_COLUMNS,
    NOTE,
    Case,
    Side,
    case_groups,
    case_key,
    key_matches,
    load_side,
    matched_columns,
)
from jitexp.report.shared.memory import (
    ANALYSIS_SCOPE,
    DONATION_LOST,
    EXACT,
    LESS,
    MEASURED,
    MEMORY_METRICS,
    MORE,
    bytes_change,
    canonical,
    exact_change,
)

BROKEN = "broken"  # ok in BASE, an error in NEW: fails the gate whatever --fail-on says
MISSING = "missing"  # in BASE, not in NEW at all: fails the gate unless --allow-missing
STATUS = "status"  # the metric of a broken or missing row

# Between-run spread of a run's level, sd of log(time), per metric: the part of the run-to-run movement
# that no count of processes averages away (the session's memory layout, caches, frequency, neighbours),
# added to the within-run CI by stats.two_sample_change (a ratio of two runs gets 2 sd^2). Estimated on
# 2026-12-03 23:47-23:55 UTC from 8 A/A runs, `jitexp workload=compute_heavy size=128 mode=[eager,jit]
# hydra.run.dir=/tmp/aa/<i>` (timing=default: 11-12 processes each), a minute apart, on the shared 2-core
# VM (load average 0.3-3.1 from other work, steal 0-10%): over the 28 pairs of runs, sd^2 =
# mean(HL log ratio^2 - within-run se^2) / 2, the larger of eager's and jit's (eager/jit: steady
# 0.077/0.000, first_call 0.072/0.111, compile 0.070/0.117; docs/decisions.md). On a quiet machine these
# are upper bounds; re-measure and lower them there, not on faith.
BETWEEN_RUN_SD = {"steady": 0.077, "first_call": 0.11, "compile": 0.12}


def compare(
    base: str | Path | Side,
    new: str | Path | Side,
    *,
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
    ignore: Sequence[str] = (),
    excuse_host_drift: bool | str | None = False,
    memory: Sequence[str] = (),
    memory_threshold: tuple[float, float] = (0.0, 0.0),
) -> pd.DataFrame:
    """One row per case of BASE and metric: NEW/BASE ratio with CI, p-value, verdict (see module doc).

    memory: memory metrics (report/shared/memory.py) to compare beside the times, the exact ones beyond
    memory_threshold (bytes, fraction of BASE) counted as `more memory`; a lost donation is a row whatever it says.

    A case ok in BASE gets a `broken` row (metric `status`) when NEW has an error row for it or a time that is no
    speedup where BASE's was one (`not_work`), a `missing` row when NEW has no row for it; a metric one side lacks is 'cannot tell'.
    excuse_host_drift: True or "auto" (the matching probe) or a probe name (dispatch, copy, matmul) turns
    a steady-state slower/faster into 'within host drift' (`within_drift`); False/None leaves verdicts
    alone. Steady-state rows carry their probe (named, else `matching_probe`) and its ratio either way.
    """
    base = base if isinstance(base, Side) else load_side(base)
    new = new if isinstance(new, Side) else load_side(new)
    keys = matched_columns(base, new, ignore)
    new_groups = case_groups(new.rows, keys)
    new_errors = [(case_key(tuple(r.get(k) for k in keys)), r) for r in new.errors.to_dict("records")]
    chosen = excuse_host_drift if excuse_host_drift in PROBES else None
    memory = [canonical(m) for m in memory]
    records = []
    for key, base_rows in case_groups(base.rows, keys).items():
        ident = dict(zip(keys, key))
        new_rows = new_groups.get(key)
        if new_rows is not None:
            case = Case(base, base_rows, new, new_rows)
            records += [{**ident, **row} for row in case_rows(case, threshold, alpha, chosen)]
            rows = memory_rows(case, memory, memory_threshold, threshold, alpha)
            records += [{**ident, **row} for row in rows]
        errors = [r for k, r in new_errors if key_matches(k, key)]
        if errors:
            records.append({**ident, **_status_row(BROKEN, _failure(errors[0]))})
        elif new_rows is None:
            records.append({**ident, **_status_row(MISSING, "not in NEW")})
        elif why := not_work(base_rows, new_rows):
            records.append({**ident, **_status_row(BROKEN, why)})
    table = pd.DataFrame.from_records(records, columns=keys + COLUMNS + BYTES + HOST_COLUMNS + [NOTE])
    if table.empty:
        return table
    if excuse_host_drift:
        table["verdict"] = within_drift(table, threshold)
    rank = table["verdict"].map({BROKEN: 0, MISSING: 1}).fillna(2)
    size = table["ratio"].map(lambda r: -abs(math.log(r)) if r and r > 0 and math.isfinite(r) else 0.0)
    order = table.assign(_rank=rank, _size=size).sort_values(["_rank", "_size"], kind="stable")
    return order.drop(columns=["_rank", "_size"]).reset_index(drop=True)


def case_rows(case: Case, threshold: float, alpha: float, probe: str | None = None) -> list[dict]:
    """One case's metric rows; a metric only one side has is 'cannot tell'; the steady state's with its host probe."""
    out = []
    for metric in CHANGE_METRICS:
        a, b = case.pooled(metric)
        if not a and not b:
            continue
        row = metric_row(metric, a, b, threshold, alpha) if a and b else _one_side(metric, a, b)
        if metric == "steady":
            row.update(host_columns(case, threshold, alpha, probe))
        out.append(row)
    return out


def _one_side(metric: str, a: list, b: list) -> dict:
    """The 'cannot tell' row of a metric only one side has (a: BASE's values, b: NEW's), with each side's count."""
    row = _status_row(f"{CANNOT_TELL} (no {metric} in {'NEW' if a else 'BASE'})", metric=metric)
    return {**row, "n_base": len(a), "n_new": len(b)}


def metric_row(
    metric: str, base: list, new: list, threshold: float, alpha: float, between_run_sd: float | None = None
) -> dict:
    """Hodges-Lehmann ratio NEW/BASE of the per-process values (steady: each process's median), the CI
    inverting Mann-Whitney, widened by the metric's BETWEEN_RUN_SD, its p and the verdict ('cannot tell'
    when so few processes could never reach significance at alpha)."""
    steady = metric == "steady"
    per_a = [float(np.median(v)) for v in base] if steady else [float(v) for v in base]
    per_b = [float(np.median(v)) for v in new] if steady else [float(v) for v in new]
    sd = BETWEEN_RUN_SD.get(metric, 0.0) if between_run_sd is None else between_run_sd
    change = two_sample_change(per_a, per_b, threshold, alpha, between_run_sd=sd)
    return {
        "metric": metric,
        "base_s": float(np.median(per_a)),
        "new_s": float(np.median(per_b)),
        **{k: change[k] for k in ("ratio", "ratio_ci_low", "ratio_ci_high", "p_value", "verdict")},
        "n_base": len(per_a),
        "n_new": len(per_b),
    }


def memory_rows(
    case: Case,
    metrics: Sequence[str],
    memory_threshold: tuple[float, float] = (0.0, 0.0),
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
) -> list[dict]:
    """One case's memory rows: each asked metric, exact (XLA's analysis, in bytes, where comparable) or over
    processes (measured), and a `donation lost` row where BASE's alias bytes were above 0 and NEW's are 0."""
    out = []
    scope = not_comparable(case.base_rows, case.new_rows)
    lost = None if scope else donation_lost(case.base_rows, case.new_rows)
    for metric in metrics:
        if metric in EXACT and not (metric == "alias_bytes" and lost):
            row = exact_row(metric, case.base_rows, case.new_rows, memory_threshold, scope)
        elif metric in MEASURED:
            row = measured_row(metric, case, threshold, alpha)
        else:
            continue
        if row:
            out.append(row)
    return out + ([lost] if lost else [])


def not_comparable(base_rows: pd.DataFrame, new_rows: pd.DataFrame) -> str:
    """`jax_version 0.4.30 -> 0.4.31`: what differs between the sides' compilers or backends (XLA's analysis is
    not comparable there); empty where they agree or a side does not record it."""
    diffs = []
    for col in ANALYSIS_SCOPE:
        a, b = _texts(base_rows, col), _texts(new_rows, col)
        if a and b and a != b:
            diffs.append(f"{col} {', '.join(a)} -> {', '.join(b)}")
    return "; ".join(diffs)


def _texts(rows: pd.DataFrame, col: str) -> list[str]:
    return sorted({str(v) for v in rows[col].dropna() if str(v) != ""}) if col in rows.columns else []


def _bytes(rows: pd.DataFrame, column: str) -> float:
    """A column's value over a case's rows (XLA's analysis: one value; the largest where rows disagree); NaN."""
    if column not in rows.columns:
        return math.nan
    values = pd.to_numeric(rows[column], errors="coerce").dropna()
    return float(values.max()) if len(values) else math.nan


def exact_row(
    metric: str, base_rows: pd.DataFrame, new_rows: pd.DataFrame, memory_threshold: tuple[float, float], scope: str
) -> dict | None:
    """An exact metric's row: NEW/BASE of the two values (no interval: the analysis is deterministic), the verdict
    of `exact_change`, the before and after in bytes in the note; 'cannot tell' across compilers or backends."""
    column = EXACT[metric]
    a, b = _bytes(base_rows, column), _bytes(new_rows, column)
    if math.isnan(a) and math.isnan(b):
        return None
    if math.isnan(a) or math.isnan(b):
        row = _status_row(f"{CANNOT_TELL} (no {metric} in {'NEW' if math.isnan(b) else 'BASE'})", metric=metric)
        return {**row, "base_bytes": a, "new_bytes": b}
    if scope:
        verdict = f"{CANNOT_TELL} (XLA's analysis is not comparable across {scope})"
        return {**_status_row(verdict, metric=metric), "base_bytes": a, "new_bytes": b, "n_base": 1, "n_new": 1}
    ratio = b / a if a > 0 else (1.0 if b == 0 else math.inf)
    verdict = exact_change(a, b, memory_threshold)
    return {
        **_status_row(verdict, bytes_change(metric, a, b) if a != b else "", metric=metric),
        "base_bytes": a,
        "new_bytes": b,
        "ratio": ratio,
        "ratio_ci_low": ratio,
        "ratio_ci_high": ratio,
        "n_base": 1,
        "n_new": 1,
    }


def measured_row(metric: str, case: Case, threshold: float, alpha: float) -> dict | None:
    """A measured memory metric's row: the per-process values (processes.csv) judged like a time (no between-run
    widening: none was measured for memory), `slower` / `faster` worded `more memory` / `less memory`."""
    a, b = case.pooled(metric)
    if not a and not b:
        return None
    if not (a and b):
        return _one_side(metric, a, b)
    row = metric_row(metric, a, b, threshold, alpha, between_run_sd=0.0)
    row["verdict"] = {"slower": MORE, "faster": LESS}.get(row["verdict"], row["verdict"])
    row["base_bytes"], row["new_bytes"] = row.pop("base_s"), row.pop("new_s")
    if row["verdict"] in (MORE, LESS):
        row[NOTE] = bytes_change(metric, row["base_bytes"], row["new_bytes"]) + " (medians over processes)"
    return row


def donation_lost(base_rows: pd.DataFrame, new_rows: pd.DataFrame) -> dict | None:
    """The `donation lost` row: alias bytes above 0 in BASE (XLA reused donated input buffers for outputs), 0 in
    NEW (it no longer does: the outputs take memory of their own); None otherwise."""
    a, b = _bytes(base_rows, EXACT["alias_bytes"]), _bytes(new_rows, EXACT["alias_bytes"])
    if not (a > 0 and b == 0):
        return None
    note = (
        f"donation stopped working: {bytes_change('alias_bytes', a, b)}; the donated buffers are no longer "
        "reused for outputs"
    )
    return {
        **_status_row(DONATION_LOST, note, metric="alias_bytes"),
        "base_bytes": a,
        "new_bytes": b,
        "ratio": 0.0,
        "ratio_ci_low": 0.0,
        "ratio_ci_high": 0.0,
        "n_base": 1,
        "n_new": 1,
    }


def _status_row(verdict: str, note: str = "", metric: str = STATUS) -> dict:
    return {
        **dict.fromkeys(COLUMNS, math.nan),
        "metric": metric,
        "verdict": verdict,
        "n_base": 0,
        "n_new": 0,
        NOTE: note,
    }


def not_work(base_rows: pd.DataFrame, new_rows: pd.DataFrame) -> str:
    """Why NEW's time is no speedup where BASE's was one (its output differs from the baseline's, it measured no work,
    its outputs could not be compared: analysis.speedups.NOT_WORK_VERDICTS), in one line; empty when it is not so."""
    if "verdict" not in new_rows:
        return ""
    before = {v for v in base_rows["verdict"] if isinstance(v, str)} if "verdict" in base_rows else set()
    now = [v for v in new_rows["verdict"] if isinstance(v, str) and v in NOT_WORK_VERDICTS and v not in before]
    return f"NEW's time is no speedup: {now[0]}" if now else ""


def _failure(row: dict) -> str:
    """What went wrong in NEW, in one line: phase, exception class, its first line."""
    parts = [str(row.get(c)) for c in ("error_phase", "error_type", "error_message") if not pd.isna(row.get(c))]
    return "error in NEW: " + (": ".join(parts) or "status " + str(row.get("status")))


def failing(
    table: pd.DataFrame, fail_on: Sequence[str], allow_undetectable: bool = False, allow_missing: bool = False
) -> pd.DataFrame:
    """The rows that fail a CI gate: significantly slower (a memory metric: more memory), or cannot tell unless
    allowed, in fail_on metrics; a lost donation when fail_on names any memory metric; a broken case always; a
    missing one unless allowed. ('within host drift' passes: it was asked for.)"""
    if table.empty:
        return table
    fail_on = [canonical(m) for m in fail_on]
    verdict = table["verdict"].astype(str)
    bad = verdict.isin(["slower", MORE])
    if not allow_undetectable:
        bad |= verdict.str.startswith(CANNOT_TELL)
    bad = (bad & table["metric"].isin(fail_on)) | (verdict == BROKEN)
    if any(m in MEMORY_METRICS for m in fail_on):
        bad |= verdict == DONATION_LOST
    if not allow_missing:
        bad |= verdict == MISSING
    return table[bad]
