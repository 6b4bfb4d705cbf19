"""Growth with size, log-log: time per call with its exponent (scaling_*.png) and compile cost (compile_*.png)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp import labels
from jitexp.analysis.formatting.values import EAGER, cell_text, growth_text, plain
from jitexp.report.plots import style
from jitexp.report.shared import cases
from jitexp.report.shared.growth import MIN_GROWTH_SIZES, growth_exponent, scaling_points


def scaling_charts(df: pd.DataFrame, out: Path) -> list[Path]:
    """Per workload/params/dtype/device: median time vs size per mode, log-log, CI as a band; from
    MIN_GROWTH_SIZES sizes on, the growth exponent (least-squares slope of log time over log size) in the
    legend and its fit dashed; with fewer, the legend says why there is none."""
    points = scaling_points(df)
    paths = []
    for ident, lines in _line_groups(points):
        fig, ax = style.figure()
        fitted = False
        for label, line in lines:
            x, y = line["size"].to_numpy(float), line["median_s"].to_numpy(float)
            slope = growth_exponent(x, y)
            growth = (
                growth_text(slope)
                if math.isfinite(slope)
                else f"no exponent from {np.unique(x).size} sizes (needs {MIN_GROWTH_SIZES})"
            )
            (drawn,) = ax.plot(x, y, marker="o", label=f"{label}: {growth}")
            low, high = _band(line, y)
            ax.fill_between(x, low, high, color=drawn.get_color(), alpha=0.2, linewidth=0)
            if math.isfinite(slope):
                fitted = True
                intercept = np.mean(np.log(y) - slope * np.log(x))
                ax.plot(x, np.exp(intercept) * x**slope, linestyle="--", linewidth=1.2, color=drawn.get_color())
        _loglog(ax, "median time per call", _sizes(lines), lines)
        style.seconds_axis(ax.yaxis)
        style.label_minor_log_ticks(ax, seconds=True)
        ax.set_title(
            "growth: " + style.title(ident) + "\nexponent = slope of log(time) over log(size): 1 linear, 2 quadratic",
            fontsize=10,
        )
        style.legend_below(
            fig, ncol=2, title="band: 95% CI" + ("; dashed: least-squares fit" if fitted else ""), title_fontsize=8
        )
        paths.append(style.save(fig, out, "scaling", ident, df))
    return paths


def compile_charts(df: pd.DataFrame, out: Path) -> list[Path]:
    """Per workload/params/dtype/device: compile_s (circles, where measured) and cold first call (squares) vs size.

    The first call stands in for compile time where compile_s is not measured (eager, or a
    runner that only times the first call), and bounds it from above where it is.
    """
    points = scaling_points(df)
    paths = []
    for ident, lines in _line_groups(points, value="first_call_s"):
        if all(line["mode"].eq(EAGER).all() for _, line in lines):
            continue
        fig, ax = style.figure()
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
        _loglog(ax, "time", _sizes(lines), lines)
        style.seconds_axis(ax.yaxis)
        style.label_minor_log_ticks(ax, seconds=True)
        ax.set_title("compile cost: " + style.title(ident), fontsize=10)
        style.legend_below(fig, ncol=2)
        paths.append(style.save(fig, out, "compile", ident, df))
    return paths


def _line_groups(points: pd.DataFrame, value: str = "median_s"):
    """(identity, [(label, line), ...]) per size-less case with a line of >= 2 usable sizes."""
    if points.empty:
        return
    keys = cases.case_keys(points, size=False)
    for values, group in points.groupby(keys, dropna=False, sort=False):
        ident = dict(zip(keys, cases.as_tuple(values)))
        group = cases.with_variant_columns(group)
        cols = [cases.STATIC_ARGNUMS, *cases.KNOBS]
        multi = [c for c in cols if group[c].astype("string").nunique(dropna=False) > 1]
        lines = []
        variants = group.groupby(["mode", *cols], dropna=False, sort=False)
        ranked = sorted(variants, key=lambda g: (cases.mode_rank(g[0][0]), *map(cell_text, g[0][1:])))
        for (mode, *variant), line in ranked:
            line = line.sort_values("size")
            usable = line[np.isfinite(line[value].astype(float)) & (line[value].astype(float) > 0)]
            if usable["size"].nunique() >= 2:
                extra = [
                    f"{c.replace('_argnums', '')}={cell_text(v) or '-'}" for c, v in zip(cols, variant) if c in multi
                ]
                lines.append((" ".join([str(mode), *extra]), usable))
        if lines:
            yield ident, lines


def _loglog(ax, ylabel: str, sizes, lines=()) -> None:
    """Log-log axes; the x ticks are the measured sizes (when few), written plainly; the x label says what size is
    in the inputs the rows measured (`size: f32[size,256]`, from input_shapes) where they say one thing."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    meanings = {
        labels.size_meaning(s, shapes)
        for _, line in lines
        for s, shapes in zip(line["size"], cases.get_column(line, "input_shapes"))
    }
    meaning = meanings.pop() if len(meanings) == 1 else ""
    ax.set_xlabel(f"size: inputs {meaning}" if meaning else "size")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="major", alpha=0.3)
    ticks = np.unique(pd.to_numeric(pd.Series(sizes), errors="coerce").dropna().to_numpy(float))
    ticks = ticks[ticks > 0]
    if 0 < ticks.size <= 12:
        from matplotlib.ticker import NullLocator

        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticks(ticks, [str(plain(t)) for t in ticks])
        ax.set_xlim(ticks[0] / 1.25, ticks[-1] * 1.6)


def _sizes(lines) -> np.ndarray:
    return np.concatenate([line["size"].to_numpy(float) for _, line in lines])


def _band(line: pd.DataFrame, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    low = line["ci95_low_s"].to_numpy(float)
    high = line["ci95_high_s"].to_numpy(float)
    low = np.where(np.isfinite(low) & (low > 0), low, y)
    high = np.where(np.isfinite(high) & (high > 0), high, y)
    return low, high


def _positive(values: np.ndarray) -> np.ndarray:
    return np.isfinite(values) & (values > 0)
