"""The detail tables: why a compiled mode is as fast as it is, memory, the disk cache, the retrace probe.

Each takes a results frame (and sequence_table calls.csv) and returns a frame; empty for CSVs without the columns.
"""

from __future__ import annotations

import pandas as pd

from jitexp.analysis.formatting.phrases import variant_label
from jitexp.analysis.formatting.values import EAGER, NUMPY
from jitexp.report.shared.cases import (
    STATIC_ARGNUMS,
    case_keys,
    get_column,
    has_value,
    join_jobs,
    ok_rows,
    param_columns,
    sort_cases,
    text_column,
)

ATTRIBUTION_COLUMNS = [
    "mode",
    STATIC_ARGNUMS,
    "speedup",
    "explanation",
    "eager_ops",
    "jaxpr_eqns",
    "xla_kernels",
    "xla_fusions",
    "eager_bytes",
    "bytes_accessed",
    "traffic_cut",
    "flops",
    "transcendentals",
    "arithmetic_intensity",
    "op_dispatch_s",
    "explanation_detail",
]
_MEMORY_VALUES = [
    "peak_rss_growth_bytes",
    "device_peak_bytes",
    "argument_size_bytes",
    "output_size_bytes",
    "temp_size_bytes",
    "alias_size_bytes",
    "peak_memory_bytes",
]
MEMORY_COLUMNS = ["mode", STATIC_ARGNUMS, *_MEMORY_VALUES, "donation"]
CACHE_COLUMNS = [
    "mode",
    STATIC_ARGNUMS,
    "cache_hit",
    "cache_cold_first_call_s",
    "cache_warm_first_call_s",
    "first_call_saved_s",
    "cache_cold_compile_s",
    "cache_warm_compile_s",
    "cache_warm_trace_s",
    "cache_warm_lower_s",
]
SEQUENCE_COLUMNS = [
    "job_num",
    "workload",
    "mode",
    "size",
    "dtype",
    STATIC_ARGNUMS,
    "call",
    "variant",
    "label",
    "status",
    "call_s",
    "compiled",
    "compiles",
    "trace_s",
    "compile_s",
    "miss_reason",
    "error_type",
]


def _identified(rows: pd.DataFrame, df: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    keys = case_keys(df)
    return rows.reindex(columns=keys + [c for c in columns if c not in keys]).reset_index(drop=True)


def attribution_table(df: pd.DataFrame) -> pd.DataFrame:
    """Why a compiled mode is as fast as it is: eager ops against XLA kernels, memory traffic before
    (eager_bytes) and after fusion (bytes_accessed), traffic_cut = their ratio, and the explanation.

    One row per ok compiled row that carries any attribution figure; empty for old CSVs.
    """
    columns = ATTRIBUTION_COLUMNS
    ok = ok_rows(df)
    present = [c for c in ("explanation", "eager_ops", "xla_kernels", "jaxpr_eqns") if c in ok.columns]
    if ok.empty or not present:
        return pd.DataFrame(columns=case_keys(df) + columns)
    compiled = ok[~has_value(ok, "mode", EAGER) & ~has_value(ok, "mode", NUMPY)]
    compiled = compiled[compiled[present].notna().any(axis=1)]
    eager_b = pd.to_numeric(get_column(compiled, "eager_bytes"), errors="coerce").astype(float)
    fused_b = pd.to_numeric(get_column(compiled, "bytes_accessed"), errors="coerce").astype(float)
    compiled = compiled.assign(traffic_cut=(eager_b / fused_b.where(fused_b > 0)))
    return sort_cases(_identified(compiled, df, columns), case_keys(df))


def memory_table(df: pd.DataFrame) -> pd.DataFrame:
    """Memory per row: worker RSS growth, device allocator peak, XLA's memory analysis, donation."""
    ok = ok_rows(df)
    present = [c for c in _MEMORY_VALUES if c in ok.columns]
    if ok.empty or not present:
        return pd.DataFrame(columns=case_keys(df) + MEMORY_COLUMNS)
    rows = ok[ok[present].notna().any(axis=1)]
    return sort_cases(_identified(rows, df, MEMORY_COLUMNS), case_keys(df))


def cache_table(df: pd.DataFrame) -> pd.DataFrame:
    """Persistent compilation cache, cold against warm worker: hit, first calls, compile, trace and lower."""
    ok = ok_rows(df)
    if ok.empty or not {"cache_hit", "cache_cold_first_call_s"} & set(ok.columns):
        return pd.DataFrame(columns=case_keys(df) + CACHE_COLUMNS)
    rows = ok[get_column(ok, "cache_hit").notna() | get_column(ok, "cache_cold_first_call_s").notna()]
    rows = rows.assign(
        first_call_saved_s=pd.to_numeric(get_column(rows, "cache_cold_first_call_s"), errors="coerce")
        - pd.to_numeric(get_column(rows, "cache_warm_first_call_s"), errors="coerce")
    )
    return sort_cases(_identified(rows, df, CACHE_COLUMNS), case_keys(df))


def sequence_table(calls: pd.DataFrame | None, df: pd.DataFrame) -> pd.DataFrame:
    """The retrace probe (calls.csv rows with probe=sequence), with each job's static_argnums and a
    label per call such as ``n=2 (static)``: which calls compiled and JAX's reason."""
    if calls is None or calls.empty or "probe" not in calls.columns:
        return pd.DataFrame(columns=SEQUENCE_COLUMNS)
    seq = calls[text_column(calls, "probe") == "sequence"]
    if seq.empty:
        return pd.DataFrame(columns=SEQUENCE_COLUMNS)
    seq = join_jobs(seq, df)
    params = {c[len("param_") :] for c in param_columns(df)}
    seq = seq.assign(
        label=[
            variant_label(v, s, params) for v, s in zip(text_column(seq, "variant"), get_column(seq, STATIC_ARGNUMS))
        ]
    )
    return seq.reindex(columns=SEQUENCE_COLUMNS).reset_index(drop=True)
