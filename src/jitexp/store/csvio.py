"""CSV in and out: rows to a typed frame, atomic writes (temp file and rename), reading back with jitexp's types."""

from __future__ import annotations

import csv
import functools
import io
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
    rows = list(rows)
    frame = pd.DataFrame(rows)
    # integers beside a missing cell, which pandas made floats (2**63 - 1 lost its last digits, and an integer column
    # could not be made Int64 below): an integer column's or a param's, rebuilt from the rows
    for col, dtype in frame.dtypes.items():  # the dtypes at once: a Series per column cost ~20 us each
        if dtype == np.float64 and (col in INT_COLUMNS or str(col).startswith("param_")):
            cells = [row.get(col) for row in rows]
            if _all_ints(cells):
                frame[col] = pd.array(
                    [int(c) if isinstance(c, (int, np.integer)) else None for c in cells], dtype="Int64"
                )
    if columns is not None:
        frame = frame.reindex(columns=list(columns))
    else:
        frame = frame.reindex(columns=ordered_columns([*COLUMNS, *frame.columns]))
    dtypes = frame.dtypes
    for col in INT_COLUMNS:  # an integer column with a missing cell must not become 20.0
        if (
            col in dtypes.index
            and pd.api.types.is_numeric_dtype(dtypes[col])
            and not pd.api.types.is_bool_dtype(dtypes[col])
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


def writable(folder: str | os.PathLike) -> None:
    """The folder made if needed and a file written and removed there, or the OSError that writing the real files
    would meet (read-only, no such parent, a file in the way), before anything is printed."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".jitexp-probe.", dir=folder)
    os.close(fd)
    os.unlink(tmp)


def write_csv(data: pd.DataFrame | Sequence[Mapping], path: str | os.PathLike) -> Path:
    """Write a CSV atomically (see write_atomic)."""
    frame = data if isinstance(data, pd.DataFrame) else to_frame(data)
    return write_atomic(path, csv_bytes(frame))


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """A frame as CSV bytes, as jitexp writes every file."""
    # Text quoted (a lone carriage return in a message would otherwise split a row), "\n" line ends.
    return frame.to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n").encode("utf-8")


class BadCsv(pd.errors.ParserError):
    """A CSV jitexp cannot read as written (truncated, hand-edited): one line naming the file, the row and the
    column. Row numbers count data rows from 1, as a spreadsheet shows them below the header. (A ParserError, so
    that whoever skipped a file pandas could not parse skips it still.)"""

    def __init__(self, path: str | os.PathLike, what: str, row: int | None = None, column: str | None = None):
        where = "".join(
            [f", row {row} (line {row + 1})" if row is not None else "", f", column {column}" if column else ""]
        )
        super().__init__(f"{path}{where}: {what}")


class EmptyCsv(BadCsv, pd.errors.EmptyDataError):
    """A CSV file with nothing in it (pandas' EmptyDataError, worded as a BadCsv)."""


_LINE = re.compile(r"line (\d+)|row (\d+)")
_MANGLED = re.compile(r".+\.\d+")  # pandas' name for a repeated header column
Cells = Sequence[list | None]  # each column's cells as a list, None for a typed column (_cells)


def read_text(path: str | os.PathLike) -> pd.DataFrame:
    """A CSV exactly as written: every cell a string, nothing turned into NA ("NA", "007" stay). A file that does not
    parse, or a row with fewer fields than the header (a truncated file), is a BadCsv naming the row."""
    # low_memory=False: one chunk, not several joined column by column (a third faster on a results.csv; with every
    # column text there is no type inference for chunks to differ on)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False, low_memory=False)
    except pd.errors.EmptyDataError:
        raise EmptyCsv(path, "empty: not even a header (a file cut short, or not written by jitexp)") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        found = _LINE.search(str(exc))
        line = int(next(g for g in found.groups() if g)) if found else None
        reason = str(exc).splitlines()[0].rpartition("error: ")[2] or str(exc).splitlines()[0]
        raise BadCsv(
            path, f"not a CSV jitexp can read ({reason})", None if line is None else max(line - 1, 1)
        ) from None
    twice = next((c for c in frame.columns if _MANGLED.fullmatch(str(c)) and str(c).rsplit(".", 1)[0] in frame), None)
    if twice is not None:  # pandas renamed the second x to x.1 without a word
        name = str(twice).rsplit(".", 1)[0]
        raise BadCsv(path, f"the header names {name} twice: which is the value is unknown; keep one", column=name)
    short = _short_record(path, len(frame.columns))
    if short is not None:
        row, fields = short
        missing = str(frame.columns[fields]) if fields < len(frame.columns) else None
        raise BadCsv(
            path,
            f"the row has {fields} fields where the header has {len(frame.columns)}: the file was cut short or edited",
            row,
            missing,
        )
    return frame


SHORT_CHECKED_BYTES = 8 << 20  # files up to this size are read record by record for rows of the wrong length


def _short_record(path: str | os.PathLike, width: int) -> tuple[int, int] | None:
    """The first data row (from 1) whose field count is not the header's, and its count; None when all agree. pandas
    pads a short row with empty cells without a word (na_filter off), so a truncated last row read as a row with
    empty columns. Files larger than SHORT_CHECKED_BYTES are not read twice (jitexp writes them atomically)."""
    try:
        if os.path.getsize(path) > SHORT_CHECKED_BYTES:
            return None
        with open(path, newline="", encoding="utf-8") as handle:
            records = csv.reader(handle)
            next(records, None)
            for row, record in enumerate((r for r in records if r), start=1):
                if len(record) != width:
                    return row, len(record)
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    return None


def read_csv(path: str | os.PathLike) -> pd.DataFrame:
    """Read one results-style CSV with jitexp's column types; a results.csv whose cells are not what jitexp writes is a
    BadCsv (check_cells)."""
    plain = _plain_cells(path)
    if plain is not None:
        header, columns = plain
        if Path(path).name == "results.csv":
            check_cells(header, columns, path)
        return _typed(header, pd.RangeIndex(len(columns[0])), columns)
    text = read_text(path)  # anything but a plain file: pandas reads it, and says what is wrong with it
    cells = _cells(text)  # each column's cells, taken from the frame once for the check and the types
    if Path(path).name == "results.csv":
        check_cells(list(text.columns), cells, path)
    return _typed(list(text.columns), text.index, cells, text)


PLAIN_BYTES = 32 << 10  # larger files go to pandas, faster there (a narrow samples.csv of 1,000 rows is ~43 KB)
# A CSV as jitexp writes it (csv_bytes): each field quoted ("" for a quote inside) or bare (no quote, comma or line
# end), "\n" line ends, no line that starts with a blank. The csv module and pandas read such a file alike.
_FIELD = r'(?:"(?:[^"]|"")*"|[^",\n\r]*)'
_PLAIN = re.compile(rf"{_FIELD}(?:,{_FIELD})*(?:\n{_FIELD}(?:,{_FIELD})*)*\n?")


def _plain_cells(path: str | os.PathLike) -> tuple[list[str], list[list]] | None:
    """The header and each column's cells of a plain CSV (_PLAIN) of two or more named columns, every row as long as
    the header, at least one row, no header name pandas would rename or read_text refuse; None for any other file,
    which read_text reads (most of the time of a small results.csv went to pandas' per-column set-up)."""
    try:
        if os.path.getsize(path) > PLAIN_BYTES:
            return None
        with open(path, encoding="utf-8", newline="") as handle:
            data = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    if data.startswith(("\ufeff", " ", "\t")) or any(c in data for c in ("\0", "\r", "\n ", "\n\t")):
        return None
    if not _PLAIN.fullmatch(data):
        return None
    records = list(csv.reader(io.StringIO(data, newline="")))
    if len(records) < 2:
        return None
    header, width = records[0], len(records[0])
    if width < 2 or len(set(header)) != width or any(not h or _MANGLED.fullmatch(h) for h in header):
        return None
    if any(len(r) != width for r in records):
        return None
    return header, [list(column) for column in zip(*records[1:])]


def read_cells(path: str | os.PathLike) -> tuple[list[str], list[list]]:
    """read_text(path) as its header and each column's cells (lists of str): a small plain file without building a
    frame, any other through read_text (its errors unchanged)."""
    plain = _plain_cells(path)
    if plain is not None:
        return plain
    text = read_text(path)
    return [str(c) for c in text.columns], [list(c or []) for c in _cells(text)]


def text_frame(columns: Sequence[str], cells: Sequence[list]) -> pd.DataFrame:
    """A frame of text as read_text makes it (each column of the type pandas gives dtype=str) from a header and
    each column's cells."""
    kind = _text_dtype(str(pd.get_option("mode.string_storage")))
    n = len(cells[0]) if len(cells) else 0
    frame = pd.DataFrame({i: pd.array(c, dtype=kind) for i, c in enumerate(cells)}, index=pd.RangeIndex(n))
    frame.columns = pd.Index(list(columns), dtype=kind if len(columns) else None)
    return frame


@functools.cache
def _text_dtype(storage: str) -> object:
    """The type pandas gives a column read with dtype=str (str in pandas 3, object before), per string storage."""
    return pd.read_csv(io.StringIO("a\nb\n"), dtype=str, keep_default_na=False, na_filter=False).dtypes.iloc[0]


STATUSES = ("ok", "error")
# a column and those written with it since it existed: one missing beside them was deleted by hand
COMPANIONS = {
    "median_s": ("mean_s", "ci95_low_s", "ci95_high_s"),
    "speedup": ("speedup_ci_low", "speedup_ci_high", "baseline_mode"),
}
# times that are never negative (host_overhead_s and execute_s are differences, and may be)
NON_NEGATIVE = (
    *("median_s", "mean_s", "min_s", "max_s", "first_call_s", "n_samples", "n_processes"),
    *("speedup", "speedup_ci_low", "speedup_ci_high"),  # a ratio of two times
)
TIMES = ("median_s", "mean_s", "min_s", "max_s", "first_call_s")  # measured seconds: finite where written


def check_cells(columns: list, cells: Cells, path: str | os.PathLike) -> None:
    """A results.csv as jitexp writes it, as its header and each column's cells (_cells): no column deleted from
    beside its companions (a median_s gone while mean_s stays; a speedup gone while its CI stays, which made the
    report recompute an unpaired figure), numbers where the schema has numbers, a status of ok or error, times that
    are not negative, no row twice (a copied row would count a process twice). Each mistake is a BadCsv naming the
    file, the row and the column. A file from before a column existed (no companions either) is read as it is."""
    if not columns or not cells[0]:
        return
    # each column's cells by its name (a name twice never gets here: read_text refuses it)
    by_name = {c: v or [] for c, v in zip(columns, cells)}
    for column, companions in COMPANIONS.items():
        beside = [c for c in companions if c in by_name]
        if column not in by_name and beside:
            raise BadCsv(
                path,
                f"no {column} column beside {beside[0]}: it was deleted, and the report would "
                f"{'recompute an unpaired figure' if column == 'speedup' else 'have no time to show'}; restore it "
                "(or the file jitexp wrote)",
                column=column,
            )
    beside = [c for c in ("status", "median_s") if c in by_name]
    if "mode" not in by_name and beside:  # renamed: the readers group rows by mode (another tool's file reads)
        raise BadCsv(
            path,
            f"no mode column beside {beside[0]}: each row of a results.csv names the mode it measured",
            column="mode",
        )
    for row, mode in enumerate(by_name.get("mode", []), start=1):
        if not mode:
            raise BadCsv(path, "empty: each row of a results.csv names the mode it measured", row, "mode")
    for row, status in enumerate(by_name.get("status", []), start=1):
        if status and status not in STATUSES:
            raise BadCsv(path, f"status {status!r} is not one jitexp writes; valid choices: ok, error", row, "status")
    for column, column_cells in by_name.items():
        if column not in KNOWN_NUMERIC:
            continue
        for row, cell in enumerate(column_cells, start=1):
            if not cell:
                continue
            try:
                number = float(cell)
            except ValueError:
                raise BadCsv(path, f"{cell!r} is not a number", row, column) from None
            if column in NON_NEGATIVE and number < 0:
                raise BadCsv(path, f"{cell} is negative; a {column} never is", row, column)
            if column in TIMES and not math.isfinite(number):  # jitexp leaves a time it has not empty
                raise BadCsv(path, f"{cell} is not a time; a {column} is a finite number of seconds", row, column)
    seen: dict[tuple, int] = {}  # each row's cells -> the row's index: the first row that repeats an earlier one
    for row, record in enumerate(zip(*by_name.values())):
        first = seen.setdefault(record, row)
        if first != row:
            raise BadCsv(
                path,
                f"repeats row {first + 1} exactly: its processes would count twice; remove the copy",
                row + 1,
            )


_INT = re.compile(r"^-?\d+$")


def typed(frame: pd.DataFrame, cells: Cells | None = None) -> pd.DataFrame:
    """Types for a frame of CSV text; an empty cell is missing.

    Known text columns stay text, booleans become nullable booleans, known numeric columns
    numbers (nullable integers when every cell is an integer that fits int64, else floats). Other columns
    (param_<name>) become numbers or booleans only when every cell reads back exactly as written, so a
    param "007" stays "007" (and so does one past int64). `cells`: _cells(frame), where the caller has it.
    """
    return _typed(list(frame.columns), frame.index, _cells(frame) if cells is None else cells, frame)


def _typed(columns_in: list, index: pd.Index, cells: Cells, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """typed() on a header, an index and each column's cells (`frame`: where a column that is None in cells is)."""
    # Column by column in plain Python, one array built per column and the frame once: a results.csv has ~160
    # columns of a few rows, where a chain of pandas operations per column cost ~0.3 ms each.
    kinds = {name: pd.api.types.pandas_dtype(name) for name in ("string", "Int64", "boolean")}  # looked up once
    columns: list = []
    floats: dict[int, list] = {}  # known numeric columns that are not all integers: parsed by one to_numeric
    for i, (col, values) in enumerate(zip(columns_in, cells)):
        if values is None:
            assert frame is not None  # a typed column is one of a frame's
            columns.append(frame.iloc[:, i].array)  # already typed (rows built in memory)
            continue
        text = [_text(c) for c in values]
        filled = [c for c in text if c is not None]
        if not filled:  # most optional columns of a row: typed as their kind without parsing a cell
            dtype = _missing_dtype(col)
            columns.append(pd.array(text, dtype=kinds[dtype]) if dtype != "float64" else np.full(len(text), np.nan))
        elif col in TEXT_COLUMNS:
            columns.append(pd.array(text, dtype=kinds["string"]))
        elif col in BOOL_COLUMNS:
            columns.append(_bools(text, kinds["boolean"]))
        elif col in KNOWN_NUMERIC:
            if all(_INT.match(c) and _fits_int64(c) for c in filled):
                columns.append(_ints(text, kinds["Int64"]))
            else:
                floats[i] = text
                columns.append(None)
        elif all(_int_round_trips(c) for c in filled):
            columns.append(_ints(text, kinds["Int64"]))
        elif all(_float_round_trips(c) for c in filled):
            columns.append(np.array([np.nan if c is None else float(c) for c in text]))
        elif all(c in ("True", "False") for c in filled):
            columns.append(_bools(text, kinds["boolean"]))
        else:
            columns.append(pd.array(text, dtype=kinds["string"]))
    if floats:  # as pd.to_numeric(errors="coerce") reads each cell, in one call for every such column
        parsed = pd.to_numeric(pd.array([c for text in floats.values() for c in text], dtype="string"), errors="coerce")
        parsed = np.asarray(parsed.astype(float), dtype=float)
        start = 0
        for i, text in floats.items():
            columns[i], start = parsed[start : start + len(text)], start + len(text)
    out = pd.DataFrame(dict(enumerate(columns)), index=index)
    out.columns = frame.columns if frame is not None else pd.Index(columns_in)
    return out


def _cells(frame: pd.DataFrame) -> list[list | None]:
    """Each column's cells as a list (None for a column that is typed already: not text), taken from the frame at
    once: a frame of ~160 text columns gives them ~3x faster as one object array than column by column."""
    text = [_is_text(frame, i, dtype) for i, dtype in enumerate(frame.dtypes.tolist())]
    if all(text):
        return frame.to_numpy(dtype=object).T.tolist() if len(frame.columns) else []
    taken = iter(frame.iloc[:, [i for i, t in enumerate(text) if t]].to_numpy(dtype=object).T.tolist())
    return [next(taken) if t else None for t in text]


def _is_text(frame: pd.DataFrame, i: int, dtype: object) -> bool:
    """Whether column i holds text (object or a string dtype; categories of strings, as pandas judges a column)."""
    if pd.api.types.is_object_dtype(dtype):
        return True
    if isinstance(dtype, pd.CategoricalDtype):
        return pd.api.types.is_string_dtype(frame.iloc[:, i])
    return pd.api.types.is_string_dtype(dtype)


def _text(cell: object) -> str | None:
    """A cell as text, None when missing: an empty cell, or None, NA or NaN in a frame built in memory."""
    if isinstance(cell, str):
        return cell or None
    if cell is None or cell is pd.NA or (isinstance(cell, float) and math.isnan(cell)):
        return None
    return str(cell)


def _all_ints(cells: list) -> bool:
    """Every cell an integer (not a boolean) that fits int64, or missing; at least one an integer."""
    found = False
    for cell in cells:
        if isinstance(cell, (int, np.integer)) and not isinstance(cell, (bool, np.bool_)):
            if not -(2**63) <= int(cell) < 2**63:
                return False
            found = True
        elif _text(cell) is not None:
            return False
    return found


def _ints(text: list[str | None], dtype: object = "Int64") -> pd.api.extensions.ExtensionArray:
    return pd.array([None if c is None else int(c) for c in text], dtype=dtype)


def _bools(text: list[str | None], dtype: object = "boolean") -> pd.api.extensions.ExtensionArray:
    return pd.array([None if c is None else _to_bool(c) for c in text], dtype=dtype)


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
