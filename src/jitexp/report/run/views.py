"""The tables trimmed for reading: which columns to show, renamed, and values in words.

Each takes a table of tables.py or detail_tables.py (or the results frame) and returns a frame or lines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pandas as pd

from jitexp.analysis.formatting.phrases import payoff_text, ratio_cell, verdict_words
from jitexp.analysis.formatting.values import format_value, is_missing, short_name, three_digits
from jitexp.labels import built_by, size_text
from jitexp.report.run.caveats import row_notes
from jitexp.report.run.detail_tables import ATTRIBUTION_COLUMNS, CACHE_COLUMNS, MEMORY_COLUMNS, SEQUENCE_COLUMNS
from jitexp.report.shared.cases import AB_VARIANT, KNOBS, STATIC_ARGNUMS, get_column, params_labels, varying


def ab_view(ab: pd.DataFrame) -> pd.DataFrame:
    """The A/B table for reading: variant against baseline, mode, metric, the change in words with its CI
    (``2x faster (95% CI 1.6x-2.5x)``), p, the verdict (``within the 5% threshold`` for a significant change
    under the threshold), pairs."""
    view = ab.reindex(columns=["variant", "ab_baseline", "mode", "metric"]).rename(columns={"ab_baseline": "against"})
    view["variant"] = view["variant"].where(view["variant"].notna(), get_column(ab, "env"))  # or the env (envs)
    view["change (95% CI)"] = [ratio_cell(*v) for v in zip(ab["ratio"], ab["ratio_ci_low"], ab["ratio_ci_high"])]
    view["p"] = [f"{float(p):.2g}" if not is_missing(p) else "-" for p in ab["p_value"]]
    view["verdict"] = [verdict_words(v, p) for v, p in zip(ab["verdict"], ab["p_value"])]
    view["pairs"] = ab["n_pairs"]
    if ab["workload"].nunique(dropna=False) > 1 or ab["job_num"].nunique(dropna=False) > 1:
        view.insert(0, "workload", ab["workload"])
        view.insert(0, "job", ab["job_num"])
    return view.reset_index(drop=True)


# the results.csv columns every row shows in the report's Results table and the terminal's (after its identity)
ROW_COLUMNS = ("status", "median_s", "first_call_s", "compile_s")


def rows_table(df: pd.DataFrame) -> pd.DataFrame:
    """Every row, compact: identity (varying columns only, the knobs a sweep changes among them; the inputs' shapes
    where the rows' workloads differ, since size means another shape in each), status, key timings, the device's side where measured (`device_columns`), error class, notes."""
    always = ["workload", "mode", "size"]
    shown = varying(df, ["dtype", STATIC_ARGNUMS, AB_VARIANT, *KNOBS, "device_kind", "seed"])
    table = df.reindex(columns=always + shown).copy()
    table["size"] = size_cells(df)
    shapes = get_column(df, "input_shapes")
    if df["workload"].nunique() > 1 and shapes.notna().any():  # size means a different shape per workload
        table.insert(3, "input_shapes", shapes.fillna("").astype(str).to_numpy())
    table.insert(3 + ("input_shapes" in table.columns), "params", params_labels(df))
    for col in ROW_COLUMNS:
        table[col] = get_column(df, col)
    for col, values in device_columns(df).items():
        table[col] = values
    errors = [short_name(v) for v in get_column(df, "error_type")]
    if any(errors):
        table["error"] = errors
    notes = [row_notes(row, short=True) for _, row in df.iterrows()]
    if any(notes):
        table["notes"] = notes
    if not table["params"].astype(bool).any():
        table = table.drop(columns="params")
    return table.reset_index(drop=True)


# share of the device's measured peak: (by device time, by wall time) columns, per rate
PEAK_SHARES = {
    "FLOP/s": ("device_peak_flops_share", "peak_flops_share"),
    "bytes/s": ("device_peak_bytes_share", "peak_bytes_share"),
}


def device_columns(df: pd.DataFrame) -> dict[str, pd.Series]:
    """The device's side of each row, for the rows table, only the columns some row has: device_s and
    host_overhead_s, the achieved FLOP/s and bytes/s as a percentage of the device's measured peak (by device time
    where the row has it, else by wall time; the header says which, or each cell where the rows mix), and
    device_peak_bytes (the device allocator's peak)."""
    columns: dict[str, pd.Series] = {}
    for col in ("device_s", "host_overhead_s"):
        values = pd.to_numeric(get_column(df, col), errors="coerce")
        if values.notna().any():
            columns[col] = values
    for rate, (by_device, by_wall) in PEAK_SHARES.items():
        device = pd.to_numeric(get_column(df, by_device), errors="coerce")
        wall = pd.to_numeric(get_column(df, by_wall), errors="coerce")
        on_device = device.notna()
        share = device.where(on_device, wall)
        if share.isna().all():
            continue
        mixed = on_device.any() and (~on_device & wall.notna()).any()
        basis = "" if mixed else (" (device)" if on_device.any() else " (wall)")
        platforms = get_column(df, "platform")
        cells = [
            "-"
            if is_missing(v)
            else share_cell(float(v), rate, platform) + ((" device" if dev else " wall") if mixed else "")
            for v, dev, platform in zip(share, on_device, platforms)
        ]
        columns[f"% of ceiling {rate}{basis}"] = pd.Series(cells, index=df.index, dtype=object)
    memory = pd.to_numeric(get_column(df, "device_peak_bytes"), errors="coerce")
    if memory.notna().any():
        columns["device_peak_bytes"] = memory
    return columns


def share_cell(share: float, rate: str, platform: object) -> str:
    """A share of a ceiling as a percentage, or above 1 words (a ceiling the row passes is not its ceiling; the row's
    `above_ceiling` says it in full): on a CPU, bytes above the memory bandwidth came from a cache."""
    if share <= 1:
        return percent_text(share)
    return "above (in cache)" if rate == "bytes/s" and platform == "cpu" else "above its ceiling"


def percent_text(share: float) -> str:
    """A share of a peak as a percentage, three digits at most: ``94.3%``, ``3.4%``, ``0.0012%``."""
    return f"{three_digits(float(share) * 100)}%"


def size_cells(df: pd.DataFrame) -> pd.Series:
    """The `size` column as a table shows it: the size where it built the inputs (or the rows predate the
    `inputs` column), else what did: the given arguments' `input_shapes`, or `setup` (see labels.py)."""
    if "inputs" not in df.columns:
        return get_column(df, "size")
    return pd.Series([_size_cell(row) for _, row in df.iterrows()], index=df.index, dtype=object)


def _size_cell(row: pd.Series) -> object:
    what = built_by(row)
    return row.get("size") if what is None else what or "setup"


def compact_view(
    table: pd.DataFrame, values: Sequence[str], always: Sequence[str] = ("workload", "size", "mode")
) -> pd.DataFrame:
    """A table trimmed for reading: identity columns that vary (always the given ones), params as one
    ``params`` column, then the value columns that hold anything."""
    idents = ["workload", AB_VARIANT, "params", "size", "dtype", "device_kind", "mode", STATIC_ARGNUMS, *KNOBS]
    view = pd.DataFrame(index=table.index)
    for col in idents:
        values_ = pd.Series(params_labels(table), index=table.index) if col == "params" else get_column(table, col)
        values_ = size_cells(table) if col == "size" else values_
        if col in always or (values_.notna().any() and values_.astype("string").nunique(dropna=False) > 1):
            view[col] = values_
    for col in values:
        if col in table.columns and table[col].notna().any():
            view[col] = table[col]
    return view.reset_index(drop=True)


def _less(columns: Sequence[str], *hidden: str) -> list[str]:
    """columns, in their order, less hidden."""
    return [c for c in columns if c not in hidden]


# What each detail table shows for reading: its CSV's columns less those named (the whole table is in the CSV).
# compact_view places the case's identity columns (mode, static_argnums) itself; the attribution's detail is
# read as lines (attribution_details), and the terminal's attribution table is narrower than the page's.
_IDENTITY = ("mode", STATIC_ARGNUMS)
ATTRIBUTION_VIEW = _less(
    ATTRIBUTION_COLUMNS, *_IDENTITY, "jaxpr_eqns", "flops", "transcendentals", "explanation_detail"
)
ATTRIBUTION_TERMINAL = _less(ATTRIBUTION_VIEW, "xla_fusions", "arithmetic_intensity", "op_dispatch_s")
MEMORY_VIEW = _less(MEMORY_COLUMNS, *_IDENTITY, "peak_memory_bytes")
CACHE_VIEW = _less(CACHE_COLUMNS, *_IDENTITY)
SEQUENCE_VIEW = _less(SEQUENCE_COLUMNS, "size", "dtype", "variant", "compiles", "trace_s")


def attribution_details(attribution: pd.DataFrame) -> list[str]:
    """``elementwise_chain size 10000 jit: fusion-bound: eager moves 4.04 MiB ...``, one line per row."""
    lines = []
    for (_, row), params in zip(attribution.iterrows(), params_labels(attribution)):
        if is_missing(row.get("explanation_detail")):
            continue
        label = " ".join(
            p
            for p in (f"{row['workload']}{' (' + params + ')' if params else ''}", size_text(row, " "), row["mode"])
            if p
        )
        lines.append(f"{label}: {row.get('explanation')}: {row['explanation_detail']}")
    return lines


def sequence_view(sequence: pd.DataFrame) -> pd.DataFrame:
    """The retrace probe for reading: job, mode, static_argnums, call, label, compiled, why."""
    view = sequence.reindex(columns=SEQUENCE_VIEW).copy()
    view["error_type"] = [short_name(v) for v in view["error_type"]]
    keep = [
        c for c in view.columns if c in ("call", "label") or (view[c].notna() & (view[c].astype("string") != "")).any()
    ]
    return view.loc[:, keep]


def speedup_view(speedup: pd.DataFrame) -> pd.DataFrame:
    """The speedup table trimmed for reading: case, mode, times, speedup with CI, break-even."""
    keys = [k for k in ("workload", "size", "dtype") if k in speedup.columns]
    view = speedup.reindex(columns=keys).copy()
    view.insert(1, "params", params_labels(speedup))
    if not view["params"].astype(bool).any():
        view = view.drop(columns="params")
    for col in varying(speedup, [AB_VARIANT, STATIC_ARGNUMS, *KNOBS]):
        view[col] = speedup[col]
    view["mode"] = speedup["mode"]
    for col in ("eager_median_s", "median_s", "speedup"):
        view[col] = speedup[col]
    view["speedup_ci95"] = [
        "-" if is_missing(lo) and is_missing(hi) else f"{format_value('speedup', lo)} - {format_value('speedup', hi)}"
        for lo, hi in zip(speedup["speedup_ci_low"], speedup["speedup_ci_high"])
    ]
    view["verdict"] = speedup["verdict"]
    view["pairing"] = speedup["pairing"]
    view["pays_off"] = [
        payoff_text(v, c, a, b)
        for v, c, a, b in zip(
            speedup["verdict"], speedup["break_even_calls"], speedup["ahead_until_calls"], speedup["baseline_mode"]
        )
    ]
    view["compile_overhead_s"] = speedup["compile_overhead_s"]
    return view


@dataclass(frozen=True)
class DetailSection:
    """A detail table as summary.md and the terminal show it: the page's heading and note ("" for none), the
    terminal's heading line, the view for reading, and the terminal's cell width."""

    heading: str
    note: str
    line: str
    view: Callable[[pd.DataFrame], pd.DataFrame]
    width: int = 48


# The detail tables both texts show alike, in their order (report_tables' keys); each text adds its own around them.
DETAIL_SECTIONS = {
    "memory": DetailSection(
        "Memory",
        "",
        "memory (peak_rss_growth_bytes: the worker's RSS high-water mark above its start, shared by "
        "the modes it ran; the rest from XLA's memory analysis)",
        lambda table: compact_view(table, MEMORY_VIEW),
        width=60,
    ),
    "cache": DetailSection(
        "Persistent compilation cache",
        "cold: a fresh worker compiles and writes the cache; warm: a second fresh worker reads it "
        "(trace and lower still run).",
        "persistent compilation cache (cold: a fresh worker writes it; warm: a second one reads it)",
        lambda table: compact_view(table, CACHE_VIEW),
    ),
    "sequence": DetailSection(
        "Retrace probe",
        "calls.csv rows with probe=sequence: argument variants called in one fresh worker; "
        "compiled = the call traced and compiled, with JAX's reason.",
        "retrace probe (calls.csv, probe=sequence: which calls compiled and JAX's reason)",
        sequence_view,
        width=60,
    ),
}
