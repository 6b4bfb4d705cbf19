"""What every report figure shares: the canvas, mode colours, seconds axes, legend, title and the PNG file.

matplotlib is imported inside the functions and used through ``Figure`` (Agg canvas, no
pyplot state), so importing this module is cheap and plotting works headless.
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis.formatting.values import cell_text, format_seconds, is_missing, plain
from jitexp.labels import size_text
from jitexp.report.shared import cases
from jitexp.store.csvio import write_atomic

DPI = 120
NICE_MANTISSAS: list[list[float]] = [
    [1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 2, 2.2, 2.4, 2.6, 2.8, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9],
    [1, 1.2, 1.4, 1.6, 1.8, 2, 2.5, 3, 4, 5, 6, 8],
    [1, 1.5, 2, 3, 4, 5, 7],
    [1, 2, 3, 5],
    [1, 2, 5],
    [1, 3],
    [1],
]


def figure(width: float | None = None, ncols: int | None = None):
    """A constrained-layout Figure (no pyplot state); with ncols, a list of that many axes."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(min(width or 7.0, 22.0), 4.8), layout="constrained")
    if ncols is None:
        return fig, fig.add_subplot()
    axes = fig.subplots(1, ncols, squeeze=False)[0]
    return fig, list(axes)


def mode_colour(mode: str) -> str:
    """The colour of a mode, the same in every figure (C5 for a mode the report does not rank)."""
    return f"C{cases.mode_rank(mode)}" if mode in cases.MODE_ORDER else "C5"


def seconds_axis(axis) -> None:
    """Tick labels in people's units (100 us, 2 ms) instead of powers of ten."""
    from matplotlib.ticker import FuncFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: format_seconds(v) if v > 0 else "0"))
    axis.set_minor_formatter(FuncFormatter(lambda v, _: ""))


def label_minor_log_ticks(ax, seconds: bool) -> None:
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
            return format_seconds(v) if seconds else f"{v:g}"
        return ""

    ax.yaxis.set_minor_formatter(FuncFormatter(minor))
    ax.tick_params(axis="y", which="minor", labelsize=7)


def legend_below(fig, handles=None, labels=None, *, ncol: int | None = None, **kw) -> None:
    """The figure's legend in a row below the axes (constrained layout makes room), never beside the plot."""
    if handles is None:
        handles, labels = unique_handles(fig)
    if labels is None:
        labels = [h.get_label() for h in handles]
    fig.legend(
        handles, labels, loc="outside lower center", ncol=ncol or min(len(handles), 4), fontsize=8, frameon=False, **kw
    )


def unique_handles(fig) -> tuple[list, list[str]]:
    """Every labelled artist of the figure's axes, each label once."""
    unique: dict[str, object] = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            unique.setdefault(label, handle)
    return list(unique.values()), list(unique)


def title(ident: dict, *, size: bool = False, params: str = "") -> str:
    """A figure's title: workload (params) | dtype [| size] | device; params (the ones every x group shares)
    stand in where ident has none."""
    params = cases.params_labels(pd.DataFrame([ident]))[0] or params
    parts = [str(ident.get("workload")) + (f" ({params})" if params else "")]
    parts.append(_show(ident.get("dtype")))
    if size:
        parts.append(size_text(ident, " "))
    parts.append(_show(ident.get("device_kind"), ident.get("platform")))
    return " | ".join(p for p in parts if p)


def wrap(text: str, width: int) -> str:
    """text's lines broken after each ``, `` that keeps a line under width characters (a long item stays whole)."""
    lines = []
    for line in text.split("\n"):
        current = ""
        for item in line.split(", "):
            if current and len(current) + 2 + len(item) > width:
                lines.append(current + ",")
                current = item
            else:
                current = f"{current}, {item}" if current else item
        lines.append(current)
    return "\n".join(lines)


def x_labels(ax, positions, labels: list[str], spacing: float = 1.0, fontsize: float = 8) -> None:
    """x tick labels wrapped to the room between ticks (spacing data units apart, after set_xlim); still too
    wide, they turn 30 degrees so neighbours never run into each other."""
    chars = label_chars(spacing * axis_inches(ax) / max(abs(ax.get_xlim()[1] - ax.get_xlim()[0]), 1e-9), fontsize)
    wrapped = [wrap(label, chars) for label in labels]
    ax.set_xticks(list(positions), wrapped, fontsize=fontsize)
    if any(len(line) > chars for label in wrapped for line in label.split("\n")):
        ax.tick_params(axis="x", labelrotation=30)
        for text in ax.get_xticklabels():
            text.set_horizontalalignment("right")
            text.set_rotation_mode("anchor")


def fit_title(fig, text: str, fontsize: float = 10) -> str:
    """text wrapped after a ``, `` where it would run past the axes (about 0.8 of the figure) at fontsize."""
    return wrap(text, label_chars(0.8 * fig.get_figwidth(), fontsize))


def axis_inches(ax) -> float:
    """About how wide ax is drawn, in inches (its share of the figure before the layout adjusts it)."""
    return float(ax.get_position().width * ax.figure.get_figwidth())


def label_chars(inches: float, fontsize: float = 8) -> int:
    """About how many characters of a label at fontsize fit in inches (never under 6)."""
    return max(6, int(inches * 72 / (fontsize * 0.62)))


def ratio_ticks(axis, low: float, high: float, unit: str = "x") -> None:
    """Plain ticks on a log ratio axis, as dense as fits (1.2x, 1.4x, 1.6x ...), so 1.57x reads off it."""
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
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}{unit}"))


def save(fig, out: Path, kind: str, ident: dict, df: pd.DataFrame, *, size: bool = False) -> Path:
    """Write the figure atomically as out/<kind>_<workload>[_<params>]_<dtype>[_<size>][_<device>].png.

    Old plots are removed before a report draws, so an existing name is a clash within
    this report and gets a ``_2``, ``_3`` suffix instead of being overwritten.
    """
    knobs = [
        f"{k.split('_')[0]}-{cell_text(ident[k]).strip('[]{}()').replace(' ', '').replace(chr(39), '')}"
        for k in cases.KNOBS
        if k in ident and cell_text(ident[k]) not in ("", "[]", "{}", "jax.jit")
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
        if is_missing(part) or part == "":
            continue
        text = re.sub(r"[^A-Za-z0-9._-]+", "-", str(plain(part))).strip("-._")
        if text:
            cleaned.append(text)
    return "_".join(cleaned) or "plot"


def _param_slug(ident: dict) -> str:
    items = [(k[len("param_") :], v) for k, v in ident.items() if k.startswith("param_") and not is_missing(v)]
    return "-".join(f"{k}-{plain(v)}" for k, v in items)


def _show(*values) -> str:
    for value in values:
        if not is_missing(value) and str(value):
            return str(plain(value))
    return ""


def nonneg(values):
    """values with anything not finite and positive as 0 (error bar lengths)."""
    values = np.asarray(values, dtype=float)
    return np.where(np.isfinite(values) & (values > 0), values, 0.0)
