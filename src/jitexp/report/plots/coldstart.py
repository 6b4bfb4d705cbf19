"""Cold start (coldstart_*.png): trace, lower, compile and execute of each mode's first call, eager's included."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis.formatting.values import EAGER, NUMPY, format_seconds, is_missing
from jitexp.report.plots import grouping, style
from jitexp.report.shared import cases

PHASES = [
    ("trace_s", "trace", "#4C72B0"),
    ("lower_s", "lower", "#55A868"),
    ("compile_s", "compile", "#C44E52"),
    ("execute_s", "execute", "#8C8C8C"),
    ("whole_s", "first call (parts not recorded)", "#CCB974"),
]


def coldstart_charts(df: pd.DataFrame, out: Path) -> list[Path]:
    """Per workload, dtype and device: each mode's cold first call as stacked trace/lower/compile/execute
    bars (eager's too: it compiles each primitive on first use), and a disk-cache-warm bar when measured."""
    paths = []
    for ident, rows in grouping.figure_groups(df):
        ok = cases.ok_rows(rows)
        ok = ok[cases.get_column(ok, "first_call_s").notna() & ~cases.has_value(ok, "mode", NUMPY)]
        if ok.empty or not (~cases.has_value(ok, "mode", EAGER)).any():
            continue
        groups = grouping.case_groups(ok)
        bars = []  # (group index, label, parts {phase: seconds}, total)
        for gi, (_label, case) in enumerate(groups):
            for mode in grouping.modes(case):
                mrows = case[cases.has_value(case, "mode", mode)]
                r = mrows.iloc[0]
                bars.append(
                    (gi, mode, _phases(r, "first_call_s", "trace_s", "lower_s", "compile_s"), r["first_call_s"])
                )
                if not is_missing(r.get("cache_warm_first_call_s")):
                    bars.append(
                        (
                            gi,
                            f"{mode}\ncache warm",
                            _phases(
                                r,
                                "cache_warm_first_call_s",
                                "cache_warm_trace_s",
                                "cache_warm_lower_s",
                                "cache_warm_compile_s",
                            ),
                            r["cache_warm_first_call_s"],
                        )
                    )
        n_bars = len(bars)
        fig, ax = style.figure(width=max(6.5, 2.8 + 0.75 * n_bars + 0.3 * len(groups)))
        xs, gap, last_group = [], 0.0, None
        for i, (gi, label, parts, total) in enumerate(bars):
            gap += 0.6 if last_group is not None and gi != last_group else 0.0
            last_group = gi
            x = i + gap
            xs.append(x)
            bottom = 0.0
            for key, name, colour in PHASES:
                value = parts.get(key, math.nan)
                if math.isfinite(value) and value > 0:
                    ax.bar(
                        x,
                        value,
                        bottom=bottom,
                        width=0.7,
                        color=colour,
                        label=name,
                        hatch="//" if label.startswith(EAGER) else None,
                        edgecolor="white",
                        linewidth=0.5,
                    )
                    bottom += value
            ax.annotate(
                format_seconds(total),
                (x, bottom),
                textcoords="offset points",
                xytext=(0, 3),
                ha="center",
                va="bottom",
                fontsize=7,
            )
        ax.set_xlim(xs[0] - 0.7, xs[-1] + 0.7)
        _label_bars(ax, xs, bars, groups)
        style.seconds_axis(ax.yaxis)
        ax.set_ylim(0, max(b[3] for b in bars) * 1.15)
        ax.set_ylabel(_mode_named(bars, groups) + "cold first call in a fresh process")
        ax.grid(True, axis="y", alpha=0.25)
        from matplotlib.patches import Patch

        drawn = set(style.unique_handles(fig)[1])
        handles = [Patch(color=colour, label=name) for _, name, colour in PHASES if name in drawn]
        if any(b[1] == EAGER for b in bars):
            handles.append(
                Patch(facecolor="white", edgecolor="grey", hatch="//", label="hatched: eager (compiles each primitive)")
            )
        style.legend_below(fig, handles, ncol=min(len(handles), 3))
        title = style.title(ident, params=grouping.shared_text(ok))
        ax.set_title(style.fit_title(fig, "cold start: " + title), fontsize=10)
        paths.append(style.save(fig, out, "coldstart", ident, df))
    return paths


def _label_bars(ax, xs: list[float], bars: list, groups: list) -> None:
    """One bar per x group: each bar labelled with its group (and its mode where modes differ). Several: each bar
    with its mode and the group's label in bold under them, wrapped to the group's width."""
    unit = style.axis_inches(ax) / (ax.get_xlim()[1] - ax.get_xlim()[0])
    if _one_bar_each(bars, groups):
        same_mode = len({b[1] for b in bars}) == 1
        labels = [label if same_mode else f"{b[1]}\n{label}" for b, (label, _) in zip(bars, groups)]
        spacing = min((b - a for a, b in zip(xs, xs[1:])), default=1.0)
        style.x_labels(ax, xs, labels, spacing=spacing)
        return
    ax.set_xticks(xs, [b[1] for b in bars], fontsize=8)
    if len(groups) > 1 or groups[0][0]:
        for gi, (label, _) in enumerate(groups):
            members = [x for x, b in zip(xs, bars) if b[0] == gi]
            ax.annotate(
                style.wrap(label.replace("\n", ", "), style.label_chars(unit * (len(members) + 0.4))),
                (float(np.mean(members)), 0),
                xycoords=("data", "axes fraction"),
                textcoords="offset points",
                xytext=(0, -28),
                ha="center",
                va="top",
                fontsize=8,
                fontweight="bold",
            )


def _mode_named(bars: list, groups: list) -> str:
    """``jit: `` for the y label when every group is one bar of the same mode (the bars' labels leave it out)."""
    modes = {b[1] for b in bars}
    return f"{modes.pop()}: " if len(modes) == 1 and _one_bar_each(bars, groups) else ""


def _one_bar_each(bars: list, groups: list) -> bool:
    """Whether every labelled x group is a single bar (its tick then names the group, not the mode)."""
    return len(bars) == len(groups) and (len(groups) > 1 or bool(groups[0][0]))


def _phases(row: pd.Series, total_col: str, trace_col: str, lower_col: str, compile_col: str) -> dict:
    """trace/lower/compile and execute = the rest of the first call (NaN parts count as 0)."""
    total = float(row[total_col])
    if all(is_missing(row.get(c)) for c in (trace_col, lower_col, compile_col)):
        return {"whole_s": total}  # an older row: only the whole first call is known
    parts = {
        k: float(row.get(c)) if not is_missing(row.get(c)) else 0.0
        for k, c in (("trace_s", trace_col), ("lower_s", lower_col), ("compile_s", compile_col))
    }
    parts["execute_s"] = max(total - sum(parts.values()), 0.0)
    return parts
