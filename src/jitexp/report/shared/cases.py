"""What a case is in a results frame, and the column helpers every table shares.

The columns that identify a case (case_keys, the jit knobs, static_argnums), a frame's ok and error rows,
seeds of one case aggregated, the report's order of rows and modes; older CSVs lacking a column read as empty.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from jitexp.analysis.formatting.values import cell_text, is_missing, plain
from jitexp.config import MODES
from jitexp.store.schema import JIT_KNOBS, MESH_COLUMNS

MODE_ORDER = list(MODES)
STATIC_ARGNUMS = "static_argnums"
# a job's own jit settings (and the Python environment, with envs): a case of its own when they vary
KNOBS = [*JIT_KNOBS, *MESH_COLUMNS, "env"]
AB_VARIANT = (
    "variant"  # a job's `variants` name: a case key of its own (not a knob: calls.csv has a `variant` of its own)
)


def param_columns(df: pd.DataFrame) -> list[str]:
    """The workload-parameter columns (``param_<name>``), sorted."""
    return sorted(c for c in df.columns if c.startswith("param_"))


def case_keys(df: pd.DataFrame, *, size: bool = True) -> list[str]:
    """Columns that identify one measured case across modes: workload, variant, params, jit's knobs, size, dtype, device."""
    keys = [
        "workload",
        AB_VARIANT,
        *param_columns(df),
        *KNOBS,
        "size",
        "dtype",
        "platform",
        "device_kind",
        "device_count",
        "distributed_processes",
    ]
    return [k for k in keys if k in df.columns and (size or k != "size")]


def ok_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows that measured something: status ok (or no status column) and a finite median."""
    ok = has_value(df, "status", "ok") if "status" in df.columns else pd.Series(True, index=df.index)
    median = pd.to_numeric(get_column(df, "median_s"), errors="coerce")
    return df[ok & np.isfinite(median.astype(float))]


def error_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows whose case failed (status error)."""
    if "status" not in df.columns:
        return df.iloc[0:0]
    return df[has_value(df, "status", "error")]


def aggregate(rows: pd.DataFrame) -> dict:
    """Several rows of one case and mode (seeds, repeats) as one.

    The median is the median of the rows' medians (robust to one noisy job); the CI is
    the union of the rows' CIs (min of lows, max of highs), so it covers every row's
    interval; first_call_s and compile_s are medians too.
    """
    return {
        "median_s": get_column(rows, "median_s").median(),
        "ci95_low_s": get_column(rows, "ci95_low_s").min(),
        "ci95_high_s": get_column(rows, "ci95_high_s").max(),
        "first_call_s": get_column(rows, "first_call_s").median(),
        "compile_s": get_column(rows, "compile_s").median(),
        "n_rows": len(rows),
    }


def params_labels(df: pd.DataFrame) -> list[str]:
    """Each row's workload params as ``name=value, ...`` (missing params left out)."""
    cols = param_columns(df)
    return (
        [
            ", ".join(f"{c[len('param_') :]}={plain(v)}" for c, v in zip(cols, values) if not is_missing(v))
            for values in df[cols].itertuples(index=False)
        ]
        if cols
        else [""] * len(df)
    )


def join_jobs(calls: pd.DataFrame, df: pd.DataFrame) -> pd.DataFrame:
    """calls.csv rows with their job's dtype, static_argnums, knobs and params (matched on job_num and mode)."""
    extra = [c for c in ["dtype", STATIC_ARGNUMS, *KNOBS, *param_columns(df)] if c in df.columns]
    if not extra or "job_num" not in df.columns or "job_num" not in calls.columns:
        return calls.assign(**{c: None for c in extra})
    jobs = df[["job_num", "mode", *extra]].drop_duplicates(["job_num", "mode"])
    merged = calls.drop(columns=[c for c in extra if c in calls.columns]).merge(
        jobs.astype({"job_num": "object", "mode": "object"}),
        left_on=[calls["job_num"].astype("object"), calls["mode"].astype("object")],
        right_on=["job_num", "mode"],
        how="left",
        suffixes=("", "_job"),
    )
    return merged.drop(columns=[c for c in merged.columns if c.endswith("_job") or c.startswith("key_")])


def with_variant_columns(df: pd.DataFrame) -> pd.DataFrame:
    """df with static_argnums and the knob columns present (missing ones empty), so old CSVs group alike."""
    return df.assign(
        **{
            c: get_column(df, c).astype("object").where(get_column(df, c).notna(), None)
            for c in [STATIC_ARGNUMS, *KNOBS]
        }
    )


def sort_cases(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Rows by case keys, modes in MODE_ORDER; a job's variants first of all, in the order it declared them (the
    baseline first: the order they first appear in), not by name; a variant may change the workload's name."""
    if table.empty:
        return table.reset_index(drop=True)
    order = [k for k in keys if k in table.columns]
    rank = table["mode"].map(mode_rank) if "mode" in table.columns else 0
    table = table.assign(_rank=rank, _variant=0)
    if AB_VARIANT in order:
        names = text_column(table, AB_VARIANT)
        table["_variant"] = names.map({name: i for i, name in enumerate(dict.fromkeys(names))}).astype(int)
        order = ["_variant", *(k for k in order if k != AB_VARIANT)]
    table = table.sort_values(order + ["_rank"], kind="stable", na_position="last")
    return table.drop(columns=["_rank", "_variant"]).reset_index(drop=True)


def mode_rank(mode: object) -> int:
    """A mode's place in the report's order (eager, jit, aot, numpy, then others)."""
    return MODE_ORDER.index(mode) if mode in MODE_ORDER else len(MODE_ORDER)


def varying(df: pd.DataFrame, columns: Sequence[str]) -> list[str]:
    """The columns, of those given, whose value differs between the frame's rows (what tells its cases apart)."""
    return [c for c in columns if c in df.columns and df[c].nunique(dropna=False) > 1]


KNOB_SHORT = {"donate_argnums": "donate", "compiler_options": "options"}


def knob_text(knob: str, value: object) -> str:
    """A knob as a label names it: ``donate [0]``, ``options xla_x=1``, ``mesh data=2`` (``-`` when unset)."""
    return f"{KNOB_SHORT.get(knob, knob)} {cell_text(value) or '-'}"


def get_column(df: pd.DataFrame, name: str) -> pd.Series:
    """df[name], or a column of NaN when an older CSV lacks it."""
    if name in df.columns:
        return df[name]
    return pd.Series(np.nan, index=df.index, dtype=float)


def has_value(df: pd.DataFrame, column: str, value: str) -> pd.Series:
    """Which rows hold value in column (as text; False where the column is missing)."""
    return (text_column(df, column) == value).astype(bool)


def text_column(df: pd.DataFrame, column: str) -> pd.Series:
    """A column as strings, missing cells as ""."""
    return get_column(df, column).astype("string").fillna("")


def as_tuple(values: object) -> tuple:
    """A groupby key as a tuple (pandas gives a bare value for one key)."""
    return values if isinstance(values, tuple) else (values,)


def one_per_job(df: pd.DataFrame) -> pd.DataFrame:
    """One row per job (and env): the job-level columns (steal, replacements, host probe) repeat on its rows."""
    job = "_job" if "_job" in df.columns else "job_num"  # _job: jitexp-compare's folder key
    keys = [c for c in (job, "env") if c in df.columns]
    return df.drop_duplicates(keys) if keys else df


def replaced_processes(df: pd.DataFrame) -> int:
    """Processes replaced under steal: n_steal_replaced counted once per job (and env), not once per row."""
    return int(pd.to_numeric(get_column(one_per_job(df), "n_steal_replaced"), errors="coerce").fillna(0).sum())


# ---- a case across runs (jitexp-compare matches on these; jitexp-history draws a line per machine) ----------

# a run without device columns (before issue 25) matches on the others: matched_columns takes what both runs have
CASE = [
    "workload",
    "size",
    "dtype",
    "mode",
    "variant",
    "env",
    "static_argnums",
    "device_kind",
    "device_count",
    "distributed_processes",
    "mesh",
    "shardings",
]
# a machine, as jitexp-compare and jitexp-history tell one from another
MACHINE = ("hostname", "cpu_model", "device_kind")


def case_columns(rows: pd.DataFrame, ignore: Sequence[str] = ()) -> list[str]:
    """The identity columns a case is matched on: workload, params, size, dtype, mode, variant, statics, device(s)."""
    params = sorted(c for c in rows.columns if c.startswith("param_"))
    keys = CASE[:1] + params + CASE[1:]
    return [k for k in keys if k in rows.columns and k not in ignore]
