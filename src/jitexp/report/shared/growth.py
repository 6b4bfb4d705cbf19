"""The points a growth is fitted to, and its exponent: one aggregated row per case and size, and the slope of
log(time) over log(size). The run's scaling table and the scaling and compile plots both read them."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from jitexp.report.shared.cases import STATIC_ARGNUMS, aggregate, as_tuple, case_keys, get_column, ok_rows, sort_cases

MIN_GROWTH_SIZES = 3  # a growth exponent needs this many sizes


def growth_exponent(sizes: Iterable[float], times: Iterable[float]) -> float:
    """Least-squares slope of log(time) over log(size): 1 linear, 2 quadratic; NaN under MIN_GROWTH_SIZES sizes
    (two points always fit a line exactly, so a slope from them says nothing about the shape)."""
    s = np.asarray(list(sizes), dtype=float)
    t = np.asarray(list(times), dtype=float)
    keep = np.isfinite(s) & np.isfinite(t) & (s > 0) & (t > 0)
    s, t = s[keep], t[keep]
    if np.unique(s).size < MIN_GROWTH_SIZES:
        return math.nan
    return float(np.polyfit(np.log(s), np.log(t), 1)[0])


def scaling_points(df: pd.DataFrame) -> pd.DataFrame:
    """Long table: one aggregated row per (workload, params, dtype, device, mode, variant, size)."""
    ok = ok_rows(df)
    keys = case_keys(df, size=False)
    columns = keys + [
        "mode",
        STATIC_ARGNUMS,
        "size",
        "median_s",
        "ci95_low_s",
        "ci95_high_s",
        "first_call_s",
        "compile_s",
        "n_rows",
        "input_shapes",
    ]
    if ok.empty or "size" not in ok.columns:
        return pd.DataFrame(columns=columns)
    ok = ok[[c for c in ok.columns if c in keys or c in columns]]  # the columns read: each group copies every column
    ok = ok.assign(mode=get_column(ok, "mode"), static_argnums=get_column(ok, STATIC_ARGNUMS))
    records = []
    group = keys + ["mode", STATIC_ARGNUMS, "size"]
    for values, rows in ok.groupby(group, dropna=False, sort=False):
        shapes = get_column(rows, "input_shapes").dropna()  # what size meant here (the growth plot's x label)
        records.append(
            {
                **dict(zip(group, as_tuple(values))),
                **aggregate(rows),
                "input_shapes": shapes.iloc[0] if len(shapes) else None,
            }
        )
    return sort_cases(pd.DataFrame.from_records(records, columns=columns), keys + ["size"])
