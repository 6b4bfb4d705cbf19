"""Speedup: one figure per workload, dtype and device (speedup_*.png), with a vs-NumPy panel when there are numpy rows."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from jitexp.analysis.formatting.phrases import oriented, payoff_words, ratio_words, speedup_as_time_ratio
from jitexp.analysis.formatting.values import NUMPY, is_missing, three_digits
from jitexp.report.plots import grouping, style
from jitexp.report.shared import cases

AXIS_NOTE = "Hodges-Lehmann over processes; n.s.: the CI contains 1"


def speedup_charts(df: pd.DataFrame, speedup: pd.DataFrame, out: Path) -> list[Path]:
    """Per workload, dtype and device: each compiled mode's speedup over its baseline with the 95% CI,
    modes side by side per case, each point labelled with the speedup, its CI and the verdict; a
    second panel against NumPy when the job measured a NumPy twin."""
    paths: list[Path] = []
    if speedup.empty and "speedup_vs_numpy" not in df.columns:
        return paths
    numpy_rows = cases.ok_rows(df)
    numpy_rows = numpy_rows[cases.get_column(numpy_rows, "speedup_vs_numpy").notna()]
    for ident, rows in grouping.figure_groups(df):
        mine = _match(speedup, ident)
        theirs = _match(numpy_rows, ident)
        if mine.empty and theirs.empty:
            continue
        panels = [
            p for p in (("vs baseline", mine, "speedup"), ("vs NumPy", theirs, "speedup_vs_numpy")) if not p[1].empty
        ]
        shared = grouping.shared_params(rows)
        n_cases = max(len(grouping.case_groups(p[1], shared)) for p in panels)
        n_modes = max(len(grouping.modes(p[1])) for p in panels)
        panel_w = max(4.2, 1.2 + 1.35 * n_cases * n_modes)
        fig, axes = style.figure(width=panel_w * len(panels) + 0.5, ncols=len(panels))
        for ax, (name, table, column) in zip(axes, panels):
            _speedup_panel(ax, table, column, name, shared)
        title = style.title(ident, params=grouping.shared_text(rows, shared))
        fig.suptitle(style.fit_title(fig, "speedup: " + title), fontsize=10)
        paths.append(style.save(fig, out, "speedup", ident, df))
    return paths


def _speedup_panel(ax, table: pd.DataFrame, column: str, name: str, shared: dict) -> None:
    groups = grouping.case_groups(table, shared)
    modes = grouping.modes(table)
    width = min(0.45, 0.9 / max(len(modes), 1))
    low_col, high_col = f"{column}_ci_low", f"{column}_ci_high"
    verdict_col = "verdict" if column == "speedup" else "verdict_vs_numpy"
    values: list[tuple[float, float, float, int]] = []
    baselines = set()
    for gi, (_label, case) in enumerate(groups):
        for mi, mode in enumerate(modes):
            rows = case[cases.has_value(case, "mode", mode)]
            if rows.empty:
                continue
            r = rows.iloc[0]
            y = float(rows[column].median())
            lo = float(cases.get_column(rows, low_col).min())
            hi = float(cases.get_column(rows, high_col).max())
            if not math.isfinite(y) or y <= 0:
                continue
            baselines.add(str(r.get("baseline_mode", "numpy")) if column == "speedup" else "numpy")
            x = gi + (mi - (len(modes) - 1) / 2) * width
            colour = style.mode_colour(mode)
            ax.errorbar(
                [x],
                [y],
                yerr=[[style.nonneg(y - lo)], [style.nonneg(hi - y)]],
                fmt="o",
                markersize=7,
                capsize=4,
                color=colour,
                label=mode if mi not in [v[3] for v in values] else None,
            )
            values += [(y, lo, hi, mi)]
            ax.annotate(
                _speedup_label(y, lo, hi, r.get(verdict_col), r if column == "speedup" else None),
                (x, y),
                textcoords="offset points",
                xytext=(7, 0),
                va="center",
                ha="left",
                fontsize=7,
                color=colour,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
            )
    ax.axhline(1.0, color="grey", linestyle=":", linewidth=1)
    ax.set_yscale("log")
    finite = [v for y, lo, hi, _ in values for v in (y, lo, hi) if math.isfinite(v) and v > 0] + [1.0]
    span = max(finite) / min(finite)
    low, high = min(finite) / span**0.05 / 1.1, max(finite) * span**0.12 * 1.15  # room for the labels
    ax.set_ylim(low, high)
    style.ratio_ticks(ax.yaxis, low, high)
    ax.set_xlim(-0.6, len(groups) - 0.4 + 0.45)
    style.x_labels(ax, range(len(groups)), [g[0] for g in groups])
    base = "/".join(sorted(baselines)) or "baseline"
    # one meaning (text_parts.SPEEDUP_MEANING): per process baseline median / mode median, Hodges-Lehmann over them
    if column == "speedup":
        ax.set_ylabel(f"speedup over {base} (x)\nper process: {base} median / mode median")
        ax.set_title(f"vs {base}: above 1x the mode is faster\n{AXIS_NOTE}", fontsize=9)
    else:
        ax.set_ylabel("speedup over NumPy (x)\nper process: NumPy median / mode median")
        ax.set_title(f"vs NumPy: above 1x the mode beats NumPy\n{AXIS_NOTE}", fontsize=9)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=max(len(modes), 1), frameon=False)


def _speedup_label(y: float, lo: float, hi: float, verdict, row) -> str:
    # the figure and its CI one way round (ratio_words): a speedup of 0.5 reads "2x slower, CI 1.6-2.5x"
    time_ratio, time_lo, time_hi = speedup_as_time_ratio(y, lo, hi)
    figure, _ = ratio_words(time_ratio)
    _, _, low, high = oriented(time_ratio, time_lo, time_hi)
    significant = verdict in ("faster", "slower") or is_missing(verdict)
    text = figure if significant else f"{figure}, n.s."
    if math.isfinite(lo) and math.isfinite(hi):
        text += f"\nCI {three_digits(low)}-{three_digits(high)}x"
    if row is not None and verdict in ("faster", "slower") and row.get("mode") != NUMPY:
        text += "\n" + payoff_words(row.get("verdict"), row.get("break_even_calls"), row.get("ahead_until_calls"))
    return text


def _match(table: pd.DataFrame, ident: dict) -> pd.DataFrame:
    """table's rows of one figure identity."""
    rows = table
    for key, value in ident.items():
        if key in rows.columns:
            rows = rows[_same(rows[key], value)]
    return rows


def _same(series: pd.Series, value) -> pd.Series:
    if is_missing(value):
        return series.isna().astype(bool)
    return (series == value).fillna(False).astype(bool)
