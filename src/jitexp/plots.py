"""Report plots as PNG files: per-case mode bars, time / compile / speedup against size.

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

from . import tables
from .results import write_atomic

DPI = 120


def make_plots(df: pd.DataFrame, speedup: pd.DataFrame, out: str | os.PathLike) -> list[Path]:
    """Every plot the data support, written into out; returns the paths in a stable order."""
    out = Path(out)
    return [*bar_charts(df, speedup, out), *scaling_charts(df, out),
            *compile_charts(df, out), *speedup_charts(speedup, out)]


def bar_charts(df: pd.DataFrame, speedup: pd.DataFrame, out: Path) -> list[Path]:
    """Per case: one log-scale bar per mode (median, 95% CI error bars); failed modes marked."""
    paths = []
    keys = tables.case_keys(df)
    for values, case in df.groupby(keys, dropna=False, sort=False):
        ident = dict(zip(keys, tables._as_tuple(values)))
        bars = _bars(case)
        if not any(b["ok"] for b in bars):
            continue
        fig, ax = _figure()
        _draw_bars(ax, bars, _speedup_notes(speedup, ident))
        ax.set_yscale("log")
        ax.set_ylabel("median time per call (seconds)")
        ax.set_xlabel("mode")
        ax.set_title(_title(ident, size=True), fontsize=10)
        paths.append(_save(fig, out, "bars", ident, df, size=True))
    return paths


def scaling_charts(df: pd.DataFrame, out: Path) -> list[Path]:
    """Per workload/params/dtype/device: median time vs size per mode, log-log, CI as a band."""
    points = tables.scaling_points(df)
    paths = []
    for ident, lines in _line_groups(points):
        fig, ax = _figure()
        for label, line in lines:
            x, y = line["size"].to_numpy(float), line["median_s"].to_numpy(float)
            (drawn,) = ax.plot(x, y, marker="o", label=label)
            low, high = _band(line, y)
            ax.fill_between(x, low, high, color=drawn.get_color(), alpha=0.2, linewidth=0)
        _loglog(ax, "median time per call (seconds)", _sizes(lines))
        ax.set_title(_title(ident), fontsize=10)
        ax.legend(title="mode (band: 95% CI)")
        paths.append(_save(fig, out, "scaling", ident, df))
    return paths


def compile_charts(df: pd.DataFrame, out: Path) -> list[Path]:
    """Per workload/params/dtype/device: compile_s (solid, where measured) and cold first call (dashed) vs size.

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
            ax.plot(x, line["first_call_s"].to_numpy(float), marker="s", linestyle="--",
                    color=colour, label=f"{label}: first call (cold)")
        _loglog(ax, "time (seconds)", _sizes(lines))
        ax.set_title("compile cost: " + _title(ident), fontsize=10)
        ax.legend(fontsize=8)
        paths.append(_save(fig, out, "compile", ident, df))
    return paths


def speedup_charts(speedup: pd.DataFrame, out: Path) -> list[Path]:
    """Per workload/params/dtype/device: eager/compiled speedup vs size with CI, break-even annotated."""
    paths = []
    if speedup.empty:
        return paths
    for ident, lines in _line_groups(speedup, value="speedup"):
        fig, ax = _figure()
        for i, (label, line) in enumerate(lines):
            x, y = line["size"].to_numpy(float), line["speedup"].to_numpy(float)
            low, high = line["speedup_ci_low"].to_numpy(float), line["speedup_ci_high"].to_numpy(float)
            yerr = np.vstack([_nonneg(y - low), _nonneg(high - y)])
            drawn = ax.errorbar(x, y, yerr=yerr, marker="o", capsize=4, label=f"{label} vs eager")
            colour = drawn.lines[0].get_color()
            above = i % 2 == 0
            for xi, yi, (_, r) in zip(x, y, line.iterrows()):
                ax.annotate(_short_payoff(r), (xi, yi), textcoords="offset points",
                            xytext=(8, 6 if above else -8), va="bottom" if above else "top",
                            fontsize=8, color=colour,
                            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8})
        ax.axhline(1.0, color="grey", linestyle=":", linewidth=1, label="no speedup (1x)")
        _loglog(ax, "speedup, eager median / compiled median (x)", _sizes(lines))
        _plain_log_ticks(ax.yaxis)
        ax.set_title("speedup: " + _title(ident) + "\nlabels: pays off after n calls; n.s.: no significant difference",
                     fontsize=10)
        ax.legend(fontsize=8)
        paths.append(_save(fig, out, "speedup", ident, speedup))
    return paths


# ---- bar chart pieces ------------------------------------------------------------------

def _bars(case: pd.DataFrame) -> list[dict]:
    """One bar per (mode, variant) in the case: aggregated ok rows, or the failing error class."""
    multi = case[tables.VARIANT].nunique(dropna=False) > 1 if tables.VARIANT in case.columns else False
    frame = case.assign(static_argnums=tables._column(case, tables.VARIANT))
    groups = frame.groupby(["mode", tables.VARIANT], dropna=False, sort=False)
    bars = []
    for (mode, variant), rows in sorted(groups, key=lambda g: (tables._mode_rank(g[0][0]), tables._text_value(g[0][1]))):
        label = f"{mode}\nstatic={variant}" if multi and not tables._missing(variant) else str(mode)
        ok = tables.ok_rows(rows)
        if ok.empty:
            errors = tables.error_rows(rows)
            kind = tables._tail(errors["error_type"].iloc[0]) if not errors.empty else "no data"
            bars.append({"label": label, "mode": mode, "variant": variant, "ok": False, "error": kind})
        else:
            bars.append({"label": label, "mode": mode, "variant": variant, "ok": True, **tables.aggregate(ok)})
    return bars


def _draw_bars(ax, bars: list[dict], notes: dict) -> None:
    x = np.arange(len(bars))
    for i, bar in enumerate(bars):
        if not bar["ok"]:
            ax.text(i, 0.04, f"error:\n{bar['error']}", transform=ax.get_xaxis_transform(),
                    ha="center", va="bottom", fontsize=8, color="firebrick", wrap=True)
            continue
        median = bar["median_s"]
        low, high = _nonneg(median - bar["ci95_low_s"]), _nonneg(bar["ci95_high_s"] - median)
        ax.bar(i, median, color=f"C{tables._mode_rank(bar['mode'])}", width=0.6,
               yerr=[[low], [high]], capsize=6, ecolor="black")
        text = tables.format_seconds(median)
        note = notes.get((bar["mode"], tables._text_value(bar["variant"])))
        ax.annotate(text + (f"\n{note}" if note else ""), (i, median + high), textcoords="offset points",
                    xytext=(0, 4), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, [b["label"] for b in bars])
    ax.set_xlim(-0.6, len(bars) - 0.4)
    medians = [b["median_s"] for b in bars if b["ok"]]
    top, bottom = max(medians), min(medians)
    ax.set_ylim(bottom / 10, top * 10)


def _speedup_notes(speedup: pd.DataFrame, ident: dict) -> dict:
    """Bar annotations for compiled modes in this case: speedup and break-even calls."""
    if speedup.empty:
        return {}
    rows = speedup
    for key, value in ident.items():
        if key in rows.columns:
            rows = rows[_same(rows[key], value)]
    return {(r["mode"], tables._text_value(r[tables.VARIANT])):
            f"{tables.format_value('speedup', r['speedup'])} vs {r['baseline_mode']}"
            f"{' (' + r['verdict'] + ')' if not tables._missing(r['verdict']) else ''}, "
            f"{tables.payoff_text(r['verdict'], r['break_even_calls'], r['ahead_until_calls'], r['baseline_mode'])}"
            for _, r in rows.iterrows()}


# ---- shared helpers --------------------------------------------------------------------

def _line_groups(points: pd.DataFrame, value: str = "median_s"):
    """(identity, [(label, line), ...]) per size-less case with a line of >= 2 usable sizes."""
    if points.empty:
        return
    keys = tables.case_keys(points, size=False)
    for values, group in points.groupby(keys, dropna=False, sort=False):
        ident = dict(zip(keys, tables._as_tuple(values)))
        multi = group[tables.VARIANT].nunique(dropna=False) > 1
        lines = []
        variants = group.groupby(["mode", tables.VARIANT], dropna=False, sort=False)
        for (mode, variant), line in sorted(variants, key=lambda g: (tables._mode_rank(g[0][0]), tables._text_value(g[0][1]))):
            line = line.sort_values("size")
            usable = line[np.isfinite(line[value].astype(float)) & (line[value].astype(float) > 0)]
            if usable["size"].nunique() >= 2:
                label = f"{mode} static={variant}" if multi and not tables._missing(variant) else str(mode)
                lines.append((label, usable))
        if lines:
            yield ident, lines


def _figure():
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 4.8), layout="constrained")
    return fig, fig.add_subplot()


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
        ax.set_xticks(ticks, [str(tables._plain(t)) for t in ticks])
        ax.set_xlim(ticks[0] / 1.25, ticks[-1] * 1.6)


def _sizes(lines) -> np.ndarray:
    return np.concatenate([line["size"].to_numpy(float) for _, line in lines])


def _plain_log_ticks(axis) -> None:
    """Label a log axis with plain numbers (0.5, 2, 40) instead of powers of ten."""
    from matplotlib.ticker import LogFormatter

    axis.set_major_formatter(LogFormatter(labelOnlyBase=False))
    axis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1.2, 0.5)))


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
        parts.append(f"size {_show(ident.get('size'))}")
    parts.append(_show(ident.get("device_kind"), ident.get("platform")))
    return " | ".join(p for p in parts if p)


def _save(fig, out: Path, kind: str, ident: dict, df: pd.DataFrame, *, size: bool = False) -> Path:
    """Write the figure atomically as out/<kind>_<workload>[_<params>]_<dtype>[_<size>][_<device>].png.

    Old plots are removed before a report draws, so an existing name is a clash within
    this report and gets a ``_2``, ``_3`` suffix instead of being overwritten.
    """
    parts = [kind, ident.get("workload"), _param_slug(ident), ident.get("dtype")]
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
        if tables._missing(part) or part == "":
            continue
        text = re.sub(r"[^A-Za-z0-9._-]+", "-", str(tables._plain(part))).strip("-._")
        if text:
            cleaned.append(text)
    return "_".join(cleaned) or "plot"


def _param_slug(ident: dict) -> str:
    items = [(k[len("param_"):], v) for k, v in ident.items() if k.startswith("param_") and not tables._missing(v)]
    return "-".join(f"{k}-{tables._plain(v)}" for k, v in items)


def _show(*values) -> str:
    for value in values:
        if not tables._missing(value) and str(value):
            return str(tables._plain(value))
    return ""


def _same(series: pd.Series, value) -> pd.Series:
    if tables._missing(value):
        return series.isna().astype(bool)
    return (series == value).fillna(False).astype(bool)


def _short_payoff(row: pd.Series) -> str:
    """A point label that agrees with the verdict: n=calls to pay off, ahead<=k, never, or n.s."""
    v, n, ahead = row.get("verdict"), row.get("break_even_calls"), row.get("ahead_until_calls")
    if v == "faster" and not tables._missing(n):
        return "never" if math.isinf(n) else f"n={int(n)}"
    if v == "slower":
        return f"ahead<={int(ahead)}" if not tables._missing(ahead) and ahead >= 1 else "never"
    return "n.s."


def _positive(values: np.ndarray) -> np.ndarray:
    return np.isfinite(values) & (values > 0)


def _nonneg(values):
    values = np.asarray(values, dtype=float)
    return np.where(np.isfinite(values) & (values > 0), values, 0.0)
