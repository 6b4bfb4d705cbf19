"""Report plots as PNG files: time per call, speedup (and vs NumPy), cold start, calls, growth and compile cost.

matplotlib is imported inside the functions and used through ``Figure`` (Agg canvas, no
pyplot state), so importing this module is cheap and plotting works headless.
"""

from __future__ import annotations

import io
import math
import os
import re
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis import formatting
from jitexp.labels import size_text
from jitexp.report import tables
from jitexp.store.results import write_atomic

DPI = 120
UNSTABLE_MARKER = "D"  # a diamond: the row is flagged unstable (fill still says whether its CI met the target)


PHASES = [
    ("trace_s", "trace", "#4C72B0"),
    ("lower_s", "lower", "#55A868"),
    ("compile_s", "compile", "#C44E52"),
    ("execute_s", "execute", "#8C8C8C"),
    ("whole_s", "first call (parts not recorded)", "#CCB974"),
]
NICE_MANTISSAS: list[list[float]] = [
    [1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2, 2.2, 2.4, 2.6, 2.8, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9],
    [1, 1.2, 1.4, 1.6, 1.8, 2, 2.5, 3, 4, 5, 6, 8],
    [1, 1.5, 2, 3, 4, 5, 7],
    [1, 2, 3, 5],
    [1, 2, 5],
    [1, 3],
    [1],
]


def make_plots(
    df: pd.DataFrame, speedup: pd.DataFrame, out: str | os.PathLike, calls: pd.DataFrame | None = None
) -> list[Path]:
    """Every plot the data support, written into out; returns the paths in a stable order."""
    out = Path(out)
    return [
        *time_charts(df, out),
        *speedup_charts(df, speedup, out),
        *coldstart_charts(df, out),
        *scaling_charts(df, out),
        *compile_charts(df, out),
        *calls_charts(calls, df, out),
    ]


# ---- time per call: one dot plot per workload and dtype ----------------------------------


def figure_groups(df: pd.DataFrame):
    """(identity, rows) per figure: workload, dtype and device; params, sizes and variants go inside."""
    keys = [k for k in ("workload", "dtype", "platform", "device_kind") if k in df.columns]
    if df.empty or not keys:
        return
    for values, rows in df.groupby(keys, dropna=False, sort=False):
        yield dict(zip(keys, tables.as_tuple(values))), rows


def case_groups(rows: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The x groups of a figure: one per (variant, params, static_argnums, knobs, size), labelled on two lines.

    The label names only what varies in the figure: ``n=2 (static)`` / ``donate [0]`` and ``size 50`` (or
    what built the inputs where size did not: ``f32[128,32] +params``; nothing for a setup without size).
    """
    rows = tables.with_variant_columns(rows)
    params = tables.param_columns(rows)
    keys = [tables.AB_VARIANT, *params, tables.VARIANT, *tables.KNOBS, "size", "inputs", "input_shapes"]
    keys = [k for k in keys if k in rows.columns]
    varying = {k for k in keys if rows[k].astype("string").nunique(dropna=False) > 1}
    static_varies = tables.VARIANT in varying
    groups = []
    for values, case in rows.groupby(keys, dropna=False, sort=False):
        ident = dict(zip(keys, tables.as_tuple(values)))
        parts = [formatting.cell_text(ident[tables.AB_VARIANT])] if tables.AB_VARIANT in varying else []
        static_mark = static_varies or formatting.is_static(ident.get(tables.VARIANT))
        text = formatting.params_text(ident, static_mark=static_mark)
        if text:
            parts.append(text)
        elif static_varies:
            parts.append(f"static_argnums={ident.get(tables.VARIANT)}")
        for knob, short in (("donate_argnums", "donate"), ("compiler_options", "options")):
            if knob in varying:
                parts.append(f"{short} {formatting.cell_text(ident.get(knob)) or '-'}")
        if "size" in ident and size_text(ident, " "):
            parts.append(size_text(ident, " "))
        sort_key = tuple(
            (formatting.cell_text(ident.get(k)).replace("[]", "") if k != "size" else float(ident["size"]))
            if not formatting.is_missing(ident.get(k))
            else ""
            for k in keys
            if k != tables.AB_VARIANT  # variants keep the job's order, the baseline first
        )
        groups.append((sort_key, "\n".join(parts), case))
    try:
        groups.sort(key=lambda g: g[0])
    except TypeError:
        pass
    return [(label, case) for _, label, case in groups]


def _modes(rows: pd.DataFrame) -> list[str]:
    modes = [str(m) for m in pd.unique(rows["mode"].dropna())] if "mode" in rows.columns else []
    return sorted(modes, key=lambda m: (tables.mode_rank(m), m))


def _colour(mode: str) -> str:
    return f"C{tables.mode_rank(mode)}" if mode in tables.MODE_ORDER else "C5"


def time_charts(df: pd.DataFrame, out: Path) -> list[Path]:
    """Per workload, dtype and device: median time per call of every mode as a point with its 95% CI,
    on a log axis, the cases (params, static_argnums, sizes) side by side. Hollow: the CI missed its target
    (ci_target_met false); diamond: unstable; x: failed. The CI bar itself shows how tight each point is."""
    paths = []
    for ident, rows in figure_groups(df):
        if tables.ok_rows(rows).empty:
            continue
        groups = case_groups(rows)
        modes = _modes(rows)
        width = 0.75 / max(len(modes), 1)
        fig, ax = _figure(width=max(7.0, 2.8 + 0.9 * len(groups) * len(modes)))
        labelled, failures = set(), []
        show_values = len(groups) * len(modes) <= 24
        for gi, (_label, case) in enumerate(groups):
            for mi, mode in enumerate(modes):
                x = gi + (mi - (len(modes) - 1) / 2) * width
                mrows = case[tables.has_value(case, "mode", mode)]
                if mrows.empty:
                    continue
                ok = tables.ok_rows(mrows)
                if ok.empty:
                    err = tables.error_rows(mrows)
                    kind = formatting.short_name(err["error_type"].iloc[0]) if not err.empty else "no data"
                    failures.append((x, kind, mode))
                    continue
                agg = tables.aggregate(ok)
                y = agg["median_s"]
                yerr = [[_nonneg(y - agg["ci95_low_s"])], [_nonneg(agg["ci95_high_s"] - y)]]
                colour = _colour(mode)
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
                        formatting.format_seconds(y),
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
                color=_colour(mode),
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
        _seconds_axis(ax.yaxis)
        _pad_log_limits(ax, rows, ("ci95_low_s", "ci95_high_s"), bottom_room=2.5 if failures else 1.6)
        ax.set_xticks(range(len(groups)), [g[0] for g in groups], fontsize=8)
        ax.set_xlim(-0.6, len(groups) - 0.4)
        ax.set_ylabel("median time per call (95% CI)")
        ax.grid(True, axis="y", which="both", alpha=0.25)
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], marker="o", linestyle="none", color=_colour(m), label=m) for m in modes]
        if _missed_target(tables.ok_rows(rows)):
            handles.append(
                Line2D(
                    [],
                    [],
                    marker="o",
                    linestyle="none",
                    color="grey",
                    markerfacecolor="white",
                    markeredgewidth=1.5,
                    label="hollow: CI wider than the target",
                )
            )
        if _any_unstable(tables.ok_rows(rows)):
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
        _legend_below(fig, handles)
        _label_minor_log_ticks(ax, seconds=True)
        ax.set_title("time per call: " + _title(ident), fontsize=10)
        paths.append(_save(fig, out, "time", ident, df))
    return paths


def _any_unstable(rows: pd.DataFrame) -> bool:
    return bool(tables.get_column(rows, "unstable").map(formatting.is_true).any())


def _missed_target(rows: pd.DataFrame) -> bool:
    """Whether any row says its CI missed the target width (ci_target_met false; unknown counts as met)."""
    met = tables.get_column(rows, "ci_target_met")
    return bool((met.notna() & ~met.map(formatting.is_true).astype(bool)).any())


# ---- speedup: one figure per workload and dtype, a vs-NumPy panel when there are numpy rows -------


def speedup_charts(df: pd.DataFrame, speedup: pd.DataFrame, out: Path) -> list[Path]:
    """Per workload, dtype and device: each compiled mode's speedup over its baseline with the 95% CI,
    modes side by side per case, each point labelled with the speedup, its CI and the verdict; a
    second panel against NumPy when the job measured a NumPy twin."""
    paths: list[Path] = []
    if speedup.empty and "speedup_vs_numpy" not in df.columns:
        return paths
    numpy_rows = tables.ok_rows(df)
    numpy_rows = numpy_rows[tables.get_column(numpy_rows, "speedup_vs_numpy").notna()]
    for ident, _rows in figure_groups(df):
        mine = _match(speedup, ident)
        theirs = _match(numpy_rows, ident)
        if mine.empty and theirs.empty:
            continue
        panels = [
            p for p in (("vs baseline", mine, "speedup"), ("vs NumPy", theirs, "speedup_vs_numpy")) if not p[1].empty
        ]
        n_cases = max(len(case_groups(p[1])) for p in panels)
        n_modes = max(len(_modes(p[1])) for p in panels)
        panel_w = max(4.2, 1.2 + 1.35 * n_cases * n_modes)
        fig, axes = _figure(width=panel_w * len(panels) + 0.5, ncols=len(panels))
        for ax, (name, table, column) in zip(axes, panels):
            _speedup_panel(ax, table, column, name)
        fig.suptitle("speedup: " + _title(ident), fontsize=10)
        paths.append(_save(fig, out, "speedup", ident, df))
    return paths


def _speedup_panel(ax, table: pd.DataFrame, column: str, name: str) -> None:
    groups = case_groups(table)
    modes = _modes(table)
    width = min(0.45, 0.9 / max(len(modes), 1))
    low_col, high_col = f"{column}_ci_low", f"{column}_ci_high"
    verdict_col = "verdict" if column == "speedup" else "verdict_vs_numpy"
    values: list[tuple[float, float, float, int]] = []
    baselines = set()
    for gi, (_label, case) in enumerate(groups):
        for mi, mode in enumerate(modes):
            rows = case[tables.has_value(case, "mode", mode)]
            if rows.empty:
                continue
            r = rows.iloc[0]
            y = float(rows[column].median())
            lo = float(tables.get_column(rows, low_col).min())
            hi = float(tables.get_column(rows, high_col).max())
            if not math.isfinite(y) or y <= 0:
                continue
            baselines.add(str(r.get("baseline_mode", "numpy")) if column == "speedup" else "numpy")
            x = gi + (mi - (len(modes) - 1) / 2) * width
            colour = _colour(mode)
            ax.errorbar(
                [x],
                [y],
                yerr=[[_nonneg(y - lo)], [_nonneg(hi - y)]],
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
    _speedup_ticks(ax.yaxis, low, high)
    ax.set_xticks(range(len(groups)), [g[0] for g in groups], fontsize=8)
    ax.set_xlim(-0.6, len(groups) - 0.4 + 0.45)
    base = "/".join(sorted(baselines)) or "baseline"
    if column == "speedup":
        ax.set_ylabel(f"speedup = {base} median / mode median (x)")
        ax.set_title(f"vs {base}: above 1x the mode is faster\nn.s.: the CI contains 1", fontsize=9)
    else:
        ax.set_ylabel("speedup = NumPy median / mode median (x)")
        ax.set_title("vs NumPy: above 1x the mode beats NumPy\nn.s.: the CI contains 1", fontsize=9)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=max(len(modes), 1), frameon=False)


def _speedup_label(y: float, lo: float, hi: float, verdict, row) -> str:
    # the figure and its CI one way round (formatting.ratio_words): a speedup of 0.5 reads "2x slower, CI 1.6-2.5x"
    time_ratio, time_lo, time_hi = formatting.speedup_as_time_ratio(y, lo, hi)
    figure, _ = formatting.ratio_words(time_ratio)
    _, _, low, high = formatting.oriented(time_ratio, time_lo, time_hi)
    significant = verdict in ("faster", "slower") or formatting.is_missing(verdict)
    text = figure if significant else f"{figure}, n.s."
    if math.isfinite(lo) and math.isfinite(hi):
        text += f"\nCI {formatting.three_digits(low)}-{formatting.three_digits(high)}x"
    if row is not None and verdict in ("faster", "slower") and row.get("mode") != tables.NUMPY:
        text += "\n" + formatting.payoff_words(
            row.get("verdict"), row.get("break_even_calls"), row.get("ahead_until_calls")
        )
    return text


def _speedup_ticks(axis, low: float, high: float) -> None:
    """Plain ticks on a log speedup axis, as dense as fits (1.2x, 1.4x, 1.6x ...), so 1.57x reads off it."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ticks: list[float] = []
    for mantissas in NICE_MANTISSAS:
        ticks = [
            m * 10.0**e
            for e in range(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1)
            for m in mantissas
            if low <= m * 10.0**e <= high
        ]
        if len(ticks) <= 10:
            break
    if len(ticks) < 2:
        ticks = sorted({*ticks, *(v for v in (low * 1.02, 1.0, high / 1.02) if low <= v <= high)})
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}x"))


# ---- cold start: trace, lower, compile, execute against eager's cold first call ----------------


def coldstart_charts(df: pd.DataFrame, out: Path) -> list[Path]:
    """Per workload, dtype and device: each mode's cold first call as stacked trace/lower/compile/execute
    bars (eager's too: it compiles each primitive on first use), and a disk-cache-warm bar when measured."""
    paths = []
    for ident, rows in figure_groups(df):
        ok = tables.ok_rows(rows)
        ok = ok[tables.get_column(ok, "first_call_s").notna() & ~tables.has_value(ok, "mode", tables.NUMPY)]
        if ok.empty or not (~tables.has_value(ok, "mode", tables.EAGER)).any():
            continue
        groups = case_groups(ok)
        bars = []  # (group index, label, parts {phase: seconds}, total)
        for gi, (_label, case) in enumerate(groups):
            for mode in _modes(case):
                mrows = case[tables.has_value(case, "mode", mode)]
                r = mrows.iloc[0]
                bars.append(
                    (gi, mode, _phases(r, "first_call_s", "trace_s", "lower_s", "compile_s"), r["first_call_s"])
                )
                if not formatting.is_missing(r.get("cache_warm_first_call_s")):
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
        fig, ax = _figure(width=max(6.5, 2.8 + 0.75 * n_bars + 0.3 * len(groups)))
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
                        hatch="//" if label.startswith(tables.EAGER) else None,
                        edgecolor="white",
                        linewidth=0.5,
                    )
                    bottom += value
            ax.annotate(
                formatting.format_seconds(total),
                (x, bottom),
                textcoords="offset points",
                xytext=(0, 3),
                ha="center",
                va="bottom",
                fontsize=7,
            )
        ax.set_xticks(xs, [b[1] for b in bars], fontsize=8)
        if len(groups) > 1 or groups[0][0]:
            for gi, (label, _) in enumerate(groups):
                members = [x for x, b in zip(xs, bars) if b[0] == gi]
                ax.annotate(
                    label.replace("\n", ", "),
                    (float(np.mean(members)), 0),
                    xycoords=("data", "axes fraction"),
                    textcoords="offset points",
                    xytext=(0, -28),
                    ha="center",
                    va="top",
                    fontsize=8,
                    fontweight="bold",
                )
        _seconds_axis(ax.yaxis)
        ax.set_ylim(0, max(b[3] for b in bars) * 1.15)
        ax.set_ylabel("cold first call in a fresh process")
        ax.grid(True, axis="y", alpha=0.25)
        from matplotlib.patches import Patch

        drawn = set(_unique_handles(fig)[1])
        handles = [Patch(color=colour, label=name) for _, name, colour in PHASES if name in drawn]
        if any(b[1] == tables.EAGER for b in bars):
            handles.append(
                Patch(facecolor="white", edgecolor="grey", hatch="//", label="hatched: eager (compiles each primitive)")
            )
        _legend_below(fig, handles, ncol=min(len(handles), 3))
        ax.set_title("cold start: " + _title(ident), fontsize=10)
        paths.append(_save(fig, out, "coldstart", ident, df))
    return paths


def _phases(row: pd.Series, total_col: str, trace_col: str, lower_col: str, compile_col: str) -> dict:
    """trace/lower/compile and execute = the rest of the first call (NaN parts count as 0)."""
    total = float(row[total_col])
    if all(formatting.is_missing(row.get(c)) for c in (trace_col, lower_col, compile_col)):
        return {"whole_s": total}  # an older row: only the whole first call is known
    parts = {
        k: float(row.get(c)) if not formatting.is_missing(row.get(c)) else 0.0
        for k, c in (("trace_s", trace_col), ("lower_s", lower_col), ("compile_s", compile_col))
    }
    parts["execute_s"] = max(total - sum(parts.values()), 0.0)
    return parts


# ---- growth: time vs size with the exponent ------------------------------------------------


def scaling_charts(df: pd.DataFrame, out: Path) -> list[Path]:
    """Per workload/params/dtype/device: median time vs size per mode, log-log, CI as a band; from
    MIN_GROWTH_SIZES sizes on, the growth exponent (least-squares slope of log time over log size) in the
    legend and its fit dashed; with fewer, the legend says why there is none."""
    points = tables.scaling_points(df)
    paths = []
    for ident, lines in _line_groups(points):
        fig, ax = _figure()
        fitted = False
        for label, line in lines:
            x, y = line["size"].to_numpy(float), line["median_s"].to_numpy(float)
            slope = tables.growth_exponent(x, y)
            growth = (
                formatting.growth_text(slope)
                if math.isfinite(slope)
                else f"no exponent from {np.unique(x).size} sizes (needs {tables.MIN_GROWTH_SIZES})"
            )
            (drawn,) = ax.plot(x, y, marker="o", label=f"{label}: {growth}")
            low, high = _band(line, y)
            ax.fill_between(x, low, high, color=drawn.get_color(), alpha=0.2, linewidth=0)
            if math.isfinite(slope):
                fitted = True
                intercept = np.mean(np.log(y) - slope * np.log(x))
                ax.plot(x, np.exp(intercept) * x**slope, linestyle="--", linewidth=1.2, color=drawn.get_color())
        _loglog(ax, "median time per call", _sizes(lines))
        _seconds_axis(ax.yaxis)
        _label_minor_log_ticks(ax, seconds=True)
        ax.set_title(
            "growth: " + _title(ident) + "\nexponent = slope of log(time) over log(size): 1 linear, 2 quadratic",
            fontsize=10,
        )
        _legend_below(
            fig, ncol=2, title="band: 95% CI" + ("; dashed: least-squares fit" if fitted else ""), title_fontsize=8
        )
        paths.append(_save(fig, out, "scaling", ident, df))
    return paths


def compile_charts(df: pd.DataFrame, out: Path) -> list[Path]:
    """Per workload/params/dtype/device: compile_s (circles, where measured) and cold first call (squares) vs size.

    The first call stands in for compile time where compile_s is not measured (eager, or a
    runner that only times the first call), and bounds it from above where it is.
    """
    points = tables.scaling_points(df)
    paths = []
    for ident, lines in _line_groups(points, value="first_call_s"):
        if all(line["mode"].eq(tables.EAGER).all() for _, line in lines):
            continue
        fig, ax = _figure()
        for label, line in lines:
            x = line["size"].to_numpy(float)
            colour = None
            compile_y = line["compile_s"].to_numpy(float)
            if _positive(compile_y).any():
                (drawn,) = ax.plot(x, compile_y, marker="o", label=f"{label}: compile")
                colour = drawn.get_color()
            ax.plot(
                x, line["first_call_s"].to_numpy(float), marker="s", color=colour, label=f"{label}: first call (cold)"
            )
        _loglog(ax, "time", _sizes(lines))
        _seconds_axis(ax.yaxis)
        _label_minor_log_ticks(ax, seconds=True)
        ax.set_title("compile cost: " + _title(ident), fontsize=10)
        _legend_below(fig, ncol=2)
        paths.append(_save(fig, out, "compile", ident, df))
    return paths


# ---- calls: the first calls from cold and the retrace probe -------------------------------


def calls_charts(calls: pd.DataFrame | None, df: pd.DataFrame, out: Path) -> list[Path]:
    """Per workload: per-call latency of the cold probe (first calls, one line per job) and of the
    sequence probe (argument variants such as ``n=2 (static)``), compiled calls ringed in red and
    labelled with JAX's reason; failed calls as x."""
    paths: list[Path] = []
    if calls is None or calls.empty or "call_s" not in calls.columns:
        return paths
    frame = tables.join_jobs(calls, df)
    params = {c[len("param_") :] for c in tables.param_columns(df)}
    frame = frame.assign(probe=tables.text_column(frame, "probe").replace("", "cold"))
    for workload, rows in frame.groupby("workload", sort=False):
        probes = [p for p in ("cold", "sequence") if (rows["probe"] == p).any()]
        fig, axes = _figure(width=6.0 * len(probes) + 0.5, ncols=len(probes))
        for ax, probe in zip(axes, probes):
            _calls_panel(ax, rows[rows["probe"] == probe], probe, params)
        dtypes = [d for d in pd.unique(tables.text_column(rows, "dtype")) if d]
        fig.suptitle(f"per-call latency: {workload}" + (f" | {', '.join(dtypes)}" if dtypes else ""), fontsize=10)
        paths.append(_save(fig, out, "calls", {"workload": workload}, df))
    return paths


def _calls_panel(ax, rows: pd.DataFrame, probe: str, params: set) -> None:
    jobs = rows.groupby(["job_num", "mode"], dropna=False, sort=True)
    ticks: dict[int, str] = {}
    annotated: set = set()
    failed: dict[tuple, list] = {}  # (mode, static_argnums, error class) -> [(job, calls)]
    colour_i = 0
    for (job, mode), line in jobs:
        line = line.sort_values("call")
        r = line.iloc[0]
        static = formatting.cell_text(r.get(tables.VARIANT))
        if probe == "cold":
            label = f"{mode}, {formatting.params_text(r, static_mark=True) or 'static_argnums=' + (static or '-')}"
        else:
            names = sorted({v.split("=", 1)[0] for v in tables.text_column(line, "variant") if "=" in v} & params)
            mark = f"{', '.join(names)} {'static' if formatting.is_static(static) else 'traced'}: " if names else ""
            label = f"{mode}, {mark}static_argnums={static or '-'}"
        job_text = f"job {formatting.plain(job)}" if not formatting.is_missing(job) else ""
        ok = line[~tables.has_value(line, "status", "error")]
        err = line[tables.has_value(line, "status", "error")]
        if probe == "sequence":
            for c, v in zip(line["call"], tables.text_column(line, "variant")):
                ticks.setdefault(int(c), v)
        if len(err):
            key = (label, formatting.short_name(err["error_type"].iloc[0]))
            failed.setdefault(key, []).append((job_text, err["call"].to_numpy(float)))
        if ok.empty:
            continue
        colour = f"C{colour_i % 10}"
        colour_i += 1
        x = ok["call"].to_numpy(float)
        y = pd.to_numeric(ok["call_s"], errors="coerce").to_numpy(float)
        ax.plot(x, y, marker="o", color=colour, label=f"{label} ({job_text})" if job_text else label, markersize=5)
        compiled = _compiled_mask(ok)
        ax.plot(
            x[compiled],
            y[compiled],
            linestyle="none",
            marker="o",
            markersize=12,
            markerfacecolor="none",
            markeredgecolor="red",
            markeredgewidth=1.5,
        )
        for xi, yi, (_, c) in zip(x[compiled], y[compiled], ok[compiled].iterrows()):
            reason = formatting.cell_text(c.get("miss_reason"))
            if reason and (xi, reason) not in annotated:
                annotated.add((xi, reason))
                ax.annotate(
                    textwrap_short(reason),
                    (xi, yi),
                    textcoords="offset points",
                    xytext=(10, 10),
                    fontsize=7,
                    color="firebrick",
                    va="bottom",
                    ha="left",
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
                )
    for k, ((label, kind), jobs_) in enumerate(failed.items()):
        xs = np.unique(np.concatenate([c for _, c in jobs_]))
        jobs_text = ", ".join(j for j, _ in jobs_ if j)
        ax.plot(
            xs,
            [0.06 + 0.07 * k] * len(xs),
            linestyle="none",
            marker="x",
            markersize=8,
            color=f"C{(colour_i + k) % 10}",
            transform=ax.get_xaxis_transform(),
            label=f"{label} ({jobs_text}): every call failed, {kind}",
        )
    ax.set_yscale("log")
    _seconds_axis(ax.yaxis)
    ax.set_xlabel("call" + (" and its argument variant" if probe == "sequence" else ""))
    ax.set_ylabel("time of the call (until its output is ready)")
    calls = sorted({int(c) for c in rows["call"].dropna()})
    if probe == "sequence" and ticks:
        ax.set_xticks(sorted(ticks), [f"{c}\n{ticks[c]}" for c in sorted(ticks)], fontsize=8)
    elif calls:
        ax.set_xticks(calls)
    if calls:
        ax.set_xlim(calls[0] - 0.4, calls[-1] + 0.9)
    values = pd.to_numeric(rows["call_s"], errors="coerce")
    values = values[values > 0]
    if len(values):
        ax.set_ylim(values.min() / (5.0 if failed else 1.5), values.max() * 6)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    title = (
        "first calls from cold, one fresh process per job"
        if probe == "cold"
        else "sequence probe: argument variants in one fresh process"
    )
    ax.set_title(title + "\nred ring: the call traced and compiled (label: JAX's reason)", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1, frameon=False)


def _compiled_mask(rows: pd.DataFrame) -> np.ndarray:
    compiled = tables.get_column(rows, "compiled").map(formatting.is_true).astype(bool).to_numpy()
    compiles = pd.to_numeric(tables.get_column(rows, "compiles"), errors="coerce").fillna(0).to_numpy(float) > 0
    return compiled | compiles


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


def textwrap_short(text: str, width: int = 28) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width)[:3])


# ---- shared helpers --------------------------------------------------------------------


def _line_groups(points: pd.DataFrame, value: str = "median_s"):
    """(identity, [(label, line), ...]) per size-less case with a line of >= 2 usable sizes."""
    if points.empty:
        return
    keys = tables.case_keys(points, size=False)
    for values, group in points.groupby(keys, dropna=False, sort=False):
        ident = dict(zip(keys, tables.as_tuple(values)))
        group = tables.with_variant_columns(group)
        cols = [tables.VARIANT, *tables.KNOBS]
        multi = [c for c in cols if group[c].astype("string").nunique(dropna=False) > 1]
        lines = []
        variants = group.groupby(["mode", *cols], dropna=False, sort=False)
        ranked = sorted(variants, key=lambda g: (tables.mode_rank(g[0][0]), *map(formatting.cell_text, g[0][1:])))
        for (mode, *variant), line in ranked:
            line = line.sort_values("size")
            usable = line[np.isfinite(line[value].astype(float)) & (line[value].astype(float) > 0)]
            if usable["size"].nunique() >= 2:
                extra = [
                    f"{c.replace('_argnums', '')}={formatting.cell_text(v) or '-'}"
                    for c, v in zip(cols, variant)
                    if c in multi
                ]
                lines.append((" ".join([str(mode), *extra]), usable))
        if lines:
            yield ident, lines


def _legend_below(fig, handles=None, labels=None, *, ncol: int | None = None, **kw) -> None:
    """The figure's legend in a row below the axes (constrained layout makes room), never beside the plot."""
    if handles is None:
        handles, labels = _unique_handles(fig)
    if labels is None:
        labels = [h.get_label() for h in handles]
    fig.legend(
        handles, labels, loc="outside lower center", ncol=ncol or min(len(handles), 4), fontsize=8, frameon=False, **kw
    )


def _unique_handles(fig) -> tuple[list, list[str]]:
    """Every labelled artist of the figure's axes, each label once."""
    unique: dict[str, object] = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            unique.setdefault(label, handle)
    return list(unique.values()), list(unique)


def _figure(width: float | None = None, ncols: int | None = None):
    """A constrained-layout Figure (no pyplot state); with ncols, a list of that many axes."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(min(width or 7.0, 22.0), 4.8), layout="constrained")
    if ncols is None:
        return fig, fig.add_subplot()
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def _seconds_axis(axis) -> None:
    """Tick labels in people's units (100 us, 2 ms) instead of powers of ten."""
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: formatting.format_seconds(v) if v > 0 else "0"))
    axis.set_minor_formatter(FuncFormatter(lambda v, _: ""))


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


def _match(table: pd.DataFrame, ident: dict) -> pd.DataFrame:
    """table's rows of one figure identity."""
    rows = table
    for key, value in ident.items():
        if key in rows.columns:
            rows = rows[_same(rows[key], value)]
    return rows


def _loglog(ax, ylabel: str, sizes) -> None:
    """Log-log axes; the x ticks are the measured sizes (when few), written plainly."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("size")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)
    ticks = np.unique(pd.to_numeric(pd.Series(sizes), errors="coerce").dropna().to_numpy(float))
    ticks = ticks[ticks > 0]
    if 0 < ticks.size <= 12:
        from matplotlib.ticker import NullLocator

        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticks(ticks, [str(formatting.plain(t)) for t in ticks])
        ax.set_xlim(ticks[0] / 1.25, ticks[-1] * 1.6)


def _sizes(lines) -> np.ndarray:
    return np.concatenate([line["size"].to_numpy(float) for _, line in lines])


def _band(line: pd.DataFrame, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    low = line["ci95_low_s"].to_numpy(float)
    high = line["ci95_high_s"].to_numpy(float)
    low = np.where(np.isfinite(low) & (low > 0), low, y)
    high = np.where(np.isfinite(high) & (high > 0), high, y)
    return low, high


def _title(ident: dict, *, size: bool = False) -> str:
    params = tables.params_labels(pd.DataFrame([ident]))[0]
    parts = [str(ident.get("workload")) + (f" ({params})" if params else "")]
    parts.append(_show(ident.get("dtype")))
    if size:
        parts.append(size_text(ident, " "))
    parts.append(_show(ident.get("device_kind"), ident.get("platform")))
    return " | ".join(p for p in parts if p)


def _save(fig, out: Path, kind: str, ident: dict, df: pd.DataFrame, *, size: bool = False) -> Path:
    """Write the figure atomically as out/<kind>_<workload>[_<params>]_<dtype>[_<size>][_<device>].png.

    Old plots are removed before a report draws, so an existing name is a clash within
    this report and gets a ``_2``, ``_3`` suffix instead of being overwritten.
    """
    knobs = [
        f"{k.split('_')[0]}-{formatting.cell_text(ident[k]).strip('[]{}()').replace(' ', '').replace(chr(39), '')}"
        for k in tables.KNOBS
        if k in ident and formatting.cell_text(ident[k]) not in ("", "[]", "{}", "jax.jit")
    ]
    parts = [kind, ident.get("workload"), _param_slug(ident), *knobs, ident.get("dtype")]
    if size:
        parts.append(ident.get("size"))
    devices = [c for c in ("platform", "device_kind") if c in df.columns]
    if devices and len(df[devices].drop_duplicates()) > 1:
        parts.append(_show(ident.get("device_kind"), ident.get("platform")))
    stem = slug(*parts)
    path = out / f"{stem}.png"
    counter = 2
    while path.exists():
        path, counter = out / f"{stem}_{counter}.png", counter + 1
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    return write_atomic(path, buffer.getvalue())


def slug(*parts) -> str:
    """A safe file-name stem: parts joined by ``_``, anything but letters, digits, ``.``, ``_``, ``-`` as ``-``."""
    cleaned = []
    for part in parts:
        if formatting.is_missing(part) or part == "":
            continue
        text = re.sub(r"[^A-Za-z0-9._-]+", "-", str(formatting.plain(part))).strip("-._")
        if text:
            cleaned.append(text)
    return "_".join(cleaned) or "plot"


def _param_slug(ident: dict) -> str:
    items = [
        (k[len("param_") :], v) for k, v in ident.items() if k.startswith("param_") and not formatting.is_missing(v)
    ]
    return "-".join(f"{k}-{formatting.plain(v)}" for k, v in items)


def _show(*values) -> str:
    for value in values:
        if not formatting.is_missing(value) and str(value):
            return str(formatting.plain(value))
    return ""


def _same(series: pd.Series, value) -> pd.Series:
    if formatting.is_missing(value):
        return series.isna().astype(bool)
    return (series == value).fillna(False).astype(bool)


def _label_minor_log_ticks(ax, seconds: bool) -> None:
    """On a log y axis spanning under ~2.5 decades, label the 2x and 5x minor ticks too (3x under 1.2)."""
    from matplotlib.ticker import FuncFormatter

    low, high = ax.get_ylim()
    if low <= 0 or high <= low:
        return
    decades = math.log10(high / low)
    if decades >= 2.5:
        return
    keep = {2, 5} if decades >= 1.2 else {2, 3, 5}

    def minor(v, _):
        mantissa = round(v / 10 ** math.floor(math.log10(v) + 1e-9), 6)
        if mantissa in keep:
            return formatting.format_seconds(v) if seconds else f"{v:g}"
        return ""

    ax.yaxis.set_minor_formatter(FuncFormatter(minor))
    ax.tick_params(axis="y", which="minor", labelsize=7)


def _positive(values: np.ndarray) -> np.ndarray:
    return np.isfinite(values) & (values > 0)


def _nonneg(values):
    values = np.asarray(values, dtype=float)
    return np.where(np.isfinite(values) & (values > 0), values, 0.0)
