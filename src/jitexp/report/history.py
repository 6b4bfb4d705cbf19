"""Many runs on one timeline (jitexp-history): each run's cases matched by identity, ordered by the commit they
measured, one tidy row per run, case and metric with its CI.

A run is a run or sweep folder (what `jitexp` writes). Runs are ordered by their commit's date (`code_commit_date`),
then by when they ran (`timestamp`), so a run outside git falls in by its time. Each machine (hostname, CPU model,
device kind: what jitexp-compare calls "across machines") is its own line: a run from another machine never
continues a line, so a change of machine can never read as a step.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis.formatting import ratio_cell
from jitexp.analysis.stats import THRESHOLD, median_ci
from jitexp.report.compare_runs import MACHINE, case_columns
from jitexp.report.steps import find_steps
from jitexp.store.folders import RESULTS_CSV, iter_jobs

# metric -> (results.csv column, its CI columns or None: then the CI is the median's over processes.csv's values)
METRICS: dict[str, tuple[str, tuple[str, str] | None]] = {
    "steady": ("median_s", ("ci95_low_s", "ci95_high_s")),
    "first_call": ("first_call_s", ("first_call_ci95_low_s", "first_call_ci95_high_s")),
    "compile": ("compile_s", None),
    "trace": ("trace_s", None),
    "peak_memory": ("peak_memory_bytes", None),
}
RUN_COLUMNS = ["run", "code_commit", "code_commit_date", "code_subject", "code_dirty", "jax_version", "timestamp"]
HISTORY_COLUMNS = [
    "order",
    *RUN_COLUMNS,
    "machine",
    "line",
    "case",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "n_processes",
    "steal",
]


def run_folders(patterns: Sequence[str | os.PathLike]) -> list[Path]:
    """The run folders named by paths or glob patterns, each once, in the order given; a pattern that names
    nothing is a FileNotFoundError naming it."""
    found: dict[Path, None] = {}
    for pattern in patterns:
        text = str(pattern)
        matches = sorted(glob.glob(text)) if any(c in text for c in "*?[") else ([text] if Path(text).exists() else [])
        runs = [Path(m) for m in matches if Path(m).is_dir() and _holds_results(Path(m))]
        if not runs:
            raise FileNotFoundError(f"{text}: no run or sweep folder (a folder with {RESULTS_CSV} in it or below)")
        found.update(dict.fromkeys(runs))
    return list(found)


def _holds_results(path: Path) -> bool:
    return (path / RESULTS_CSV).is_file() or next(iter_jobs(path), None) is not None


def history(patterns: str | os.PathLike | Sequence[str | os.PathLike]) -> pd.DataFrame:
    """history.csv's rows: one per run, case and metric (ok rows only), runs in timeline order. `patterns`: run or
    sweep folders, or glob patterns of them (`jitexp.history("runs/*")`)."""
    if isinstance(patterns, (str, os.PathLike)):
        patterns = [patterns]
    frames = [_run_rows(folder) for folder in run_folders(patterns)]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=HISTORY_COLUMNS)
    tidy = pd.concat(frames, ignore_index=True)
    runs = tidy.drop_duplicates("run")[["run", "code_commit_date", "timestamp"]]
    when = pd.to_datetime(
        runs["code_commit_date"].fillna(runs["timestamp"]), utc=True, errors="coerce", format="ISO8601"
    )
    ran = pd.to_datetime(runs["timestamp"], utc=True, errors="coerce", format="ISO8601")
    order = runs.assign(_when=when, _ran=ran).sort_values(["_when", "_ran", "run"], kind="stable")["run"]
    tidy["order"] = tidy["run"].map({run: i for i, run in enumerate(order)})
    lines = {machine: i + 1 for i, machine in enumerate(dict.fromkeys(tidy.sort_values("order")["machine"]))}
    tidy["line"] = tidy["machine"].map(lines)
    rank = tidy["metric"].map({m: i for i, m in enumerate(METRICS)})
    tidy = tidy.assign(_rank=rank).sort_values(["case", "_rank", "order"], kind="stable").reset_index(drop=True)
    return tidy[HISTORY_COLUMNS]


def _run_rows(folder: Path) -> pd.DataFrame:
    """One run's tidy rows: its ok rows' metrics, each with the run's provenance and machine."""
    out = []
    for job in iter_jobs(folder):
        rows = job.results
        if rows.empty or "status" not in rows.columns:
            continue
        rows = rows[rows["status"].astype(str) == "ok"]
        if rows.empty:
            continue
        keys = case_columns(rows, ignore=("device_kind",))
        procs = job.processes
        for _, row in rows.iterrows():
            base = {c: _cell(row, c) for c in RUN_COLUMNS[1:]}
            base.update(
                run=str(folder),
                machine=" | ".join(str(_cell(row, c) or "?") for c in MACHINE),
                case=case_label(row, keys),
                n_processes=_cell(row, "n_processes"),
                steal=_cell(row, "steal_median"),
            )
            for metric, (column, ci) in METRICS.items():
                value = _cell(row, column)
                if value is None:
                    continue
                low, high = (_cell(row, ci[0]), _cell(row, ci[1])) if ci else _process_ci(procs, row, column)
                out.append({**base, "metric": metric, "value": float(value), "ci_low": low, "ci_high": high})
    return pd.DataFrame(out)


def case_label(row: pd.Series, keys: Iterable[str]) -> str:
    """A case as `key=value` pairs of its identity columns (those it has), the same in every run."""
    parts = []
    for key in keys:
        value = _cell(row, key)
        if value is not None and str(value) != "":
            parts.append(f"{key}={value}")
    return " ".join(parts)


def _process_ci(procs: pd.DataFrame, row: pd.Series, column: str) -> tuple[float | None, float | None]:
    """The CI of the median of `column` over the row's processes (processes.csv); none where fewer than two."""
    if procs.empty or column not in procs.columns:
        return None, None
    mine = procs["mode"] == row["mode"]
    for key in ("variant", "env"):
        if key in procs.columns and _cell(row, key) is not None:
            mine &= procs[key] == row[key]
    if "replaced" in procs.columns:
        mine &= ~procs["replaced"].fillna(False).astype(bool)
    values = pd.to_numeric(procs.loc[mine, column], errors="coerce").dropna().to_numpy(float)
    if values.size < 2:
        return None, None
    low, high = median_ci(values)
    return low, high


def _cell(row: pd.Series, column: str):
    """A cell's value, None where the column is absent or the cell empty."""
    if column not in row.index:
        return None
    value = row[column]
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


STEP_COLUMNS = [
    "case",
    "metric",
    "line",
    "machine",
    "direction",
    "ratio",
    "ci_low",
    "ci_high",
    "last_before",
    "first_after",
    "commit_before",
    "commit_after",
    "subject_after",
    "jax_before",
    "jax_after",
    "n_before",
    "n_after",
    "newest",
]


def steps_table(tidy: pd.DataFrame, threshold: float = THRESHOLD) -> pd.DataFrame:
    """steps.csv: every step of every case, metric and machine line (report/steps.py), with its commit range
    (the last run before it and the first after), the jax versions on either side, and whether the line's newest
    run is on the step's new level (`newest`: what --fail-on-step judges)."""
    out = []
    for (case, metric, line), runs in tidy.groupby(["case", "metric", "line"], sort=False):
        runs = runs.sort_values("order")
        found = find_steps(
            runs["value"].to_numpy(float), runs["ci_low"].tolist(), runs["ci_high"].tolist(), threshold=threshold
        )
        for i, step in enumerate(found):
            before, after = runs.iloc[step.before], runs.iloc[step.after]
            out.append(
                {
                    "case": case,
                    "metric": metric,
                    "line": line,
                    "machine": after["machine"],
                    "direction": step.direction if metric != "peak_memory" else ("more" if step.ratio > 1 else "less"),
                    "ratio": step.ratio,
                    "ci_low": step.ci_low,
                    "ci_high": step.ci_high,
                    "last_before": before["run"],
                    "first_after": after["run"],
                    "commit_before": before["code_commit"],
                    "commit_after": after["code_commit"],
                    "subject_after": after["code_subject"],
                    "jax_before": before["jax_version"],
                    "jax_after": after["jax_version"],
                    "n_before": step.n_before,
                    "n_after": step.n_after,
                    "newest": i == len(found) - 1 and step.after + step.n_after == len(runs),
                }
            )
    return pd.DataFrame(out, columns=STEP_COLUMNS)


def failing_steps(steps: pd.DataFrame, fail_on: Sequence[str]) -> pd.DataFrame:
    """The steps --fail-on-step fails on: up (slower, or more memory), in a --fail-on metric, the newest runs' level."""
    return steps[steps["newest"].astype(bool) & (steps["ratio"] > 1) & steps["metric"].isin(list(fail_on))]


def step_change(step: pd.Series) -> str:
    """`1.5x slower (95% CI 1.41x-1.6x)`, or for memory `1.5x the memory (95% CI ...)`."""
    if step["metric"] == "peak_memory":
        return f"{step['ratio']:.3g}x the memory (95% CI {step['ci_low']:.3g}x-{step['ci_high']:.3g}x)"
    return ratio_cell(step["ratio"], step["ci_low"], step["ci_high"])


def short_commit(commit: object) -> str:
    """A commit's first 8 characters, `?` where there is none."""
    return str(commit)[:8] if isinstance(commit, str) and commit else "?"
