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

from jitexp.analysis import formatting
from jitexp.labels import size_text
from jitexp.report import cases
from jitexp.store.csvio import write_atomic

DPI = 120


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

    axis.set_major_formatter(FuncFormatter(lambda v, _: formatting.format_seconds(v) if v > 0 else "0"))
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
            return formatting.format_seconds(v) if seconds else f"{v:g}"
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


def title(ident: dict, *, size: bool = False) -> str:
    """A figure's title: workload (params) | dtype [| size] | device."""
    params = cases.params_labels(pd.DataFrame([ident]))[0]
    parts = [str(ident.get("workload")) + (f" ({params})" if params else "")]
    parts.append(_show(ident.get("dtype")))
    if size:
        parts.append(size_text(ident, " "))
    parts.append(_show(ident.get("device_kind"), ident.get("platform")))
    return " | ".join(p for p in parts if p)


def save(fig, out: Path, kind: str, ident: dict, df: pd.DataFrame, *, size: bool = False) -> Path:
    """Write the figure atomically as out/<kind>_<workload>[_<params>]_<dtype>[_<size>][_<device>].png.

    Old plots are removed before a report draws, so an existing name is a clash within
    this report and gets a ``_2``, ``_3`` suffix instead of being overwritten.
    """
    knobs = [
        f"{k.split('_')[0]}-{formatting.cell_text(ident[k]).strip('[]{}()').replace(' ', '').replace(chr(39), '')}"
        for k in cases.KNOBS
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


def nonneg(values):
    """values with anything not finite and positive as 0 (error bar lengths)."""
    values = np.asarray(values, dtype=float)
    return np.where(np.isfinite(values) & (values > 0), values, 0.0)
