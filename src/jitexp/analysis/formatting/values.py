"""Values in words and units: what reads as missing, plain numbers, seconds, bytes, ratios, percents, p-values,
a column's value by its name, a growth exponent, a path shown short. Missing values (None, NaN, pd.NA) read as
``-`` unless said otherwise."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

NUMPY = "numpy"
EAGER = "eager"
STATIC_ARGNUMS = "static_argnums"

# ---- missing values and plain numbers ----------------------------------------------------


def is_missing(value: Any) -> bool:
    """None, NaN or pd.NA (a value pandas would call missing); lists and other objects are not."""
    if value is None or value is pd.NA:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def is_true(value: Any) -> bool:
    """A flag cell that is present and true (a missing flag is not true)."""
    return not is_missing(value) and bool(value)


def is_positive(value: Any) -> bool:
    """A number that is present and above zero."""
    return not is_missing(value) and float(value) > 0


def plain(value: Any) -> Any:
    """Integral floats as ints (CSV round-trips turn 3 into 3.0 next to NaN), NumPy scalars as Python ones."""
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def cell_text(value: Any) -> str:
    """A cell as text, ``""`` when it is missing."""
    return "" if is_missing(value) else str(value)


def short_name(qualified: Any) -> str:
    """The last dotted part of a class name: ``jax.errors.TracerBoolConversionError`` -> ``TracerBoolConversionError``."""
    return "" if is_missing(qualified) else str(qualified).rsplit(".", 1)[-1]


def three_digits(value: float | None) -> str:
    """Three significant digits without exponent notation: ``1.94``, ``12.3``, ``4567``."""
    value = float("nan") if value is None else value
    text = f"{value:.3g}"
    return text if "e" not in text else f"{value:.0f}"


# ---- units -------------------------------------------------------------------------------


def format_seconds(value: Any) -> str:
    """Seconds for people, three significant digits: ``12.3 ms``, ``45 us``; ``-`` when missing."""
    if is_missing(value):
        return "-"
    value = float(value)
    if math.isinf(value):
        return "inf"
    if value == 0:
        return "0 s"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if abs(value) >= scale * 0.9995:
            return f"{three_digits(value / scale)} {unit}"
    return f"{three_digits(value / 1e-9)} ns"


def format_bytes(value: Any) -> str:
    """Bytes for people: ``4.04 MiB``, ``800 B``; ``-`` when missing."""
    if is_missing(value):
        return "-"
    value = float(value)
    for scale, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} B"


def format_ratio(value: Any) -> str:
    """A speedup or ratio: ``1.94x``; ``-`` when missing."""
    return "-" if is_missing(value) else f"{three_digits(float(value))}x"


def p_text(p: Any) -> str:
    """A p-value as text: two digits, '<0.0001' below that (a normal tail underflows to 0), '-' when missing."""
    if is_missing(p):
        return "-"
    return "<0.0001" if float(p) < 1e-4 else f"{float(p):.2g}"


def format_percent(fraction: float) -> str:
    """A fraction as a whole percentage: ``0.034`` -> ``3%``."""
    return f"{fraction:.0%}"


def format_value(column: str, value: Any) -> str:
    """A cell as text, chosen by column name: seconds, speedups, bytes, break-even counts, plain."""
    if column.endswith("_s"):
        return format_seconds(value)
    if is_missing(value):
        return "-"
    if column in ("speedup", "speedup_ci_low", "speedup_ci_high"):
        return format_ratio(value)
    if column.endswith("_bytes") or column == "bytes_accessed":
        return format_bytes(value)
    if column == "arithmetic_intensity":
        return f"{float(value):.3g}"
    if column in ("traffic_cut",):
        return f"{float(value):.3g}x"
    if column in ("break_even_calls", "ahead_until_calls"):
        return "never" if math.isinf(value) else str(int(value))
    if column.endswith("exponent"):
        text = f"{float(value):.2f}"
        return "0.00" if text == "-0.00" else text
    return str(plain(value))


def growth_text(exponent: float) -> str:
    """``time ~ size^2.06`` for a growth exponent; ``-`` when it is missing."""
    if is_missing(exponent) or not math.isfinite(float(exponent)):
        return "-"
    return f"time ~ size^{format_value('growth_exponent', exponent)}"


def display_path(path: str | os.PathLike, cwd: str | os.PathLike | None = None) -> str:
    """A path relative to the current directory when it lies under it (``outputs/run/...``), else as given."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path(cwd or os.getcwd()).resolve()))
    except ValueError:
        return str(path)
