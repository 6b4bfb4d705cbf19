"""CSV in and out: rows to a typed frame, atomic writes (temp file and rename), reading back with jitexp's types."""

from __future__ import annotations

import csv
import math
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from jitexp.store.schema import BOOL_COLUMNS, COLUMNS, INT_COLUMNS, KNOWN_NUMERIC, TEXT_COLUMNS, ordered_columns


def to_frame(rows: Sequence[Mapping], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Rows as a DataFrame with the given columns, by default every results.csv column in schema order."""
    frame = pd.DataFrame(list(rows))
    if columns is not None:
        frame = frame.reindex(columns=list(columns))
    else:
        frame = frame.reindex(columns=ordered_columns([*COLUMNS, *frame.columns]))
    for col in INT_COLUMNS:  # an integer column with a missing cell must not become 20.0
        if (
            col in frame.columns
            and pd.api.types.is_numeric_dtype(frame[col])
            and not pd.api.types.is_bool_dtype(frame[col])
        ):
            values = frame[col].dropna()
            if len(values) and (values == values.round()).all():
                frame[col] = frame[col].astype("Int64")
    return frame


def write_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write bytes via a temp file in the same folder and a rename, so a killed run leaves no half file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; results are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_csv(data: pd.DataFrame | Sequence[Mapping], path: str | os.PathLike) -> Path:
    """Write a CSV atomically (see write_atomic)."""
    frame = data if isinstance(data, pd.DataFrame) else to_frame(data)
    return write_atomic(path, csv_bytes(frame))


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """A frame as CSV bytes, as jitexp writes every file."""
    # Text quoted (a lone carriage return in a message would otherwise split a row), "\n" line ends.
    return frame.to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n").encode("utf-8")


def read_text(path: str | os.PathLike) -> pd.DataFrame:
    """A CSV exactly as written: every cell a string, nothing turned into NA ("NA", "007" stay)."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)


def read_csv(path: str | os.PathLike) -> pd.DataFrame:
    """Read one results-style CSV with jitexp's column types."""
    return typed(read_text(path))


_INT = re.compile(r"^-?\d+$")


def typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Types for a frame of CSV text; an empty cell is missing.

    Known text columns stay text, booleans become nullable booleans, known numeric columns
    numbers (nullable integers when every cell is an integer). Other columns (param_<name>)
    become numbers or booleans only when every cell reads back exactly as written, so a
    param "007" stays "007".
    """
    frame = frame.copy()
    for col in frame.columns:
        values = frame[col]
        if values.dtype != object and not pd.api.types.is_string_dtype(values):
            continue  # already typed (rows built in memory)
        if _all_missing(values):  # most optional columns of a row: typed as their kind without parsing a cell
            frame[col] = pd.Series([None] * len(frame), index=frame.index, dtype=_missing_dtype(col), name=col)
            continue
        text = values.astype("string").replace("", pd.NA)
        filled = text.dropna()
        if col in TEXT_COLUMNS:
            frame[col] = text
        elif col in BOOL_COLUMNS:
            frame[col] = text.map(_to_bool, na_action="ignore").astype("boolean")
        elif col in KNOWN_NUMERIC:
            frame[col] = _number(text, filled)
        elif len(filled) and filled.map(_int_round_trips).all():
            frame[col] = text.astype("Int64")
        elif len(filled) and filled.map(_float_round_trips).all():
            frame[col] = pd.to_numeric(text).astype(float)
        elif len(filled) and filled.isin(["True", "False"]).all():
            frame[col] = text.map(_to_bool, na_action="ignore").astype("boolean")
        else:
            frame[col] = text
    return frame


def _all_missing(values: pd.Series) -> bool:
    """Whether every cell is empty text or missing (None, NA, NaN): what typed turns into an all-NA column."""
    return all(
        v == "" if isinstance(v, str) else v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v))
        for v in values
    )


def _missing_dtype(col: str) -> str:
    """The type typed gives a column with no value: numbers stay float, booleans boolean, the rest text."""
    if col in TEXT_COLUMNS:
        return "string"
    if col in BOOL_COLUMNS:
        return "boolean"
    return "float64" if col in KNOWN_NUMERIC else "string"


def _number(text: pd.Series, filled: pd.Series) -> pd.Series:
    if len(filled) and filled.str.match(_INT).all():
        return text.astype("Int64")
    return pd.to_numeric(text, errors="coerce").astype(float)


def _int_round_trips(value: str) -> bool:
    return bool(_INT.match(value)) and str(int(value)) == value  # "007" and "-0" stay text


def _float_round_trips(value: str) -> bool:
    try:
        number = float(value)
    except ValueError:
        return False
    return math.isfinite(number) and repr(number) == value  # jitexp writes NaN as an empty cell: "nan" is text


def _to_bool(value):
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
        return pd.NA
    if value is None or (isinstance(value, float) and value != value):
        return pd.NA
    return bool(value)
