"""Roofline (roofline.png): each row's achieved FLOP/s against its arithmetic intensity, under its device's measured
ceilings.

x = flops / bytes_accessed (XLA's cost analysis of the compiled computation, FLOP per byte), y = flops per second.
Every ok row with both figures is a point by wall time (flops / median_s); where the row has device_s (the device's
own time per call, from a profiler trace) a second point by device time sits above it, joined by a thin line: the
line's length on the log axis is the share of the wall time the host added. The ceilings are
min(peak_flops_per_s, intensity * peak_bytes_per_s), the medians of the rows' matmul and copy probes per device.

The numbers (`roofline_points`, `ceilings`, `Ceiling.at`) are pure functions of the results frame, apart from the
drawing (`roofline_chart`), which imports matplotlib only when it draws.

Why twice its siblings' length (about 450 lines against 80-230): it is the one figure whose reference lines come from
the data (a measured and a nominal ceiling per device, each with its note and legend entry), drawn a panel per device
with the points labelled where there is room; the numbers (about 150 lines, from Ceiling to point_labels, and the
unit texts at the end) could leave for a module of their own, the drawing would still be the longest of the plots.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis.formatting.values import cell_text, is_missing, three_digits
from jitexp.labels import size_text
from jitexp.report.plots import style
from jitexp.report.shared import cases
from jitexp.store.csvio import write_atomic

FILE = "roofline.png"
PEAK_FLOPS = "peak_flops_per_s"
PEAK_BYTES = "peak_bytes_per_s"
NOMINAL_FLOPS = "nominal_flops_per_s"
NOMINAL_BYTES = "nominal_bytes_per_s"
MAX_LABELLED = 24  # more points than this: no text beside each (it would cover the points)
MIN_DECADES = 2.0  # each axis spans at least this much, so it has labelled powers of ten
LABEL_SLANT = 30  # degrees below horizontal: neighbours up and to the right (a series over size) keep apart
POINT_COLUMNS = [
    "device",
    "workload",
    "dtype",
    "mode",
    "label",
    "intensity",
    "wall_flops_per_s",
    "device_flops_per_s",
    "host_share",
]


@dataclass(frozen=True)
class Ceiling:
    """A device's measured ceilings (NaN where its probe gave none)."""

    flops_per_s: float
    bytes_per_s: float

    def at(self, intensity) -> np.ndarray:
        """The attainable FLOP/s at each intensity: min(peak FLOP/s, intensity * peak bytes/s); where only one
        peak was measured, that one alone (a flat line or a slope)."""
        x = np.asarray(intensity, dtype=float)
        flat = np.full_like(x, self.flops_per_s if _positive(self.flops_per_s) else np.inf)
        slope = x * self.bytes_per_s if _positive(self.bytes_per_s) else np.full_like(x, np.inf)
        y = np.minimum(flat, slope)
        return np.where(np.isfinite(y), y, np.nan)

    @property
    def ridge(self) -> float:
        """The intensity where the slope meets the flat ceiling (FLOP/byte); NaN without both peaks."""
        if _positive(self.flops_per_s) and _positive(self.bytes_per_s):
            return self.flops_per_s / self.bytes_per_s
        return math.nan

    @property
    def measured(self) -> bool:
        return _positive(self.flops_per_s) or _positive(self.bytes_per_s)


def device_names(df: pd.DataFrame) -> pd.Series:
    """Each row's device as the roofline groups it: device_kind, else platform, else ``""``."""
    kind = cases.text_column(df, "device_kind")
    return kind.where(kind != "", cases.text_column(df, "platform")).astype(object)


def nominal_ceilings(df: pd.DataFrame) -> dict[str, Ceiling]:
    """Per device, its nominal peaks (nominal_flops_per_s, nominal_bytes_per_s: jitexp.analysis.ceilings' table by
    device kind), where its rows have them: the ceilings no point can pass."""
    return _ceilings_by_device(df, NOMINAL_FLOPS, NOMINAL_BYTES)


def ceilings(df: pd.DataFrame) -> dict[str, Ceiling]:
    """Per device, the median of the rows' measured peaks (each job probes once and repeats it on its rows);
    only devices with at least one peak."""
    return _ceilings_by_device(df, PEAK_FLOPS, PEAK_BYTES)


def _ceilings_by_device(df: pd.DataFrame, flops: str, bytes_: str) -> dict[str, Ceiling]:
    """Per device, the median positive value of its rows' flops and bytes_ columns; only devices with either."""
    found = {}
    devices = device_names(df)
    for device in dict.fromkeys(devices):
        rows = df[devices == device]
        ceiling = Ceiling(_median_positive(rows, flops), _median_positive(rows, bytes_))
        if ceiling.measured:
            found[str(device)] = ceiling
    return found


def roofline_points(df: pd.DataFrame) -> pd.DataFrame:
    """One row per ok result row with flops and bytes_accessed > 0: its device, mode, label (what tells it apart
    from the other points, `point_labels`), intensity (FLOP/byte), FLOP/s by wall time and by device time (NaN
    without device_s) and host_share (1 - device_s / median_s, NaN without device_s)."""
    ok = cases.ok_rows(df)
    flops = _numbers(ok, "flops")
    moved = _numbers(ok, "bytes_accessed")
    rows = ok[(flops > 0) & (moved > 0)]
    if rows.empty:
        return pd.DataFrame(columns=POINT_COLUMNS)
    flops, moved = _numbers(rows, "flops"), _numbers(rows, "bytes_accessed")
    wall, device = _numbers(rows, "median_s"), _numbers(rows, "device_s")
    device = device.where(device > 0)
    points = pd.DataFrame(
        {
            "device": device_names(rows),
            "workload": cases.get_column(rows, "workload"),
            "dtype": cases.text_column(rows, "dtype"),
            "mode": cases.text_column(rows, "mode"),
            "label": point_labels(rows),
            "intensity": flops / moved,
            "wall_flops_per_s": flops / wall,
            "device_flops_per_s": flops / device,
            "host_share": 1 - device / wall,
        }
    )
    return points.reset_index(drop=True)


def point_labels(rows: pd.DataFrame) -> list[str]:
    """Each row named by what differs between the rows (the mode aside: colour shows it): workload, variant,
    params, static_argnums, the knobs a sweep changed, size, and dtype where one workload has several;
    ``""`` for every row when nothing does."""
    params = pd.Series(cases.params_labels(rows), index=rows.index)
    sizes = pd.Series([size_text(row, " ") for _, row in rows.iterrows()], index=rows.index)
    shown = cases.varying(rows, ["workload", cases.AB_VARIANT])
    knobs = cases.varying(rows, [cases.STATIC_ARGNUMS, *cases.KNOBS])
    dtypes = cases.text_column(rows, "dtype")
    dtype_varies = bool(dtypes.groupby(cases.text_column(rows, "workload")).nunique().gt(1).any())
    labels = []
    for (_, row), param, size, dtype in zip(rows.iterrows(), params, sizes, dtypes):
        parts = [cell_text(row.get(c)) for c in shown]
        parts.append(param if params.nunique() > 1 else "")
        parts += [cases.knob_text(k, row.get(k)) for k in knobs]
        parts.append(size if sizes.nunique() > 1 else "")
        parts.append(dtype if dtype_varies else "")
        labels.append(" ".join(p for p in parts if p))
    return labels


def roofline_chart(df: pd.DataFrame, out: Path) -> list[Path]:
    """roofline.png when any ok row has flops and bytes_accessed: one panel per device, [] otherwise."""
    points = roofline_points(df)
    if points.empty:
        return []
    limits, nominal = ceilings(df), nominal_ceilings(df)
    devices = list(dict.fromkeys(points["device"]))
    fig, axes = style.figure(width=max(7.5, 5.5 * len(devices)), ncols=len(devices))
    fig.set_figheight(5.6)
    drew_device = False
    for ax, device in zip(axes, devices):
        mine = points[points["device"] == device]
        drew_device |= _draw_panel(ax, mine, limits.get(device), nominal.get(device))
        title = _panel_title(device, limits.get(device), nominal.get(device))
        ax.set_title(style.fit_title(fig, title, fontsize=9), fontsize=9)
    shared = _shared_text(points)
    fig.suptitle("roofline: achieved FLOP/s against arithmetic intensity" + (f" | {shared}" if shared else ""))
    style.legend_below(fig, _legend(points, drew_device, bool(limits), bool(nominal)), ncol=2)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=style.DPI)
    return [write_atomic(out / FILE, buffer.getvalue())]


def _draw_panel(ax, points: pd.DataFrame, ceiling: Ceiling | None, nominal: Ceiling | None = None) -> bool:
    """The points of one device, its measured ceilings (dotted) and its nominal ones (solid); True when any point
    had a device time."""
    drew_device = False
    for _, point in points.iterrows():
        colour = style.mode_colour(point["mode"])
        x, wall, on_device = point["intensity"], point["wall_flops_per_s"], point["device_flops_per_s"]
        ax.plot([x], [wall], marker="o", markersize=7, color=colour, linestyle="none")
        if _positive(on_device):
            drew_device = True
            ax.plot([x, x], [wall, on_device], color=colour, linewidth=0.8, alpha=0.7)
            ax.plot([x], [on_device], marker="^", markersize=7, color=colour, linestyle="none")
    texts = _case_texts(points) if len(points) <= MAX_LABELLED else []
    xs = points["intensity"].to_numpy(float)
    ys = np.concatenate([points["wall_flops_per_s"].to_numpy(float), points["device_flops_per_s"].to_numpy(float)])
    ys = ys[np.isfinite(ys) & (ys > 0)]
    low_x, high_x = xs.min(), xs.max()
    low_y, high_y = ys.min(), ys.max()
    for drawn in (ceiling, nominal):
        if drawn is None:
            continue
        ridge = drawn.ridge
        if _positive(ridge):
            low_x, high_x = min(low_x, ridge), max(high_x, ridge)
        high_y = max(high_y, np.nanmax(drawn.at([low_x / 4, high_x * 4])))
    low_x, high_x = _at_least(MIN_DECADES, low_x / 4, high_x * 4)
    low_y, high_y = _at_least(MIN_DECADES, low_y / 4, high_y * 2)
    high_y *= 10 ** (0.1 * math.log10(high_y / low_y))  # room for the peak's note
    right, below = _label_room(ax, texts, (low_x, high_x), (low_y, high_y))
    high_x, low_y = high_x * 10**right, low_y / 10**below
    grid = np.geomspace(low_x, high_x, 256)
    if ceiling is not None:
        ax.plot(grid, ceiling.at(grid), linestyle=":", linewidth=2.0, color="0.25")
    if nominal is not None:
        ax.plot(grid, nominal.at(grid), linestyle="-", linewidth=1.2, color="0.45")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(low_x, high_x)
    ax.set_ylim(low_y, high_y)
    cpu = str(points["device"].iloc[0]).lower() == "cpu"
    if ceiling is not None:
        _ceiling_notes(ax, ceiling, probe_words(cpu), below=nominal is not None)  # under it, the nominal's above
    if nominal is not None:
        _ceiling_notes(ax, nominal, NOMINAL_WORDS)
    for x, y, text, colour in texts:
        ax.annotate(
            text,
            (x, y),
            textcoords="offset points",
            xytext=(4, -6),
            ha="left",
            va="top",
            rotation=-LABEL_SLANT,
            rotation_mode="anchor",
            fontsize=7,
            color=colour,
        )
    _flops_axis(ax.yaxis)
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("arithmetic intensity (FLOP per byte accessed, XLA's cost analysis)")
    ax.set_ylabel("achieved FLOP/s")
    ax.grid(True, which="major", alpha=0.3)
    return drew_device


def _case_texts(points: pd.DataFrame) -> list[tuple[float, float, str, str]]:
    """One text per case (its points share label and intensity): the label and each mode's host share, to go
    under its lowest point as (x, y, text, colour)."""
    several_modes = points.loc[points["device_flops_per_s"].map(_positive), "mode"].nunique() > 1
    texts = []
    for _, case in points.groupby(["label", "intensity"], sort=False):
        case = case.sort_values("mode", key=lambda m: m.map(cases.mode_rank))
        shares = [_host_text(point, several_modes) for _, point in case.iterrows()]
        text = ", ".join(p for p in [str(case["label"].iloc[0]), *shares] if p)
        if text:
            lowest = case.loc[case["wall_flops_per_s"].idxmin()]
            colour = style.mode_colour(lowest["mode"]) if case["mode"].nunique() == 1 else "0.2"
            texts.append((float(lowest["intensity"]), float(lowest["wall_flops_per_s"]), text, colour))
    return texts


def _label_room(ax, texts: list, xlim: tuple[float, float], ylim: tuple[float, float]) -> tuple[float, float]:
    """Decades to add right of xlim and below ylim so that each slanted label stays inside the axes (about: the
    axes' size is taken before the layout settles)."""
    if not texts:
        return 0.0, 0.0
    width = max(style.axis_inches(ax), 1.0)
    height = max(float(ax.get_position().height * ax.figure.get_figheight()), 1.0)
    span_x, span_y = math.log10(xlim[1] / xlim[0]), math.log10(ylim[1] / ylim[0])
    right = below = 0.0
    for x, y, text, _ in texts:
        inches = 1.2 * (len(text) + 2) * 7 * 0.62 / 72  # at 7 pt, with the offset from the point and a margin
        across = min(inches * math.cos(math.radians(LABEL_SLANT)) / width, 0.6)  # share of the axes' width
        down = min(inches * math.sin(math.radians(LABEL_SLANT)) / height, 0.6)
        # the text needs across * (span + extra) decades to its right: solve for the extra
        right = max(right, (across * span_x - math.log10(xlim[1] / x)) / (1 - across))
        below = max(below, (down * span_y - math.log10(y / ylim[0])) / (1 - down))
    return right, below


def _host_text(point: pd.Series, name_mode: bool) -> str:
    """``host 48%`` (``jit host 48%`` when the figure has several modes): the share of the wall time the host
    added, for a point with a device time."""
    host = point["host_share"]
    if not _positive(point["device_flops_per_s"]) or is_missing(host) or not 0 <= host < 1:
        return ""
    share = ">99%" if host > 0.99 else f"{host:.0%}"
    return f"{point['mode'] + ' ' if name_mode else ''}host {share}"


NOMINAL_WORDS = ("nominal peak {}", "nominal {} (HBM)")


def probe_words(cpu: bool) -> tuple[str, str]:
    """How the measured ceilings are labelled: by the probe that measured them; a CPU's copy probe is its memory
    bandwidth (points whose data stays in cache pass it)."""
    return ("{} (matmul probe)", "memory bandwidth {} (copy probe)" if cpu else "{} (copy probe)")


def _ceiling_notes(ax, ceiling: Ceiling, words: tuple[str, str], below: bool = False) -> None:
    """The ceilings' values written on them, in `words` (flat, slope): the flat one at its right end (under it when
    `below`), the slope near its left end, along it."""
    (low_x, high_x), (low_y, high_y) = ax.get_xlim(), ax.get_ylim()
    if _positive(ceiling.flops_per_s):
        ax.annotate(
            words[0].format(flops_text(ceiling.flops_per_s)),
            (high_x, ceiling.flops_per_s),
            textcoords="offset points",
            xytext=(-4, -4 if below else 4),
            ha="right",
            va="top" if below else "bottom",
            fontsize=7,
            color="0.25",
        )
    if _positive(ceiling.bytes_per_s):
        x = low_x * 10 ** (0.04 * math.log10(high_x / low_x))
        y = float(ceiling.at([x])[0])
        if _positive(y) and low_y < y < high_y and (not _positive(ceiling.ridge) or x < ceiling.ridge):
            # a slope of 1 on log-log axes, drawn at the angle the axes' aspect gives it (about: before the layout)
            per_decade_x = style.axis_inches(ax) / math.log10(high_x / low_x)
            per_decade_y = ax.get_position().height * ax.figure.get_figheight() / math.log10(high_y / low_y)
            ax.annotate(
                words[1].format(bytes_rate_text(ceiling.bytes_per_s)),
                (x, y),
                textcoords="offset points",
                xytext=(0, -5 if below else 5),
                ha="left",
                va="top" if below else "bottom",
                fontsize=7,
                color="0.25",
                rotation=math.degrees(math.atan2(per_decade_y, per_decade_x)),
                rotation_mode="anchor",
            )


def _panel_title(device: str, ceiling: Ceiling | None, nominal: Ceiling | None = None) -> str:
    name = device or "device not recorded"
    if ceiling is None and nominal is None:
        return f"{name}: no measured ceilings in these rows (an older run, or no peak probes): points only"
    parts = []
    if nominal is not None:
        parts.append(f"nominal {flops_text(nominal.flops_per_s)}, {bytes_rate_text(nominal.bytes_per_s)}")
    if ceiling is not None and _positive(ceiling.flops_per_s):
        parts.append(f"{flops_text(ceiling.flops_per_s)} matmul probe")
    if ceiling is not None and _positive(ceiling.bytes_per_s):
        memory = " (memory bandwidth)" if name.lower() == "cpu" else ""
        parts.append(f"{bytes_rate_text(ceiling.bytes_per_s)} copy probe{memory}")
    if ceiling is not None and _positive(ceiling.ridge) and nominal is None:
        parts.append(f"ridge at {ceiling.ridge:.3g} FLOP/byte")
    return f"{name}: " + ", ".join(parts)


def _shared_text(points: pd.DataFrame) -> str:
    """What every point shares (workload, dtype), for the title."""
    shared = [c for c in ("workload", "dtype") if points[c].nunique(dropna=False) == 1]
    return " | ".join(text for c in shared if (text := cell_text(points[c].iloc[0])))


def _legend(points: pd.DataFrame, drew_device: bool, ceilings_drawn: bool, nominal_drawn: bool = False) -> list:
    from matplotlib.lines import Line2D

    modes = sorted(dict.fromkeys(points["mode"]), key=lambda m: (cases.mode_rank(m), m))
    handles = [Line2D([], [], marker="s", linestyle="none", color=style.mode_colour(m), label=m or "-") for m in modes]
    handles.append(
        Line2D([], [], marker="o", linestyle="none", color="grey", label="circle: by wall time, flops / median_s")
    )
    if drew_device:
        handles.append(
            Line2D(
                [],
                [],
                marker="^",
                linestyle="-",
                linewidth=0.8,
                color="grey",
                label="triangle: by device time, flops / device_s (line: the host's share)",
            )
        )
    if ceilings_drawn:
        handles.append(
            Line2D(
                [],
                [],
                linestyle=":",
                linewidth=2.0,
                color="0.25",
                label="dotted: measured probes (matmul, copy)",
            )
        )
    if nominal_drawn:
        handles.append(Line2D([], [], linewidth=1.2, color="0.45", label="solid: nominal peak (no point can pass it)"))
    return handles


SI = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def _si(value: float) -> str:
    for scale, prefix in SI:
        if value >= scale * 0.9995:
            return f"{three_digits(value / scale)} {prefix}"
    return f"{three_digits(value)} "


def flops_text(value: float) -> str:
    """FLOP/s for people: ``187 TFLOP/s``, ``3.2 GFLOP/s``."""
    return f"{_si(value)}FLOP/s"


def bytes_rate_text(value: float) -> str:
    """Bytes per second for people, decimal as bandwidths are quoted: ``819 GB/s``."""
    return f"{_si(value)}B/s"


def _flops_axis(axis) -> None:
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(lambda v, _: _si(v).strip() if v > 0 else "0"))
    axis.set_minor_formatter(NullFormatter())


def _at_least(decades: float, low: float, high: float) -> tuple[float, float]:
    """low..high widened about its geometric middle to span at least decades."""
    missing = decades - math.log10(high / low)
    if missing <= 0:
        return low, high
    return low / 10 ** (missing / 2), high * 10 ** (missing / 2)


def _numbers(df: pd.DataFrame, column: str) -> pd.Series:
    return pd.to_numeric(cases.get_column(df, column), errors="coerce").astype(float)


def _median_positive(df: pd.DataFrame, column: str) -> float:
    values = _numbers(df, column)
    values = values[np.isfinite(values) & (values > 0)]
    return float(values.median()) if len(values) else math.nan


def _positive(value: object) -> bool:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return math.isfinite(number) and number > 0
