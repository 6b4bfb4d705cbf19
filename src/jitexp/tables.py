"""Pure pandas tables for the report: speedup and break-even, scaling, errors, text rendering.

Nothing here reads or writes files or prints; every function takes a results frame (the
columns of ``jitexp.results.COLUMNS``) and returns a frame or a string.
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

EAGER = "eager"
MODE_ORDER = ["eager", "jit", "aot"]
VARIANT = "static_argnums"

SPEEDUP_COLUMNS = [
    "mode", VARIANT,
    "eager_median_s", "eager_ci95_low_s", "eager_ci95_high_s", "eager_first_call_s",
    "median_s", "ci95_low_s", "ci95_high_s", "first_call_s", "compile_s",
    "compile_overhead_s", "speedup", "speedup_ci_low", "speedup_ci_high",
    "break_even_calls", "n_eager_rows", "n_rows",
]
SCALING_COLUMNS = [
    "mode", VARIANT, "n_sizes", "size_min", "size_max",
    "min_size_median_s", "max_size_median_s", "growth_exponent", "first_call_growth_exponent",
]
ERROR_COLUMNS = [
    "workload", "mode", "size", "dtype", VARIANT, "job_num",
    "error_phase", "error_type", "error_message", "hint",
]


def param_columns(df: pd.DataFrame) -> list[str]:
    """The workload-parameter columns (``param_<name>``), sorted."""
    return sorted(c for c in df.columns if c.startswith("param_"))


def case_keys(df: pd.DataFrame, *, size: bool = True) -> list[str]:
    """Columns that identify one measured case across modes: workload, params, size, dtype, device."""
    keys = ["workload", *param_columns(df), "size", "dtype", "platform", "device_kind"]
    return [k for k in keys if k in df.columns and (size or k != "size")]


def ok_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows that measured something: status ok (or no status column) and a finite median."""
    ok = _flag(df, "status", "ok") if "status" in df.columns else pd.Series(True, index=df.index)
    median = pd.to_numeric(_column(df, "median_s"), errors="coerce")
    return df[ok & np.isfinite(median.astype(float))]


def error_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows whose case failed (status error)."""
    if "status" not in df.columns:
        return df.iloc[0:0]
    return df[_flag(df, "status", "error")]


def aggregate(rows: pd.DataFrame) -> dict:
    """Several rows of one case and mode (seeds, repeats) as one.

    The median is the median of the rows' medians (robust to one noisy job); the CI is
    the union of the rows' CIs (min of lows, max of highs), so it covers every row's
    interval; first_call_s and compile_s are medians too.
    """
    return {
        "median_s": _column(rows, "median_s").median(),
        "ci95_low_s": _column(rows, "ci95_low_s").min(),
        "ci95_high_s": _column(rows, "ci95_high_s").max(),
        "first_call_s": _column(rows, "first_call_s").median(),
        "compile_s": _column(rows, "compile_s").median(),
        "n_rows": len(rows),
    }


def break_even_calls(
    eager_first_s: float, eager_median_s: float, jit_first_s: float, jit_median_s: float,
) -> float:
    """Smallest n >= 1 with jit_first + (n-1)*jit_median <= eager_first + (n-1)*eager_median.

    1 when the compiled first call is already no slower; inf when it is slower and the
    compiled steady state is not faster; NaN when an input is missing. Ties within float
    rounding (1e-12 relative) count as break-even.
    """
    values = (eager_first_s, eager_median_s, jit_first_s, jit_median_s)
    if any(v is None or not math.isfinite(float(v)) for v in values):
        return math.nan

    def holds(extra_calls: int) -> bool:
        jit = jit_first_s + extra_calls * jit_median_s
        eager = eager_first_s + extra_calls * eager_median_s
        return jit <= eager + 1e-12 * max(abs(jit), abs(eager))

    if holds(0):
        return 1.0
    gain = eager_median_s - jit_median_s
    if gain <= 0:
        return math.inf
    extra = math.ceil((jit_first_s - eager_first_s) / gain)
    while extra > 1 and holds(extra - 1):
        extra -= 1
    while not holds(extra):
        extra += 1
    return float(extra + 1)


def speedup_table(df: pd.DataFrame) -> pd.DataFrame:
    """Eager vs each compiled mode per case: speedup with a CI, compile overhead, break-even calls.

    Cases group by workload, params, size, dtype, platform and device kind; one row per
    case and compiled mode (and static_argnums variant when a sweep varied it). Several
    rows of one case and mode are aggregated as in :func:`aggregate`. The speedup CI is
    conservative: eager_ci_low / compiled_ci_high to eager_ci_high / compiled_ci_low.
    compile_overhead_s is the compiled first_call_s minus its median_s.
    """
    ok = ok_rows(df)
    keys = case_keys(df)
    if ok.empty or "mode" not in ok.columns:
        return pd.DataFrame(columns=keys + SPEEDUP_COLUMNS)
    records = []
    for case_values, case in ok.groupby(keys, dropna=False, sort=False):
        eager = case[_flag(case, "mode", EAGER)]
        if eager.empty:
            continue
        compiled = case[~_flag(case, "mode", EAGER)]
        for (mode, variant), rows in _variants(compiled):
            matching = eager[_text(eager, VARIANT) == _text_value(variant)]
            base = aggregate(matching if not matching.empty else eager)
            record = dict(zip(keys, _as_tuple(case_values)))
            record.update(mode=mode, static_argnums=variant)
            record.update(_speedup_record(base, aggregate(rows)))
            records.append(record)
    table = pd.DataFrame.from_records(records, columns=keys + SPEEDUP_COLUMNS)
    return _sorted(table, keys)


def _speedup_record(base: dict, comp: dict) -> dict:
    return {
        "eager_median_s": base["median_s"],
        "eager_ci95_low_s": base["ci95_low_s"],
        "eager_ci95_high_s": base["ci95_high_s"],
        "eager_first_call_s": base["first_call_s"],
        **{k: comp[k] for k in ("median_s", "ci95_low_s", "ci95_high_s", "first_call_s", "compile_s")},
        "compile_overhead_s": comp["first_call_s"] - comp["median_s"],
        "speedup": _ratio(base["median_s"], comp["median_s"]),
        "speedup_ci_low": _ratio(base["ci95_low_s"], comp["ci95_high_s"]),
        "speedup_ci_high": _ratio(base["ci95_high_s"], comp["ci95_low_s"]),
        "break_even_calls": break_even_calls(
            base["first_call_s"], base["median_s"], comp["first_call_s"], comp["median_s"]),
        "n_eager_rows": base["n_rows"],
        "n_rows": comp["n_rows"],
    }


def growth_exponent(sizes: Iterable[float], times: Iterable[float]) -> float:
    """Least-squares slope of log(time) over log(size): 1 linear, 2 quadratic; NaN under 2 sizes."""
    s = np.asarray(list(sizes), dtype=float)
    t = np.asarray(list(times), dtype=float)
    keep = np.isfinite(s) & np.isfinite(t) & (s > 0) & (t > 0)
    s, t = s[keep], t[keep]
    if np.unique(s).size < 2:
        return math.nan
    return float(np.polyfit(np.log(s), np.log(t), 1)[0])


def scaling_points(df: pd.DataFrame) -> pd.DataFrame:
    """Long table: one aggregated row per (workload, params, dtype, device, mode, variant, size)."""
    ok = ok_rows(df)
    keys = case_keys(df, size=False)
    columns = keys + ["mode", VARIANT, "size", "median_s", "ci95_low_s", "ci95_high_s",
                      "first_call_s", "compile_s", "n_rows"]
    if ok.empty or "size" not in ok.columns:
        return pd.DataFrame(columns=columns)
    ok = ok.assign(mode=_column(ok, "mode"), static_argnums=_column(ok, VARIANT))
    records = []
    group = keys + ["mode", VARIANT, "size"]
    for values, rows in ok.groupby(group, dropna=False, sort=False):
        records.append({**dict(zip(group, _as_tuple(values))), **aggregate(rows)})
    return _sorted(pd.DataFrame.from_records(records, columns=columns), keys + ["size"])


def scaling_table(df: pd.DataFrame) -> pd.DataFrame:
    """Per (workload, params, dtype, device, mode, variant) with >= 2 sizes: the growth exponent of median_s."""
    points = scaling_points(df)
    keys = case_keys(df, size=False)
    if points.empty:
        return pd.DataFrame(columns=keys + SCALING_COLUMNS)
    records = []
    group = keys + ["mode", VARIANT]
    for values, line in points.groupby(group, dropna=False, sort=False):
        line = line.sort_values("size")
        if line["size"].nunique() < 2:
            continue
        records.append({
            **dict(zip(group, _as_tuple(values))),
            "n_sizes": int(line["size"].nunique()),
            "size_min": line["size"].min(),
            "size_max": line["size"].max(),
            "min_size_median_s": line["median_s"].iloc[0],
            "max_size_median_s": line["median_s"].iloc[-1],
            "growth_exponent": growth_exponent(line["size"], line["median_s"]),
            "first_call_growth_exponent": growth_exponent(line["size"], line["first_call_s"]),
        })
    return _sorted(pd.DataFrame.from_records(records, columns=keys + SCALING_COLUMNS), keys)


def errors_table(df: pd.DataFrame) -> pd.DataFrame:
    """Every failed case with its phase, exception class, message and hint."""
    columns = ERROR_COLUMNS[:4] + param_columns(df) + ERROR_COLUMNS[4:]
    errors = error_rows(df)
    return errors.reindex(columns=columns).reset_index(drop=True)


def rows_table(df: pd.DataFrame) -> pd.DataFrame:
    """Every row, compact: identity (varying columns only), status, key timings, error class, notes."""
    always = ["workload", "mode", "size"]
    varying = [c for c in ("dtype", VARIANT, "device_kind", "seed")
               if c in df.columns and df[c].nunique(dropna=False) > 1]
    table = df.reindex(columns=always + varying).copy()
    table.insert(3, "params", params_labels(df))
    for col in ("status", "median_s", "first_call_s", "compile_s"):
        table[col] = _column(df, col)
    errors = [_tail(v) for v in _column(df, "error_type")]
    if any(errors):
        table["error"] = errors
    notes = [_notes(row) for _, row in df.iterrows()]
    if any(notes):
        table["notes"] = notes
    if not table["params"].astype(bool).any():
        table = table.drop(columns="params")
    return table.reset_index(drop=True)


def params_labels(df: pd.DataFrame) -> list[str]:
    """Each row's workload params as ``name=value, ...`` (missing params left out)."""
    cols = param_columns(df)
    return [", ".join(f"{c[len('param_'):]}={_plain(v)}" for c, v in zip(cols, values) if not _missing(v))
            for values in df[cols].itertuples(index=False)] if cols else [""] * len(df)


def caveats(df: pd.DataFrame) -> list[str]:
    """One line per row whose numbers deserve doubt: unstable, recompiled while timed, or not matching eager."""
    lines = []
    for (_, row), params in zip(df.iterrows(), params_labels(df)):
        note = _notes(row)
        if note:
            label = str(row.get("workload")) + (f" ({params})" if params else "")
            label += f" {row.get('mode')} size {_plain(row.get('size'))}"
            if not _missing(row.get(VARIANT)):
                label += f" static_argnums={row.get(VARIANT)}"
            lines.append(f"{label}: {note}")
    return lines


def _notes(row: pd.Series) -> str:
    notes = []
    if _true(row.get("unstable")):
        reason = row.get("unstable_reason")
        notes.append(f"unstable ({reason})" if not _missing(reason) else "unstable")
    compiles = row.get("compiles_during_timing")
    if not _missing(compiles) and compiles > 0:
        notes.append(f"{int(compiles)} compile(s) while timed")
    if not _missing(row.get("matches_eager")) and not bool(row.get("matches_eager")):
        notes.append("result differs from eager")
    return "; ".join(notes)


# ---- rendering -------------------------------------------------------------------------

def format_seconds(value) -> str:
    """Seconds for people, three significant digits: ``12.3 ms``, ``45 us``; ``-`` when missing."""
    if _missing(value):
        return "-"
    value = float(value)
    if math.isinf(value):
        return "inf"
    if value == 0:
        return "0 s"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if abs(value) >= scale * 0.9995:
            return f"{_three(value / scale)} {unit}"
    return f"{_three(value / 1e-9)} ns"


def format_value(column: str, value) -> str:
    """A cell as text, chosen by column name: seconds, speedups, break-even counts, plain."""
    if column.endswith("_s"):
        return format_seconds(value)
    if _missing(value):
        return "-"
    if column in ("speedup", "speedup_ci_low", "speedup_ci_high"):
        return f"{_three(float(value))}x"
    if column == "break_even_calls":
        return "never" if math.isinf(value) else str(int(value))
    if column.endswith("exponent"):
        text = f"{float(value):.2f}"
        return "0.00" if text == "-0.00" else text
    return str(_plain(value))


def render(df: pd.DataFrame, *, width: int | None = None) -> tuple[list[str], list[list[str]]]:
    """A frame as (headers, rows) of cell strings; cells cut to width characters when given."""
    headers = [str(c) for c in df.columns]
    rows = []
    for values in df.itertuples(index=False):
        cells = [format_value(c, v).replace("\n", " ") for c, v in zip(headers, values)]
        if width:
            cells = [c if len(c) <= width else c[: width - 3] + "..." for c in cells]
        rows.append(cells)
    return headers, rows


def markdown_table(df: pd.DataFrame) -> str:
    """A GitHub-flavoured markdown table (pipes escaped), without needing tabulate."""
    headers, rows = render(df)

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    numeric = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])
               for c in df.columns]
    rule = ["---:" if n else "---" for n in numeric]
    return "\n".join([line(headers), "|" + "|".join(rule) + "|", *map(line, rows)])


def text_table(df: pd.DataFrame, *, width: int = 48) -> str:
    """An aligned plain-text table for the terminal (long cells cut)."""
    headers, rows = render(df, width=width)
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, numeric)).rstrip()

    return "\n".join([line(headers), "  ".join("-" * w for w in widths), *map(line, rows)])


def speedup_view(speedup: pd.DataFrame) -> pd.DataFrame:
    """The speedup table trimmed for reading: case, mode, times, speedup with CI, break-even."""
    keys = [k for k in ("workload", "size", "dtype") if k in speedup.columns]
    view = speedup.reindex(columns=keys).copy()
    view.insert(1, "params", params_labels(speedup))
    if not view["params"].astype(bool).any():
        view = view.drop(columns="params")
    if speedup[VARIANT].nunique(dropna=False) > 1:
        view[VARIANT] = speedup[VARIANT]
    view["mode"] = speedup["mode"]
    for col in ("eager_median_s", "median_s", "speedup"):
        view[col] = speedup[col]
    view["speedup_ci95"] = [
        "-" if _missing(lo) and _missing(hi) else f"{format_value('speedup', lo)} - {format_value('speedup', hi)}"
        for lo, hi in zip(speedup["speedup_ci_low"], speedup["speedup_ci_high"])]
    for col in ("compile_overhead_s", "break_even_calls"):
        view[col] = speedup[col]
    return view


# ---- helpers ---------------------------------------------------------------------------

def _variants(compiled: pd.DataFrame) -> list[tuple[tuple, pd.DataFrame]]:
    """Compiled rows split by (mode, static_argnums), modes in jit, aot, other order."""
    frame = compiled.assign(static_argnums=_column(compiled, VARIANT))
    groups = list(frame.groupby(["mode", VARIANT], dropna=False, sort=False))
    return sorted(groups, key=lambda g: (_mode_rank(g[0][0]), _text_value(g[0][1])))


def _sorted(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    if table.empty:
        return table.reset_index(drop=True)
    order = [k for k in keys if k in table.columns]
    rank = table["mode"].map(_mode_rank) if "mode" in table.columns else 0
    table = table.assign(_rank=rank)
    table = table.sort_values(order + ["_rank"], kind="stable", na_position="last")
    return table.drop(columns="_rank").reset_index(drop=True)


def _mode_rank(mode) -> int:
    return MODE_ORDER.index(mode) if mode in MODE_ORDER else len(MODE_ORDER)


def _column(df: pd.DataFrame, name: str) -> pd.Series:
    if name in df.columns:
        return df[name]
    return pd.Series(np.nan, index=df.index, dtype=float)


def _flag(df: pd.DataFrame, column: str, value: str) -> pd.Series:
    return (_text(df, column) == value).astype(bool)


def _text(df: pd.DataFrame, column: str) -> pd.Series:
    return _column(df, column).astype("string").fillna("")


def _text_value(value) -> str:
    return "" if _missing(value) else str(value)


def _ratio(num: float, den: float) -> float:
    if _missing(num) or _missing(den) or den <= 0:
        return math.nan
    return float(num) / float(den)


def _as_tuple(values) -> tuple:
    return values if isinstance(values, tuple) else (values,)


def _missing(value) -> bool:
    if value is None or value is pd.NA:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _true(value) -> bool:
    return not _missing(value) and bool(value)


def _plain(value):
    """Integral floats as ints (CSV round-trips turn 3 into 3.0 next to NaN)."""
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def _three(value: float) -> str:
    text = f"{value:.3g}"
    return text if "e" not in text else f"{value:.0f}"


def _tail(value) -> str:
    return "" if _missing(value) else str(value).rsplit(".", 1)[-1]

