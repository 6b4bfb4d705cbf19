"""The host's own drift between two runs: the host probe doing a case's kind of work, its NEW/BASE with a CI,
the verdicts it may excuse (--excuse-host-drift), and the lines that say how far the host moved."""

from __future__ import annotations

import math

import pandas as pd

from jitexp.analysis.stats import ALPHA, THRESHOLD, two_sample_change
from jitexp.noise import PROBE_COLUMNS, PROBES
from jitexp.report.compare.runs import HOST_COLUMNS, NOTE, Case, Side, new_over_base
from jitexp.report.shared.cases import replaced_processes

WITHIN_DRIFT = "within host drift"  # only with --excuse-host-drift

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


def host_columns(case: Case, threshold: float, alpha: float, probe: str | None = None) -> dict:
    """The probe (named, else matching) and its NEW/BASE over the case's processes, with its CI (no
    between-run term: whether the host moved between these two runs is the very question)."""
    base_rows = case.base_rows
    job_rows = case.base.rows[case.base.rows["_job"].isin(set(base_rows["_job"]))]
    name = probe or matching_probe(base_rows, job_rows)
    out = {**dict.fromkeys(HOST_COLUMNS, math.nan), "host_probe": name or "", NOTE: ""}
    if not name:
        return out
    col = f"host_probe_{name}_s"
    a, b = case.pooled(col)
    if not a or not b:
        out[NOTE] = f"host {name}: not recorded per process on both sides"
        return out
    change = two_sample_change(a, b, threshold, alpha)
    out.update(host_ratio=change["ratio"], host_ratio_ci_low=change["ratio_ci_low"])
    out.update(host_ratio_ci_high=change["ratio_ci_high"])
    out[NOTE] = f"host {name} {new_over_base(change['ratio'], change['ratio_ci_low'], change['ratio_ci_high'])}"
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
            + (new_over_base(r, lo, hi) if math.isfinite(lo) else f"{new_over_base(r)} (no CI: one value per run)")
            for col, (r, lo, hi) in drift.items()
        )
        rule = (
            f"a steady state that moved with its matching probe, no further, is '{WITHIN_DRIFT}' (--excuse-host-drift)"
            if excuse
            else "information only: a slowdown is not excused by it unless --excuse-host-drift"
        )
        lines.append(f"host drift (each probe's NEW/BASE over processes, 95% CI): {parts}; {rule}")
    else:
        lines.append(
            "host drift: no host probe recorded on both sides (a run from before jitexp recorded it, or errors only)"
        )
    return lines
