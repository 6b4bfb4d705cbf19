"""Report plots as PNG files: every figure family the data support, drawn in the report's order.

Each family lives in its own module (plot_time, plot_speedup, plot_coldstart, plot_growth, plot_devices,
plot_roofline, plot_calls);
none imports matplotlib until it draws, so importing this module is cheap.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from jitexp.report.plot_calls import calls_charts
from jitexp.report.plot_coldstart import coldstart_charts
from jitexp.report.plot_devices import device_charts
from jitexp.report.plot_growth import compile_charts, scaling_charts
from jitexp.report.plot_roofline import roofline_chart
from jitexp.report.plot_speedup import speedup_charts
from jitexp.report.plot_time import time_charts


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
