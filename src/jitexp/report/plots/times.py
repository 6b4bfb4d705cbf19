"""Time per call: one dot plot per workload, dtype and device (time_*.png), every mode's median with its 95% CI."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis.formatting.values import format_seconds, is_true, short_name
from jitexp.report.plots import grouping, style
from jitexp.report.shared import cases

UNSTABLE_MARKER = "D"  # a diamond: the row is flagged unstable (fill still says whether its CI met the target)


def time_charts(df: pd.DataFrame, out: Path) -> list[Path]:
    """Per workload, dtype and device: median time per call of every mode as a point with its 95% CI,
    on a log axis, the cases (params, static_argnums, sizes) side by side. Hollow: the CI missed its target
    (ci_target_met false); diamond: unstable; x: failed. The CI bar itself shows how tight each point is."""
    paths = []
    for ident, rows in grouping.figure_groups(df):
        if cases.ok_rows(rows).empty:
            continue
        groups = grouping.case_groups(rows)
        modes = grouping.modes(rows)
        width = 0.75 / max(len(modes), 1)
        fig, ax = style.figure(width=max(7.0, 2.8 + 0.9 * len(groups) * len(modes)))
        labelled, failures = set(), []
        show_values = len(groups) * len(modes) <= 24
        for gi, (_label, case) in enumerate(groups):
            for mi, mode in enumerate(modes):
                x = gi + (mi - (len(modes) - 1) / 2) * width
                mrows = case[cases.has_value(case, "mode", mode)]
                if mrows.empty:
                    continue
                ok = cases.ok_rows(mrows)
                if ok.empty:
                    err = cases.error_rows(mrows)
                    kind = short_name(err["error_type"].iloc[0]) if not err.empty else "no data"
                    failures.append((x, kind, mode))
                    continue
                agg = cases.aggregate(ok)
                y = agg["median_s"]
                yerr = [[style.nonneg(y - agg["ci95_low_s"])], [style.nonneg(agg["ci95_high_s"] - y)]]
                colour = style.mode_colour(mode)
                ax.errorbar(
                    [x],
                    [y],
                    yerr=yerr,
                    fmt=UNSTABLE_MARKER if _any_unstable(ok) else "o",
                    markersize=7,
                    capsize=4,
                    color=colour,
                    markerfacecolor="white" if _missed_target(ok) else colour,
                    markeredgewidth=1.5,
                    label=mode if mode not in labelled else None,
                )
                labelled.add(mode)
                if show_values:
                    ax.annotate(
                        format_seconds(y),
                        (x, y),
                        textcoords="offset points",
                        xytext=(6, 0),
                        va="center",
                        ha="left",
                        fontsize=7,
                        color=colour,
                    )
        for x, kind, mode in failures:
            ax.plot(
                [x],
                [0.04],
                marker="x",
                markersize=9,
                color=style.mode_colour(mode),
                transform=ax.get_xaxis_transform(),
                linestyle="none",
                label=None,
            )
            ax.annotate(
                f"{mode} failed:\n{_camel_wrap(kind)}",
                (x, 0.04),
                xycoords=ax.get_xaxis_transform(),
                textcoords="offset points",
                xytext=(0, 8),
                ha="center",
                va="bottom",
                fontsize=7,
                color="firebrick",
            )
        ax.set_yscale("log")
        style.seconds_axis(ax.yaxis)
        _pad_log_limits(ax, rows, ("ci95_low_s", "ci95_high_s"), bottom_room=2.5 if failures else 1.6)
        ax.set_xlim(-0.6, len(groups) - 0.4)
        style.x_labels(ax, range(len(groups)), [g[0] for g in groups])
        ax.set_ylabel("median time per call (95% CI)")
        ax.grid(True, axis="y", which="both", alpha=0.25)
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], marker="o", linestyle="none", color=style.mode_colour(m), label=m) for m in modes]
        if _missed_target(cases.ok_rows(rows)):
            handles.append(
                Line2D(
                    [],
                    [],
                    marker="o",
                    linestyle="none",
                    color="grey",
                    markerfacecolor="white",
                    markeredgewidth=1.5,
                    label="hollow: CI wider than timing.target_rel_ci",
                )
            )
        if _any_unstable(cases.ok_rows(rows)):
            handles.append(
                Line2D(
                    [],
                    [],
                    marker=UNSTABLE_MARKER,
                    linestyle="none",
                    color="grey",
                    label="diamond: unstable (see Caveats)",
                )
            )
        if failures:
            handles.append(Line2D([], [], marker="x", linestyle="none", color="grey", label="x: failed (see Errors)"))
        style.legend_below(fig, handles)
        style.label_minor_log_ticks(ax, seconds=True)
        title = style.title(ident, params=grouping.shared_text(rows))
        ax.set_title(style.fit_title(fig, "time per call: " + title), fontsize=10)
        paths.append(style.save(fig, out, "time", ident, df))
    return paths


def _any_unstable(rows: pd.DataFrame) -> bool:
    return bool(cases.get_column(rows, "unstable").map(is_true).any())


def _missed_target(rows: pd.DataFrame) -> bool:
    """Whether any row says its CI missed the target width (ci_target_met false; unknown counts as met)."""
    met = cases.get_column(rows, "ci_target_met")
    return bool((met.notna() & ~met.map(is_true).astype(bool)).any())


def _pad_log_limits(ax, rows: pd.DataFrame, columns, bottom_room: float = 1.6) -> None:
    """Log y limits around every finite positive value (and the CIs), with room below for failure marks."""
    found: list[np.ndarray] = []
    for col in ("median_s", *columns):
        if col in rows.columns:
            v = pd.to_numeric(rows[col], errors="coerce").to_numpy(float)
            found.append(v[np.isfinite(v) & (v > 0)])
    values = np.concatenate(found) if found else np.array([])
    if values.size:
        low, high = values.min(), values.max()
        span = max(high / low, 1.0)
        ax.set_ylim(low / (bottom_room * max(span, 2.0) ** 0.08), high * 1.6)


def _camel_wrap(name: str, width: int = 16) -> str:
    """``TracerIntegerConversionError`` as ``TracerInteger`` / ``ConversionError`` (lines of about width)."""
    words = re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])|[^A-Za-z0-9]+", name) or [name]
    lines, line = [], ""
    for word in words:
        if line and len(line) + len(word) > width:
            lines.append(line)
            line = ""
        line += word
    return "\n".join([*lines, line])
