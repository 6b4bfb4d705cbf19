"""CSV in and out: rows to a typed frame, atomic writes (temp file and rename), reading back with jitexp's types."""

from __future__ import annotations

import csv
import math
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
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
    # low_memory=False: one chunk, not several joined column by column (a third faster on a results.csv; with every
    # column text there is no type inference for chunks to differ on)
    return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False, low_memory=False)


def read_csv(path: str | os.PathLike) -> pd.DataFrame:
    """Read one results-style CSV with jitexp's column types."""
    return typed(read_text(path))


_INT = re.compile(r"^-?\d+$")


def typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Types for a frame of CSV text; an empty cell is missing.

    Known text columns stay text, booleans become nullable booleans, known numeric columns
    numbers (nullable integers when every cell is an integer that fits int64, else floats). Other columns
    (param_<name>) become numbers or booleans only when every cell reads back exactly as written, so a
    param "007" stays "007" (and so does one past int64).
    """
    # Column by column in plain Python, one array built per column and the frame once: a results.csv has ~160
    # columns of a few rows, where a chain of pandas operations per column cost ~0.3 ms each.
    columns: list = []
    floats: dict[int, list] = {}  # known numeric columns that are not all integers: parsed by one to_numeric
    for i, col in enumerate(frame.columns):
        values = frame.iloc[:, i]
        if values.dtype != object and not pd.api.types.is_string_dtype(values):
            columns.append(values.array)  # already typed (rows built in memory)
            continue
        text = [_text(c) for c in values.tolist()]
        filled = [c for c in text if c is not None]
        if not filled:  # most optional columns of a row: typed as their kind without parsing a cell
            dtype = _missing_dtype(col)
            columns.append(pd.array(text, dtype=dtype) if dtype != "float64" else np.full(len(text), np.nan))
        elif col in TEXT_COLUMNS:
            columns.append(pd.array(text, dtype="string"))
        elif col in BOOL_COLUMNS:
            columns.append(_bools(text))
        elif col in KNOWN_NUMERIC:
            if all(_INT.match(c) and _fits_int64(c) for c in filled):
                columns.append(_ints(text))
            else:
                floats[i] = text
                columns.append(None)
        elif all(_int_round_trips(c) for c in filled):
            columns.append(_ints(text))
        elif all(_float_round_trips(c) for c in filled):
            columns.append(np.array([np.nan if c is None else float(c) for c in text]))
        elif all(c in ("True", "False") for c in filled):
            columns.append(_bools(text))
        else:
            columns.append(pd.array(text, dtype="string"))
    if floats:  # as pd.to_numeric(errors="coerce") reads each cell, in one call for every such column
        parsed = pd.to_numeric(pd.array([c for text in floats.values() for c in text], dtype="string"), errors="coerce")
        parsed = np.asarray(parsed.astype(float), dtype=float)
        start = 0
        for i, text in floats.items():
            columns[i], start = parsed[start : start + len(text)], start + len(text)
    out = pd.DataFrame(dict(enumerate(columns)), index=frame.index)
    out.columns = frame.columns
    return out


def _text(cell: object) -> str | None:
    """A cell as text, None when missing: an empty cell, or None, NA or NaN in a frame built in memory."""
    if isinstance(cell, str):
        return cell or None
    if cell is None or cell is pd.NA or (isinstance(cell, float) and math.isnan(cell)):
        return None
    return str(cell)


def _ints(text: list[str | None]) -> pd.api.extensions.ExtensionArray:
    return pd.array([None if c is None else int(c) for c in text], dtype="Int64")


def _bools(text: list[str | None]) -> pd.api.extensions.ExtensionArray:
    return pd.array([None if c is None else _to_bool(c) for c in text], dtype="boolean")


def _missing_dtype(col: str) -> str:
    """The type typed gives a column with no value: numbers stay float, booleans boolean, the rest text."""
    if col in TEXT_COLUMNS:
        return "string"
    if col in BOOL_COLUMNS:
        return "boolean"
    return "float64" if col in KNOWN_NUMERIC else "string"


def _int_round_trips(value: str) -> bool:
    # "007" and "-0" stay text, and so does an integer past int64 (10**20 as a param): its digits, not a crash
    return bool(_INT.match(value)) and str(int(value)) == value and _fits_int64(value)


def _fits_int64(value: str) -> bool:
    """An integer cell a nullable Int64 column can hold (a larger one made typed() raise OverflowError)."""
    return -(2**63) <= int(value) < 2**63


def _float_round_trips(value: str) -> bool:
    try:
        number = float(value)
    except ValueError:
        return False
    return math.isfinite(number) and repr(number) == value  # jitexp writes NaN as an empty cell: "nan" is text


def _to_bool(value: str) -> bool | None:
    """A boolean cell as jitexp and pandas write it (True/False; 1/0 and yes/no accepted); anything else is missing."""
    low = value.strip().lower()
    return True if low in ("true", "1", "yes") else False if low in ("false", "0", "no") else None
