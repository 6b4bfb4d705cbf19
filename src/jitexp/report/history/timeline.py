"""Many runs on one timeline (jitexp-history): each run's cases matched by identity, ordered by the commit they
measured, one tidy row per run, case and metric with its CI.

A run is a run or sweep folder (what `jitexp` writes). Runs are ordered by their commit's date (`code_commit_date`),
then by when they ran (`timestamp`), so a run outside git falls in by its time. Each machine (hostname, CPU model,
device kind: what jitexp-compare calls "across machines") is its own line: a run from another machine never
continues a line, so a change of machine can never read as a step.
"""

from __future__ import annotations

import glob
import math
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis.formatting.phrases import bound_digits, ratio_cell
from jitexp.analysis.stats import THRESHOLD, median_ci
from jitexp.report.history.steps import Processes, Step, exact_steps, find_steps
from jitexp.report.shared.cases import CASE, MACHINE, case_columns
from jitexp.report.shared.memory import EXACT, MEASURED, MEMORY_METRICS, canonical
from jitexp.store.csvio import check_cells, read_cells, read_text, text_frame
from jitexp.store.folders import PROCESSES_CSV, RESULTS_CSV, iter_jobs

# metric -> (results.csv column, its CI columns or None: then the CI is the median's over processes.csv's values)
METRICS: dict[str, tuple[str, tuple[str, str] | None]] = {
    "steady": ("median_s", ("ci95_low_s", "ci95_high_s")),
    "first_call": ("first_call_s", ("first_call_ci95_low_s", "first_call_ci95_high_s")),
    "compile": ("compile_s", None),
    "trace": ("trace_s", None),
    # memory (issue 59, report/shared/memory.py): XLA's analysis, exact (a step is any change, at the run that made
    # it); the measured ones with their CI over processes, judged like a time
    "peak_memory_bytes": ("peak_memory_bytes", None),
    "temp_bytes": ("temp_size_bytes", None),
    "device_peak_bytes": ("device_peak_bytes", None),
    "peak_rss_growth_bytes": ("peak_rss_growth_bytes", None),
}
# what the step test reads of each run's processes (history/steps.py): per metric, the processes.csv column, and
# per run its processes' count, mean and sd of log values, smallest and largest value
PROCESS_COLUMNS = {
    "steady": "median_s",
    "first_call": "first_call_s",
    "compile": "compile_s",
    "trace": "trace_s",
    **{metric: column for metric, column in MEASURED.items()},
}
PROCESS_SUMMARY = ["proc_n", "proc_log_mean", "proc_log_sd", "proc_low", "proc_high"]
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
    *PROCESS_SUMMARY,
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


def history(
    patterns: str | os.PathLike | Sequence[str | os.PathLike], progress: Callable[[int, int], None] | None = None
) -> pd.DataFrame:
    """history.csv's rows: one per run, case and metric (ok rows only), runs in timeline order. `patterns`: run or
    sweep folders, or glob patterns of them (`jitexp.history("runs/*")`); `progress(done, total)` after each run."""
    if isinstance(patterns, (str, os.PathLike)):
        patterns = [patterns]
    folders = run_folders(patterns)
    frames = []
    for i, folder in enumerate(folders):
        frames.append(_run_rows(folder))
        if progress is not None:
            progress(i + 1, len(folders))
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
    """One run's tidy rows: its ok rows' metrics, each with the run's provenance and machine.

    The CSVs are read as text and only the columns a timeline needs are turned into numbers (a history reads
    hundreds of runs: typing every column of every file was most of its time)."""
    out = []
    for job in iter_jobs(folder):
        rows = _ok_rows(job.path / RESULTS_CSV)
        if rows is None:
            continue
        keys = case_columns(rows, ignore=("device_kind",))
        base = pd.DataFrame(
            {
                "run": str(folder),
                **{c: _text(rows, c) for c in RUN_COLUMNS[1:]},
                "machine": [" | ".join(parts) for parts in zip(*(_text(rows, c).fillna("?") for c in MACHINE))],
                "case": [
                    " ".join(f"{k}={v}" for k, v in zip(keys, values) if v != "")
                    for values in zip(*(rows[k] for k in keys))
                ],
                "n_processes": _number(rows, "n_processes"),
                "steal": _number(rows, "steal_median"),
            }
        )
        base["code_dirty"] = base["code_dirty"].map({"True": True, "False": False})
        out.append(_metric_rows(base, rows, job.path / PROCESSES_CSV))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame()


# the results.csv columns a timeline reads (params too): the rest of a row's ~160 are not made into a frame
READ = {
    "status",
    *RUN_COLUMNS[1:],
    *MACHINE,
    *CASE,
    "n_processes",
    "steal_median",
    *(c for column, ci in METRICS.values() for c in (column, *(ci or ()))),
}


def _ok_rows(path: Path) -> pd.DataFrame | None:
    """A job's ok rows as text (only the READ columns and params), None where it has none; the whole file checked
    first (check_cells: a hand-edited cell is one line, not a false point)."""
    header, cells = read_cells(path)
    check_cells(header, cells, path)
    if not header or not cells[0] or "status" not in header:
        return None
    ok = [i for i, status in enumerate(cells[header.index("status")]) if status == "ok"]
    if not ok:
        return None
    keep = [i for i, name in enumerate(header) if name in READ or name.startswith("param_")]
    return text_frame([header[i] for i in keep], [[cells[i][row] for row in ok] for i in keep])


def _metric_rows(base: pd.DataFrame, rows: pd.DataFrame, processes: Path) -> pd.DataFrame:
    """One job's tidy rows: `base` (a row per results.csv row) once per metric the row has a value of, with the
    value, its CI and its processes' summary; metric by metric (METRICS' order), rows in order within each."""
    kept, keys = _kept_processes(processes, rows)
    spread = _process_spread(kept, keys, rows)
    procs = _process_summary(kept, keys, rows)
    missing = np.full(len(rows), np.nan)
    taken: list[np.ndarray] = []
    columns: dict[str, list] = {c: [] for c in ("metric", "value", "ci_low", "ci_high", *PROCESS_SUMMARY)}
    for metric, (column, ci) in METRICS.items():
        value = _number(rows, column).to_numpy()
        if ci:
            low, high = _number(rows, ci[0]).to_numpy(), _number(rows, ci[1]).to_numpy()
        else:
            low = spread[(column, "low")].to_numpy() if (column, "low") in spread else missing
            high = spread[(column, "high")].to_numpy() if (column, "high") in spread else missing
        summary = procs.get(PROCESS_COLUMNS.get(metric, ""))
        keep = np.flatnonzero(~np.isnan(value))
        taken.append(keep)
        columns["metric"].append(np.full(len(keep), metric, dtype=object))
        for name, values in (("value", value), ("ci_low", low), ("ci_high", high)):
            columns[name].append(values[keep])
        for name in PROCESS_SUMMARY:
            columns[name].append((summary[name].to_numpy(float) if summary is not None else missing)[keep])
    frame = base.take(np.concatenate(taken)).reset_index(drop=True)
    return frame.assign(**{name: np.concatenate(parts) for name, parts in columns.items()})


def _kept_processes(path: Path, rows: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """processes.csv as text, replaced processes aside (empty where there is none), and the columns that tie its
    rows to the job's results rows (mode, variant, env: those both have)."""
    if not path.is_file():
        return pd.DataFrame(), []
    procs = read_text(path)
    if "replaced" in procs.columns:
        procs = procs[procs["replaced"] != "True"]
    return procs, [k for k in ("mode", "variant", "env") if k in procs.columns and k in rows.columns]


def _process_spread(procs: pd.DataFrame, keys: list[str], rows: pd.DataFrame) -> dict[tuple[str, str], pd.Series]:
    """(column, "low" | "high") -> per row, the CI of the median of that column over the row's processes
    (_kept_processes); missing where fewer than two processes."""
    found: dict[tuple[str, str], pd.Series] = {}
    for column in ("compile_s", "trace_s", *MEASURED.values()):
        if column not in procs.columns or not keys:
            continue
        cis = {}
        for key, group in procs.groupby(keys, sort=False):
            values = pd.to_numeric(group[column], errors="coerce").dropna().to_numpy(float)
            if values.size >= 2:
                cis[key if isinstance(key, tuple) else (key,)] = median_ci(values)
        index = list(zip(*(rows[k] for k in keys)))
        found[(column, "low")] = pd.Series([cis.get(k, (None, None))[0] for k in index], dtype=float)
        found[(column, "high")] = pd.Series([cis.get(k, (None, None))[1] for k in index], dtype=float)
    return found


def _process_summary(procs: pd.DataFrame, keys: list[str], rows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """processes.csv column -> per row, its processes' count, mean and sd of log values, smallest and largest
    (PROCESS_SUMMARY; NaN where a row has none; procs and keys: _kept_processes): what the step test weighs each
    run by."""
    columns = [c for c in PROCESS_COLUMNS.values() if c in procs.columns]
    if not keys or not columns or procs.empty:
        return {}
    numbers = procs[keys].assign(**{c: pd.to_numeric(procs[c], errors="coerce") for c in columns})
    index = pd.MultiIndex.from_arrays([rows[k] for k in keys]) if len(keys) > 1 else pd.Index(rows[keys[0]])
    found = {}
    for column in columns:
        values = numbers[[*keys, column]].dropna()
        values = values[values[column] > 0]
        logs = np.log(values[column])
        grouped = values.assign(_log=logs).groupby(keys, sort=False)
        table = pd.DataFrame(
            {
                "proc_n": grouped[column].count(),
                "proc_log_mean": grouped["_log"].mean(),
                "proc_log_sd": grouped["_log"].std(ddof=1),
                "proc_low": grouped[column].min(),
                "proc_high": grouped[column].max(),
            }
        )
        found[column] = table.reindex(index).reset_index(drop=True).set_axis(rows.index)
    return found


def _text(rows: pd.DataFrame, column: str) -> pd.Series:
    """A text column, missing where empty or absent."""
    if column not in rows.columns:
        return pd.Series([None] * len(rows), dtype=object)
    return rows[column].where(rows[column] != "", None)


def _number(rows: pd.DataFrame, column: str) -> pd.Series:
    """A numeric column, NaN where empty or absent."""
    if column not in rows.columns:
        return _none(rows)
    return pd.to_numeric(rows[column], errors="coerce").astype(float)


def _none(rows: pd.DataFrame) -> pd.Series:
    return pd.Series(np.nan, index=rows.index, dtype=float)


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
    "established",
    "evidence",
]


def steps_table(tidy: pd.DataFrame, threshold: float = THRESHOLD) -> pd.DataFrame:
    """steps.csv: every step of every case, metric and machine line (history/steps.py), with its commit range
    (the last run before it and the first after), the jax versions on either side, and whether the line's newest
    run is on the step's new level (`newest`: what --fail-on-step judges)."""
    out = []
    for (case, metric, line), runs in tidy.groupby(["case", "metric", "line"], sort=False):
        runs = runs.sort_values("order")
        procs = None
        if all(c in runs.columns for c in PROCESS_SUMMARY):
            procs = Processes(*(runs[c].to_numpy(float) for c in PROCESS_SUMMARY))
        if metric in EXACT:  # deterministic: a step is any change, exact, at the run that made it
            found = exact_steps(runs["value"].to_numpy(float), runs["jax_version"].fillna("").astype(str).tolist())
        else:
            found = find_steps(
                runs["value"].to_numpy(float),
                runs["ci_low"].tolist(),
                runs["ci_high"].tolist(),
                processes=procs,
                threshold=threshold,
                possible=True,
            )
        last = max((i for i, step in enumerate(found) if step.established), default=-1)
        for i, step in enumerate(found):
            before, after = runs.iloc[step.before], runs.iloc[step.after]
            out.append(
                {
                    "case": case,
                    "metric": metric,
                    "line": line,
                    "machine": after["machine"],
                    "direction": step.direction
                    if metric not in MEMORY_METRICS
                    else ("more" if step.ratio > 1 else "less"),
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
                    "newest": (i == last or not step.established) and step.after + step.n_after == len(runs),
                    "established": step.established,
                    "evidence": evidence(step, metric, runs),
                }
            )
    return pd.DataFrame(out, columns=STEP_COLUMNS)


def evidence(step: Step, metric: str, runs: pd.DataFrame | None = None) -> str:
    """The step's evidence in words: `all 36 processes after it slower than all 36 before it`, else `3 of 3 runs
    after it slower than every run before it` (for memory: `higher`, `lower`); for XLA's analysis the exact bytes
    (`exact: 4,194,304 -> 5,242,880 bytes (XLA's analysis)`), or that it is not comparable across jax versions."""
    word = ("higher" if step.ratio > 1 else "lower") if metric in MEMORY_METRICS else step.direction
    if metric in EXACT and runs is not None:
        before, after = runs.iloc[step.before], runs.iloc[step.after]
        exact = f"{before['value']:,.0f} -> {after['value']:,.0f} bytes"
        if before["jax_version"] != after["jax_version"]:
            return (
                f"{exact} across jax {before['jax_version']} -> {after['jax_version']}: XLA's analysis is not "
                "comparable there (not established)"
            )
        return f"exact: {exact} (XLA's analysis)"
    if step.processes_apart:
        return f"all {step.processes_after} processes after it {word} than all {step.processes_before} before it"
    return f"{step.runs_beyond} of {counted(step.n_after, 'run')} after it {word} than every run before it"


def failing_steps(steps: pd.DataFrame, fail_on: Sequence[str], possible: bool = False) -> pd.DataFrame:
    """The steps --fail-on-step fails on: up (slower, or more memory), in a --fail-on metric, the newest runs'
    level, established (or also possible, with `possible`: --fail-on-possible)."""
    sure = steps["established"].astype(bool) if not possible else pd.Series(True, index=steps.index)
    fail_on = [canonical(m) for m in fail_on]
    return steps[sure & steps["newest"].astype(bool) & (steps["ratio"] > 1) & steps["metric"].isin(fail_on)]


def step_change(step: pd.Series) -> str:
    """`1.5x slower (95% CI 1.41x-1.6x)`; for memory `1.5x the memory (95% CI ...)`, `1.5x the memory` where the
    figure is exact (XLA's analysis: no interval), `more memory, from none` where it grew from 0 bytes."""
    if step["metric"] in MEMORY_METRICS:
        ratio, low, high = float(step["ratio"]), float(step["ci_low"]), float(step["ci_high"])
        if math.isinf(ratio):
            return "more memory, from none"
        if low == high == ratio:
            return f"{ratio:.3g}x the memory"
        return f"{ratio:.3g}x the memory (95% CI {bound_digits(low)}x-{bound_digits(high)}x)"
    return ratio_cell(step["ratio"], step["ci_low"], step["ci_high"])


def commit_range(step: pd.Series) -> str:
    """`abc12345..def67890`: the last commit before a step and the first after it."""
    return f"{short_commit(step['commit_before'])}..{short_commit(step['commit_after'])}"


def short_commit(commit: object) -> str:
    """A commit's first 8 characters, `?` where there is none."""
    return str(commit)[:8] if isinstance(commit, str) and commit else "?"


def counted(n: int, word: str) -> str:
    """`1 run`, `12 runs`."""
    return f"{n} {word}{'' if n == 1 else 's'}"
