"""jitexp-compare BASE NEW: did a change make things faster or slower, per case, with CIs, and a gate (exit 1).

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

(Over ~500 lines: the matching, the gate and the CLI that prints them belong together.)
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis.formatting import format_seconds, ratio_cell, ratio_words, verdict_words
from jitexp.analysis.stats import ALPHA, CANNOT_TELL, CHANGE_METRICS, THRESHOLD, two_sample_change
from jitexp.noise import PROBE_COLUMNS, PROBES
from jitexp.report.tables import replaced_processes
from jitexp.store.results import RESULTS_CSV, iter_jobs, write_atomic, write_csv

CASE = ["workload", "size", "dtype", "mode", "variant", "env", "static_argnums", "device_kind"]
ENVIRONMENT = [
    "jax_version",
    "jaxlib_version",
    "xla_flags",
    "cpu_model",
    "hostname",
    "platform",
    "x64",
    "cpu_async_dispatch",
    "python_version",
]
COLUMNS = [
    "metric",
    "base_s",
    "new_s",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "p_value",
    "verdict",
    "n_base",
    "n_new",
]
# steady-state rows: the host probe matching the case's work, its NEW/BASE over processes; every row: a note
HOST_COLUMNS = ["host_probe", "host_ratio", "host_ratio_ci_low", "host_ratio_ci_high"]
NOTE = "note"

BROKEN = "broken"  # ok in BASE, an error in NEW: fails the gate whatever --fail-on says
MISSING = "missing"  # in BASE, not in NEW at all: fails the gate unless --allow-missing
STATUS = "status"  # the metric of a broken or missing row
WITHIN_DRIFT = "within host drift"  # only with --excuse-host-drift

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


@dataclass
class Side:
    """One run: its ok rows (with a `_job` folder key), per-process values per row, its error rows and host probes."""

    rows: pd.DataFrame
    values: dict[
        tuple[str, str, str, str], dict[str, list]
    ]  # (job folder, variant or "", env or "", mode) -> metric or probe column -> values per process (steady: arrays)
    errors: pd.DataFrame = field(default_factory=pd.DataFrame)  # rows whose status is not ok (with `_job`)
    probes: dict[str, list[float]] = field(default_factory=dict)  # probe column -> one value per process of the run

    @property
    def every_row(self) -> pd.DataFrame:
        """ok and error rows together (where the environment is read from)."""
        return pd.concat([self.rows, self.errors], ignore_index=True) if len(self.errors) else self.rows


def load_side(path: str | Path) -> Side:
    """Rows and per-process samples of a run or sweep folder (or a results.csv beside its job folders)."""
    path = Path(path)
    root = path.parent if path.is_file() else path
    if not root.is_dir():
        raise FileNotFoundError(f"no results at {path}")
    frames, failed, values = [], [], {}
    probes: dict[str, list[float]] = {}
    for job in iter_jobs(root):
        rows = job.results.assign(_job=str(job.path))
        ok = rows["status"] == "ok" if "status" in rows.columns else pd.Series(True, index=rows.index)
        ok = ok.fillna(False).astype(bool)
        frames.append(rows[ok])
        failed.append(rows[~ok])
        samples, procs = job.samples, job.processes
        if "replaced" in procs.columns:  # processes replaced under steal are on record, not in the figures
            procs = procs[~procs["replaced"].astype(str).str.lower().eq("true")]
        for variant, env, mode in _variant_modes(rows[ok]):
            entry: dict[str, list] = {metric: [] for metric in CHANGE_METRICS}
            if not samples.empty:
                for _, group in samples[_of(samples, variant, env, mode)].groupby("process"):
                    entry["steady"].append(group["per_call_s"].to_numpy(float))
            if not procs.empty:
                mine = procs[_of(procs, variant, env, mode)]
                for col in ("first_call", "compile", *PROBE_COLUMNS):
                    name = col if col in PROBE_COLUMNS else f"{col}_s"
                    if name in mine.columns:
                        entry[col] = pd.to_numeric(mine[name], errors="coerce").dropna().tolist()
            values[(str(job.path), variant, env, mode)] = entry
        if not procs.empty and "process" in procs.columns:  # a process's probe is on each of its mode rows: once
            once = procs.drop_duplicates(subset=[c for c in ("env", "process") if c in procs.columns])
            for col in PROBE_COLUMNS:
                if col in once.columns:
                    probes.setdefault(col, []).extend(pd.to_numeric(once[col], errors="coerce").dropna().tolist())
    if not frames:
        raise FileNotFoundError(f"no {RESULTS_CSV} in {path} or below it")
    return Side(pd.concat(frames, ignore_index=True), values, pd.concat(failed, ignore_index=True), probes)


def _variant_modes(rows: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The (variant, env, mode) of a job's rows; variant and env are "" in a job without variants or envs."""
    triples = zip(_text(rows, "variant"), _text(rows, "env"), rows["mode"])
    return list(dict.fromkeys((v, e, str(m)) for v, e, m in triples if not pd.isna(m)))


def _text(rows: pd.DataFrame, col: str) -> pd.Series:
    """A column as text, "" where missing or absent."""
    return rows[col].fillna("").astype(str) if col in rows.columns else pd.Series("", index=rows.index)


def _of(frame: pd.DataFrame, variant: str, env: str, mode: str) -> pd.Series:
    """Which rows of a samples or processes frame belong to this variant (or env) and mode."""
    mine = frame["mode"] == mode
    for col, value in (("variant", variant), ("env", env)):
        if value and col in frame.columns:
            mine &= frame[col] == value
    return mine


def case_columns(rows: pd.DataFrame, ignore: Sequence[str] = ()) -> list[str]:
    """The identity columns a case is matched on: workload, params, size, dtype, mode, variant, statics, device."""
    params = sorted(c for c in rows.columns if c.startswith("param_"))
    keys = CASE[:1] + params + CASE[1:]
    return [k for k in keys if k in rows.columns and k not in ignore]


def matched_columns(base: Side, new: Side, ignore: Sequence[str] = ()) -> list[str]:
    """The identity columns both runs have (ok or error rows), minus ignored ones."""
    theirs = case_columns(new.every_row, ignore)
    return [k for k in case_columns(base.every_row, ignore) if k in theirs]


def compare(
    base: str | Path | Side,
    new: str | Path | Side,
    *,
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
    ignore: Sequence[str] = (),
    excuse_host_drift: bool | str | None = False,
) -> pd.DataFrame:
    """One row per case of BASE and metric: NEW/BASE ratio with CI, p-value, verdict (see module doc).

    A case ok in BASE gets a `broken` row (metric `status`) when NEW has an error row for it, a
    `missing` row when NEW has no row for it; a metric one side lacks is 'cannot tell'.
    excuse_host_drift: True or "auto" (the matching probe) or a probe name (dispatch, copy, matmul) turns
    a steady-state slower/faster into 'within host drift' (`within_drift`); False/None leaves verdicts
    alone. Steady-state rows carry their probe (named, else `matching_probe`) and its ratio either way.
    """
    base = base if isinstance(base, Side) else load_side(base)
    new = new if isinstance(new, Side) else load_side(new)
    keys = matched_columns(base, new, ignore)
    new_groups = _groups(new.rows, keys)
    new_errors = [(_key(tuple(r.get(k) for k in keys)), r) for r in new.errors.to_dict("records")]
    chosen = excuse_host_drift if excuse_host_drift in PROBES else None
    records = []
    for key, base_rows in _groups(base.rows, keys).items():
        ident = dict(zip(keys, key))
        new_rows = new_groups.get(key)
        if new_rows is not None:
            records += [{**ident, **row} for row in case_rows(base, base_rows, new, new_rows, threshold, alpha, chosen)]
        errors = [r for k, r in new_errors if _matches(k, key)]
        if errors:
            records.append({**ident, **_status_row(BROKEN, _failure(errors[0]))})
        elif new_rows is None:
            records.append({**ident, **_status_row(MISSING, "not in NEW")})
    table = pd.DataFrame.from_records(records, columns=keys + COLUMNS + HOST_COLUMNS + [NOTE])
    if table.empty:
        return table
    if excuse_host_drift:
        table["verdict"] = within_drift(table, threshold)
    rank = table["verdict"].map({BROKEN: 0, MISSING: 1}).fillna(2)
    size = table["ratio"].map(lambda r: -abs(math.log(r)) if r and r > 0 and math.isfinite(r) else 0.0)
    order = table.assign(_rank=rank, _size=size).sort_values(["_rank", "_size"], kind="stable")
    return order.drop(columns=["_rank", "_size"]).reset_index(drop=True)


def case_rows(
    base: Side,
    base_rows: pd.DataFrame,
    new: Side,
    new_rows: pd.DataFrame,
    threshold: float,
    alpha: float,
    probe: str | None = None,
) -> list[dict]:
    """One case's metric rows; a metric only one side has is 'cannot tell'; the steady state's with its host probe."""
    out = []
    for metric in CHANGE_METRICS:
        a, b = _pool(base, base_rows, metric), _pool(new, new_rows, metric)
        if not a and not b:
            continue
        if a and b:
            row = metric_row(metric, a, b, threshold, alpha)
        else:
            row = _status_row(f"{CANNOT_TELL} (no {metric} in {'NEW' if a else 'BASE'})", metric=metric)
            row.update(n_base=len(a), n_new=len(b))
        if metric == "steady":
            row.update(host_columns(base, base_rows, new, new_rows, threshold, alpha, probe))
        out.append(row)
    return out


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


def _status_row(verdict: str, note: str = "", metric: str = STATUS) -> dict:
    return {
        **dict.fromkeys(COLUMNS, math.nan),
        "metric": metric,
        "verdict": verdict,
        "n_base": 0,
        "n_new": 0,
        NOTE: note,
    }


def _failure(row: dict) -> str:
    """What went wrong in NEW, in one line: phase, exception class, its first line."""
    parts = [str(row.get(c)) for c in ("error_phase", "error_type", "error_message") if not pd.isna(row.get(c))]
    return "error in NEW: " + (": ".join(parts) or "status " + str(row.get("status")))


# ---- the host's own drift ---------------------------------------------------------------------------------

# The probes' kernels (host.host_probe): a 256x256 float32 matmul, a 4 MiB float64 copy (read and written).
PROBE_WORK = {"matmul": ("flops", 2 * 256**3), "copy": ("bytes_accessed", 2 * 8 * 2**19)}


def matching_probe(rows: pd.DataFrame, job_rows: pd.DataFrame) -> str | None:
    """The host probe doing the case's kind of work, from BASE: the case's steady-state time estimated as
    dispatches (one per call; eager_ops under eager) at the dispatch probe's time, flops at the matmul
    probe's rate and bytes at the copy probe's bandwidth; the largest names the probe. None when the
    case's flops and bytes are unknown (they come from the compiled function: the same job's other
    modes lend them to eager) or a probe was not recorded."""

    def median(frame: pd.DataFrame, col: str) -> float:
        value = pd.to_numeric(frame[col], errors="coerce").median() if col in frame.columns else math.nan
        return float(value) if pd.notna(value) else math.nan

    probe = {name: median(rows, f"host_probe_{name}_s") for name in PROBES}
    work = {col: median(job_rows, col) for col in ("flops", "bytes_accessed")}
    if all(math.isnan(v) for v in work.values()) or any(math.isnan(v) for v in probe.values()):
        return None
    eager = str(rows["mode"].iloc[0]) == "eager"
    calls = median(rows, "eager_ops") if eager else 1.0
    estimate = {"dispatch": calls * probe["dispatch"]}
    for name, (col, amount) in PROBE_WORK.items():
        estimate[name] = work[col] * probe[name] / amount
    known = {k: v for k, v in estimate.items() if math.isfinite(v)}
    return max(known, key=lambda k: known[k]) if known else None


def host_columns(
    base: Side,
    base_rows: pd.DataFrame,
    new: Side,
    new_rows: pd.DataFrame,
    threshold: float,
    alpha: float,
    probe: str | None = None,
) -> dict:
    """The probe (named, else matching) and its NEW/BASE over the case's processes, with its CI (no
    between-run term: whether the host moved between these two runs is the very question)."""
    job_rows = base.rows[base.rows["_job"].isin(set(base_rows["_job"]))]
    name = probe or matching_probe(base_rows, job_rows)
    out = {**dict.fromkeys(HOST_COLUMNS, math.nan), "host_probe": name or "", NOTE: ""}
    if not name:
        return out
    col = f"host_probe_{name}_s"
    a, b = _pool(base, base_rows, col), _pool(new, new_rows, col)
    if not a or not b:
        out[NOTE] = f"host {name}: not recorded per process on both sides"
        return out
    change = two_sample_change(a, b, threshold, alpha)
    out.update(host_ratio=change["ratio"], host_ratio_ci_low=change["ratio_ci_low"])
    out.update(host_ratio_ci_high=change["ratio_ci_high"])
    out[NOTE] = f"host {name} {ratio_cell(change['ratio'], change['ratio_ci_low'], change['ratio_ci_high'])}"
    return out


def within_drift(table: pd.DataFrame, threshold: float = THRESHOLD) -> pd.Series:
    """Verdicts, with a steady-state 'slower' ('faster') turned into 'within host drift' where the case's host
    probe moved the same way, its CI over processes excluding 1 on that side, and the case moved no
    further than the probe beyond the threshold (NEW/BASE over the probe's within 1 + threshold). The
    cold call and compile keep theirs: the probes time warm kernels."""
    ratio, host = table["ratio"].astype(float), table["host_ratio"].astype(float)
    adjusted = ratio / host
    slower = (table["verdict"] == "slower") & (table["host_ratio_ci_low"] > 1) & (adjusted <= 1 + threshold)
    faster = (table["verdict"] == "faster") & (table["host_ratio_ci_high"] < 1) & (adjusted >= 1 / (1 + threshold))
    excused = (table["metric"] == "steady") & (slower | faster)
    return table["verdict"].where(~excused, WITHIN_DRIFT)


def host_moved(table: pd.DataFrame) -> pd.DataFrame:
    """Steady-state slower rows whose host probe's CI says the host moved the same way (excusable when asked)."""
    if table.empty:
        return table
    return table[(table["metric"] == "steady") & (table["verdict"] == "slower") & (table["host_ratio_ci_low"] > 1)]


def host_drift(base: Side, new: Side, alpha: float = ALPHA) -> dict[str, tuple[float, float, float]]:
    """Per host probe both runs recorded, NEW/BASE over all their processes with its CI: how far the host moved.
    Runs whose processes.csv lacks the probe give the ratio of their rows' medians, without a CI (nan)."""
    out = {}
    for col in PROBE_COLUMNS:
        a, b = base.probes.get(col, []), new.probes.get(col, [])
        if a and b:
            change = two_sample_change(a, b, alpha=alpha)
            out[col] = (change["ratio"], change["ratio_ci_low"], change["ratio_ci_high"])
        elif col in base.rows.columns and col in new.rows.columns:
            x, y = base.rows[col].dropna(), new.rows[col].dropna()
            if len(x) and len(y) and x.median() > 0:
                out[col] = (float(y.median() / x.median()), math.nan, math.nan)
    return out


def drift_lines(base: Side, new: Side, excuse: bool | str = False) -> list[str]:
    """What the two runs' host looked like: CPU steal of each, and the host probes' ratios between them."""
    lines = []
    for name, side in (("BASE", base), ("NEW", new)):
        rows = side.rows
        if "steal_median" in rows.columns and rows["steal_median"].notna().any():
            lines.append(
                f"steal {name}: median {rows['steal_median'].median():.1%}, max {rows['steal_max'].max():.1%}"
                f" ({replaced_processes(rows)} processes replaced)"
            )
        else:
            lines.append(f"steal {name}: not recorded")
    drift = host_drift(base, new)
    if drift:
        parts = ", ".join(
            f"{col.removeprefix('host_probe_').removesuffix('_s')} "
            + (ratio_cell(r, lo, hi) if math.isfinite(lo) else f"{ratio_cell(r)} (no CI: one value per run)")
            for col, (r, lo, hi) in drift.items()
        )
        rule = (
            f"a steady state that moved with its matching probe, no further, is '{WITHIN_DRIFT}' (--excuse-host-drift)"
            if excuse
            else "information only: a slowdown is not excused by it unless --excuse-host-drift"
        )
        lines.append(f"host drift (each probe in NEW against BASE, over processes): {parts}; {rule}")
    else:
        lines.append(
            "host drift: no host probe recorded on both sides (a run from before jitexp recorded it, or errors only)"
        )
    return lines


# ---- environment, matching ----------------------------------------------------------------------------------


def environment_diff(base: Side, new: Side) -> list[str]:
    """`jax_version: 0.10.2 -> 0.10.3` for every environment column that differs between the runs, read from
    every row (error rows too); a column one side does not record at all is unknown there, not a difference."""
    lines = []
    for col in ENVIRONMENT:
        a, b = _values(base.every_row, col), _values(new.every_row, col)
        if a and b and a != b:
            lines.append(f"{col}: {', '.join(a)} -> {', '.join(b)}")
    return lines


MACHINE = ("hostname", "cpu_model", "device_kind")


def across_machines(base: Side, new: Side) -> bool:
    """Whether the runs are known to come from different machines (a side that recorded none is not)."""
    return any(
        a and b and a != b for a, b in ((_values(base.every_row, c), _values(new.every_row, c)) for c in MACHINE)
    )


def machine_scope(base: Side, new: Side) -> str:
    """`across machines`, `on one machine`, or which side's machine is unknown (only error rows without it)."""
    if across_machines(base, new):
        return "across machines"
    unknown = [n for n, s in (("BASE", base), ("NEW", new)) if not _values(s.every_row, "hostname")]
    return f"machine of {' and '.join(unknown)} unknown" if unknown else "on one machine"


def _values(rows: pd.DataFrame, col: str) -> list[str]:
    if col not in rows.columns:
        return []
    return sorted({_cell(v) for v in rows[col].dropna()})


def unmatched(base: Side, new: Side, ignore: Sequence[str] = ()) -> list[str]:
    """Cases not compared, as text: NEW's cases that BASE lacks, and BASE's cases that were errors in BASE.
    (A case of BASE missing from NEW is a `missing` row of the table.)"""
    keys = matched_columns(base, new, ignore)
    label = lambda k: " ".join(f"{c}={v}" for c, v in zip(keys, k) if v != "")  # noqa: E731
    base_ok, base_err = set(_groups(base.rows, keys)), set(_groups(base.errors, keys))
    new_all = set(_groups(new.every_row, keys))
    every_base = base_ok | base_err
    lines = [
        f"NEW only: {label(k)}"
        for k in sorted(new_all, key=str)
        if not any(_matches(k, b) or _matches(b, k) for b in every_base)
    ]
    for k in sorted(base_err - base_ok, key=str):
        fixed = k in set(_groups(new.rows, keys))
        lines.append(f"error in BASE{', ok in NEW' if fixed else ''}: {label(k)} (not compared)")
    return lines


# what a case is, beyond the matched columns: a change in any of them is a different case, not a slower one
IDENTITY = ["static_argnames", "jit_fn", "donate_argnums", "donate_argnames", "compiler_options", "platform"]


def row_changes(base: Side, new: Side) -> list[str]:
    """`size: 16384 -> 65536` for each identity column whose values differ between the runs' rows (the modes
    as one set), for saying what changed when no case matches. Columns a side lacks are not compared."""
    a_rows, b_rows = base.every_row, new.every_row
    out = []
    for col in [*case_columns(a_rows), *IDENTITY]:
        a, b = _values(a_rows, col), _values(b_rows, col)
        if a and b and a != b or (col.startswith("param_") and bool(a) != bool(b)):
            out.append(f"{col}: {', '.join(a) or '-'} -> {', '.join(b) or '-'}")
    return out


def _groups(rows: pd.DataFrame, keys: list[str]) -> dict[tuple, pd.DataFrame]:
    if rows.empty or not keys:
        return {}
    rows = rows.reindex(columns=[*rows.columns, *(k for k in keys if k not in rows.columns)])
    return {_key(v): g for v, g in rows.groupby(keys, dropna=False, sort=False)}


def _matches(error_key: tuple, key: tuple) -> bool:
    """An error row's case matches where it knows a value (a crash before the backend started has no device_kind)."""
    return all(e == "" or e == k for e, k in zip(error_key, key))


def _pool(side: Side, rows: pd.DataFrame, metric: str) -> list:
    out: list = []
    for job, variant, env, mode in zip(rows["_job"], _text(rows, "variant"), _text(rows, "env"), rows["mode"]):
        out.extend(side.values.get((job, variant, env, str(mode)), {}).get(metric, []))
    return out


def _cell(value) -> str:
    if pd.isna(value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # 64 and 64.0 (a column upcast by a missing value elsewhere) are one size
    return str(value)


def _key(value) -> tuple:
    value = value if isinstance(value, tuple) else (value,)
    return tuple(_cell(v) for v in value)


# ---- output ---------------------------------------------------------------------------------


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


def plot(table: pd.DataFrame, keys: list[str], threshold: float, path: Path) -> Path:
    """Ratio per case and metric with its CI, a line at 1 and the threshold band shaded (rows with a ratio)."""
    import io

    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    table = table[np.isfinite(table["ratio"].to_numpy(float))].reset_index(drop=True)
    labels = [
        " ".join(str(r[k]) for k in keys if str(r[k]) not in ("", "nan"))
        + f" [{r['metric']}] {ratio_words(r['ratio'])[0]}"
        for _, r in table.iterrows()
    ]
    fig = Figure(figsize=(8, 0.45 * len(table) + 1.6))
    ax = fig.subplots()
    y = np.arange(len(table))
    ratio = table["ratio"].to_numpy(float)
    err = np.vstack(
        [
            np.clip(ratio - table["ratio_ci_low"].to_numpy(float), 0, None),
            np.clip(table["ratio_ci_high"].to_numpy(float) - ratio, 0, None),
        ]
    )
    colours = table["verdict"].map({"slower": "tab:red", "faster": "tab:green"}).fillna("tab:grey").tolist()
    ax.axvspan(1 / (1 + threshold), 1 + threshold, color="grey", alpha=0.15, label=f"noise threshold ±{threshold:.0%}")
    ax.axvline(1.0, color="grey", linestyle=":", linewidth=1)  # dotted: a reference, not a measurement
    for i in range(len(table)):
        ax.errorbar(ratio[i], y[i], xerr=err[:, i : i + 1], fmt="o", color=colours[i], capsize=3)
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    ax.xaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_formatter(plain)
    ax.set_xlabel("NEW / BASE (time; > 1 is slower), 95% CI")
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    return write_atomic(path, buffer.getvalue())


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
        "a broken case fails whatever this says",
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
    parser.add_argument("--no-plot", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: the table, files, and the gate's exit status (see build_parser's epilog)."""
    args = build_parser().parse_args(argv)
    fail_on = [m.strip() for m in args.fail_on.split(",") if m.strip()]
    bad = [m for m in fail_on if m not in CHANGE_METRICS]
    excuse = args.excuse_host_drift
    what = (
        f"--fail-on={bad[0]!r} is invalid; valid choices: {', '.join(CHANGE_METRICS)}"
        if bad
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
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        print(f"jitexp-compare: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    table = compare(base, new, threshold=args.threshold, alpha=args.alpha, ignore=ignore, excuse_host_drift=excuse)
    keys = matched_columns(base, new, ignore)
    if table.empty or (table["verdict"] == MISSING).all():
        print(f"jitexp-compare: {no_case_in_common(base, new, keys)}", file=sys.stderr)
        return 1
    env, missing = environment_diff(base, new), unmatched(base, new, ignore)
    scope = machine_scope(base, new)
    head = [
        f"jitexp-compare: BASE {args.base}  NEW {args.new}  ({scope}; threshold {args.threshold:.0%}, "
        f"alpha {args.alpha})",
        *(f"  differs: {line}" for line in env),
        *(f"  {line}" for line in drift_lines(base, new, excuse)),
    ]
    from jitexp.analysis.formatting import markdown_table, text_table

    view = render(table, args.threshold, args.alpha)
    lines = [*head, "", text_table(view, width=48)]
    lines += ["", *missing] if missing else []
    lines += gate_notes(table, args.alpha, excuse)
    bad_rows = failing(table, fail_on, args.allow_undetectable, args.allow_missing)
    lines += ["", gate_line(bad_rows)]
    print("\n".join(lines))
    out = (
        Path(args.out) if args.out else Path(args.new if Path(args.new).is_dir() else Path(args.new).parent) / "compare"
    )
    write_csv(table, out / "compare.csv")
    md = [
        "# jitexp-compare",
        "",
        f"BASE `{args.base}`, NEW `{args.new}` ({scope}).",
        "",
        *(f"- differs: {line}" for line in env),
        *(f"- {line}" for line in drift_lines(base, new, excuse)),
        "",
        markdown_table(view),
        "",
        *(f"- {m}" for m in missing),
        "",
        gate_line(bad_rows),
    ]
    if not args.no_plot and np.isfinite(table["ratio"].to_numpy(float)).any():
        plot(table, keys, args.threshold, out / "compare.png")
        md += ["", "![compare](compare.png)"]
    write_atomic(out / "compare.md", ("\n".join(md) + "\n").encode())
    print(f"\ncompare: {out / 'compare.md'}")
    return 1 if len(bad_rows) else 0


def no_case_in_common(base: Side, new: Side, keys: Sequence[str]) -> str:
    """The one line for two runs that share no case."""
    count = lambda side: len(_groups(side.every_row, list(keys)))  # noqa: E731
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


def failing(
    table: pd.DataFrame, fail_on: Sequence[str], allow_undetectable: bool = False, allow_missing: bool = False
) -> pd.DataFrame:
    """The rows that fail a CI gate: significantly slower, or cannot tell unless allowed, in fail_on metrics;
    a broken case always; a missing one unless allowed. ('within host drift' passes: it was asked for.)"""
    if table.empty:
        return table
    verdict = table["verdict"].astype(str)
    bad = verdict == "slower"
    if not allow_undetectable:
        bad |= verdict.str.startswith(CANNOT_TELL)
    bad = (bad & table["metric"].isin(fail_on)) | (verdict == BROKEN)
    if not allow_missing:
        bad |= verdict == MISSING
    return table[bad]


if __name__ == "__main__":
    raise SystemExit(main())
