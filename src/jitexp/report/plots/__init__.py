"""One run's figures as PNG files: every figure family the data support, drawn in the report's order (make_plots).

Each family lives in its own module (times, speedup, coldstart, growth, devices, roofline, calls), over grouping
(which rows share a figure) and style (axes, colours, titles; the only place a figure is saved). None imports
matplotlib until it draws, so importing this package is cheap. Plots read the results frame and report.shared,
never a run's tables or page: a new figure family is a module here, added to make_plots.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from jitexp.report.plots.calls import calls_charts
from jitexp.report.plots.coldstart import coldstart_charts
from jitexp.report.plots.devices import device_charts
from jitexp.report.plots.growth import compile_charts, scaling_charts
from jitexp.report.plots.roofline import roofline_chart
from jitexp.report.plots.speedup import speedup_charts
from jitexp.report.plots.times import time_charts


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
        *device_charts(df, out),
        *roofline_chart(df, out),
        *calls_charts(calls, df, out),
    ]
