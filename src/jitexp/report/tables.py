"""Pure pandas tables for the report: speedup and break-even, scaling, errors, caveats, views for reading.

Nothing here reads or writes files or prints; every function takes a results frame (the
columns of ``jitexp.store.results.COLUMNS``) and returns a frame or a list of lines. The words for
single values (seconds, ratios, verdicts, params) are in formatting.py.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from jitexp.analysis.formatting import (
    EAGER,
    NUMPY,
    cell_text,
    format_seconds,
    format_value,
    is_missing,
    is_true,
    payoff_text,
    plain,
    ratio_cell,
    short_name,
    split_reasons,
    variant_label,
    verdict_words,
)
from jitexp.analysis.stats import break_even, verdict
from jitexp.config import MODES
from jitexp.labels import built_by, size_text

MODE_ORDER = list(MODES)
VARIANT = "static_argnums"
# a job's own jit settings (and the Python environment, with envs): a case of its own when they vary
KNOBS = ["static_argnames", "jit_fn", "donate_argnums", "donate_argnames", "compiler_options", "env"]
AB_VARIANT = (
    "variant"  # a job's `variants` name: a case key of its own (not a knob: calls.csv has a `variant` of its own)
)

SPEEDUP_COLUMNS = [
    "mode",
    VARIANT,
    "eager_median_s",
    "eager_ci95_low_s",
    "eager_ci95_high_s",
    "eager_first_call_s",
    "median_s",
    "ci95_low_s",
    "ci95_high_s",
    "first_call_s",
    "compile_s",
    "compile_overhead_s",
    "baseline_mode",
    "pairing",
    "speedup",
    "speedup_ci_low",
    "speedup_ci_high",
    "verdict",
    "break_even_calls",
    "ahead_until_calls",
    "n_eager_rows",
    "n_rows",
]
SCALING_COLUMNS = [
    "mode",
    VARIANT,
    "n_sizes",
    "size_min",
    "size_max",
    "min_size_median_s",
    "max_size_median_s",
    "growth_exponent",
    "first_call_growth_exponent",
]
MIN_GROWTH_SIZES = 3  # a growth exponent needs this many sizes
ERROR_COLUMNS = [
    "workload",
    "mode",
    "size",
    "dtype",
    VARIANT,
    "job_num",
    "error_phase",
    "error_type",
    "error_message",
    "hint",
]


def param_columns(df: pd.DataFrame) -> list[str]:
    """The workload-parameter columns (``param_<name>``), sorted."""
    return sorted(c for c in df.columns if c.startswith("param_"))


def case_keys(df: pd.DataFrame, *, size: bool = True) -> list[str]:
    """Columns that identify one measured case across modes: workload, variant, params, jit's knobs, size, dtype, device."""
    keys = ["workload", AB_VARIANT, *param_columns(df), *KNOBS, "size", "dtype", "platform", "device_kind"]
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


def speedup_table(df: pd.DataFrame) -> pd.DataFrame:
    """Each compiled mode against its baseline per case: speedup with a CI, verdict, compile overhead, break-even.

    Paired rows (modes measured together in one job) give their own figures: the ratio of
    medians with a CI from resampling whole processes, pairs kept together (pairing=paired).
    Compiled rows without a paired baseline are compared with the case's eager rows from other
    jobs (pairing=unpaired): a conservative CI from the two medians' CIs. Several rows of one
    case and mode (seeds) are combined as in `aggregate`.
    """
    ok = ok_rows(df)
    keys = case_keys(df)
    if ok.empty or "mode" not in ok.columns:
        return pd.DataFrame(columns=keys + SPEEDUP_COLUMNS)
    records = []
    for case_values, case in ok.groupby(keys, dropna=False, sort=False):
        ident = dict(zip(keys, as_tuple(case_values)))
        paired_rows = case[get_column(case, "speedup").notna()]
        for _, against in paired_rows.groupby(text_column(paired_rows, "baseline_mode"), sort=False):
            for (mode, variant), rows in _variants(against):
                records.append({**ident, "mode": mode, VARIANT: variant, **_paired_record(rows, case)})
        eager = case[has_value(case, "mode", EAGER)]
        unpaired = case[~has_value(case, "mode", EAGER) & ~case.index.isin(paired_rows.index)]
        if eager.empty:
            continue
        for (mode, variant), rows in _variants(unpaired):
            matching = eager[text_column(eager, VARIANT) == cell_text(variant)]
            base = aggregate(matching if not matching.empty else eager)
            records.append({**ident, "mode": mode, VARIANT: variant, **_unpaired_record(base, aggregate(rows))})
    table = pd.DataFrame.from_records(records, columns=keys + SPEEDUP_COLUMNS)
    return _sorted(table, keys)


def _paired_record(rows: pd.DataFrame, case: pd.DataFrame) -> dict:
    """Rows of one compiled mode that carry their job's paired figures, combined."""
    comp = aggregate(rows)
    baseline = str(rows["baseline_mode"].iloc[0])
    jobs = set(get_column(rows, "job_num"))
    base = aggregate(case[has_value(case, "mode", baseline) & get_column(case, "job_num").isin(jobs)])
    speedup, lo, hi = (get_column(rows, c) for c in ("speedup", "speedup_ci_low", "speedup_ci_high"))
    if len(rows) == 1:
        calls, ahead = float(rows["break_even_calls"].iloc[0]), float(rows["ahead_until_calls"].iloc[0])
    else:
        calls, ahead = break_even(base["first_call_s"], base["median_s"], comp["first_call_s"], comp["median_s"])
    return {
        **_sides(base, comp),
        "baseline_mode": baseline,
        "pairing": "paired",
        "speedup": speedup.median(),
        "speedup_ci_low": lo.min(),
        "speedup_ci_high": hi.max(),
        "verdict": verdict(lo.min(), hi.max()),
        "break_even_calls": calls,
        "ahead_until_calls": ahead,
        "n_eager_rows": base["n_rows"],
        "n_rows": comp["n_rows"],
    }


def _unpaired_record(base: dict, comp: dict) -> dict:
    lo = _ratio(base["ci95_low_s"], comp["ci95_high_s"])
    hi = _ratio(base["ci95_high_s"], comp["ci95_low_s"])
    calls, ahead = break_even(base["first_call_s"], base["median_s"], comp["first_call_s"], comp["median_s"])
    return {
        **_sides(base, comp),
        "baseline_mode": EAGER,
        "pairing": "unpaired",
        "speedup": _ratio(base["median_s"], comp["median_s"]),
        "speedup_ci_low": lo,
        "speedup_ci_high": hi,
        "verdict": verdict(lo, hi) if not (is_missing(lo) or is_missing(hi)) else None,
        "break_even_calls": calls,
        "ahead_until_calls": ahead,
        "n_eager_rows": base["n_rows"],
        "n_rows": comp["n_rows"],
    }


def _sides(base: dict, comp: dict) -> dict:
    return {
        "eager_median_s": base["median_s"],
        "eager_ci95_low_s": base["ci95_low_s"],
        "eager_ci95_high_s": base["ci95_high_s"],
        "eager_first_call_s": base["first_call_s"],
        **{k: comp[k] for k in ("median_s", "ci95_low_s", "ci95_high_s", "first_call_s", "compile_s")},
        "compile_overhead_s": comp["first_call_s"] - comp["median_s"],
    }


AB_COLUMNS = [
    "variant",
    "ab_baseline",
    "mode",
    "metric",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "p_value",
    "verdict",
    "n_pairs",
]


def ab_table(df: pd.DataFrame) -> pd.DataFrame:
    """Each variant against the job's baseline variant, per mode and metric (steady, first_call, compile):
    NEW/BASE time ratio with its CI, p and verdict, from the rows' ab_* columns; empty without variants."""
    keys = [k for k in case_keys(df) if k not in (AB_VARIANT, "workload")]
    columns = ["job_num", "workload", *keys, *AB_COLUMNS]
    rows = df[text_column(df, "ab_baseline") != ""] if "ab_baseline" in df.columns else df.iloc[0:0]
    records = []
    for _, row in rows.iterrows():
        for metric in ("steady", "first_call", "compile"):
            if is_missing(row.get(f"ab_{metric}_ratio")):
                continue
            records.append(
                {
                    **{k: row.get(k) for k in ["job_num", "workload", *keys, "variant", "ab_baseline", "mode"]},
                    "metric": metric,
                    **{
                        part: row.get(f"ab_{metric}_{part}")
                        for part in ("ratio", "ratio_ci_low", "ratio_ci_high", "p_value", "verdict", "n_pairs")
                    },
                }
            )
    return pd.DataFrame.from_records(records, columns=columns)


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
        VARIANT,
        "size",
        "median_s",
        "ci95_low_s",
        "ci95_high_s",
        "first_call_s",
        "compile_s",
        "n_rows",
    ]
    if ok.empty or "size" not in ok.columns:
        return pd.DataFrame(columns=columns)
    ok = ok.assign(mode=get_column(ok, "mode"), static_argnums=get_column(ok, VARIANT))
    records = []
    group = keys + ["mode", VARIANT, "size"]
    for values, rows in ok.groupby(group, dropna=False, sort=False):
        records.append({**dict(zip(group, as_tuple(values))), **aggregate(rows)})
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
        records.append(
            {
                **dict(zip(group, as_tuple(values))),
                "n_sizes": int(line["size"].nunique()),
                "size_min": line["size"].min(),
                "size_max": line["size"].max(),
                "min_size_median_s": line["median_s"].iloc[0],
                "max_size_median_s": line["median_s"].iloc[-1],
                "growth_exponent": growth_exponent(line["size"], line["median_s"]),
                "first_call_growth_exponent": growth_exponent(line["size"], line["first_call_s"]),
            }
        )
    return _sorted(pd.DataFrame.from_records(records, columns=keys + SCALING_COLUMNS), keys)


def errors_table(df: pd.DataFrame) -> pd.DataFrame:
    """Every failed case with its phase, exception class, message and hint."""
    columns = ERROR_COLUMNS[:4] + param_columns(df) + ERROR_COLUMNS[4:]
    errors = error_rows(df)
    return errors.reindex(columns=columns).reset_index(drop=True)


def rows_table(df: pd.DataFrame) -> pd.DataFrame:
    """Every row, compact: identity (varying columns only), status, key timings, error class, notes."""
    always = ["workload", "mode", "size"]
    varying = [
        c
        for c in ("dtype", VARIANT, AB_VARIANT, "env", "device_kind", "seed")
        if c in df.columns and df[c].nunique(dropna=False) > 1
    ]
    table = df.reindex(columns=always + varying).copy()
    table["size"] = size_cells(df)
    table.insert(3, "params", params_labels(df))
    for col in ("status", "median_s", "first_call_s", "compile_s"):
        table[col] = get_column(df, col)
    errors = [short_name(v) for v in get_column(df, "error_type")]
    if any(errors):
        table["error"] = errors
    notes = [_notes(row, short=True) for _, row in df.iterrows()]
    if any(notes):
        table["notes"] = notes
    if not table["params"].astype(bool).any():
        table = table.drop(columns="params")
    return table.reset_index(drop=True)


def size_cells(df: pd.DataFrame) -> pd.Series:
    """The `size` column as a table shows it: the size where it built the inputs (or the rows predate the
    `inputs` column), else what did: the given arguments' `input_shapes`, or `setup` (see labels.py)."""
    if "inputs" not in df.columns:
        return get_column(df, "size")
    return pd.Series([_size_cell(row) for _, row in df.iterrows()], index=df.index, dtype=object)


def _size_cell(row: pd.Series) -> object:
    what = built_by(row)
    return row.get("size") if what is None else what or "setup"


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


def caveats(df: pd.DataFrame) -> list[str]:
    """One line per row whose numbers deserve doubt: unstable, recompiled while timed, or not matching eager."""
    lines = []
    for (_, row), params in zip(df.iterrows(), params_labels(df)):
        note = _notes(row)
        if note:
            label = str(row.get("workload")) + (f" ({params})" if params else "")
            label += " ".join(["", str(row.get("mode")), size_text(row, " ")]).rstrip()
            if not is_missing(row.get(VARIANT)):
                label += f" static_argnums={row.get(VARIANT)}"
            lines.append(f"{label}: {note}")
    return lines


def _notes(row: pd.Series, short: bool = False) -> str:
    notes = []
    if is_true(row.get("unstable")):
        reason = row.get("unstable_reason")
        notes.append(f"unstable ({reason})" if not (short or is_missing(reason)) else "unstable")
        steal = row.get("steal_median")
        if short and "CPU steal" in str(reason) and not is_missing(steal):
            notes.append(f"CPU steal {steal:.0%}")  # beside the figure it moved (the reason says so in full)
    compiles = row.get("compiles_during_timing")
    if not is_missing(compiles) and compiles > 0:
        notes.append(f"{int(compiles)} compile(s) while timed")
    if not is_missing(row.get("matches_eager")) and not bool(row.get("matches_eager")):
        notes.append("result differs from eager")
    elif cell_text(row.get("check_vs_eager")).startswith("cannot compare"):
        notes.append("result not comparable with eager")
    return "; ".join(notes)


# ---- why, memory, disk cache, retrace probe --------------------------------------------

ATTRIBUTION_COLUMNS = [
    "mode",
    VARIANT,
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
MEMORY_COLUMNS = [
    "mode",
    VARIANT,
    "peak_rss_growth_bytes",
    "device_peak_bytes",
    "argument_size_bytes",
    "output_size_bytes",
    "temp_size_bytes",
    "alias_size_bytes",
    "peak_memory_bytes",
    "donation",
]
CACHE_COLUMNS = [
    "mode",
    VARIANT,
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
    VARIANT,
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
_MEMORY_VALUES = [
    "peak_rss_growth_bytes",
    "device_peak_bytes",
    "argument_size_bytes",
    "output_size_bytes",
    "temp_size_bytes",
    "alias_size_bytes",
    "peak_memory_bytes",
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
    return _sorted(_identified(compiled, df, columns), case_keys(df))


def memory_table(df: pd.DataFrame) -> pd.DataFrame:
    """Memory per row: worker RSS growth, device allocator peak, XLA's memory analysis, donation."""
    ok = ok_rows(df)
    present = [c for c in _MEMORY_VALUES if c in ok.columns]
    if ok.empty or not present:
        return pd.DataFrame(columns=case_keys(df) + MEMORY_COLUMNS)
    rows = ok[ok[present].notna().any(axis=1)]
    return _sorted(_identified(rows, df, MEMORY_COLUMNS), case_keys(df))


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
    return _sorted(_identified(rows, df, CACHE_COLUMNS), case_keys(df))


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
        label=[variant_label(v, s, params) for v, s in zip(text_column(seq, "variant"), get_column(seq, VARIANT))]
    )
    return seq.reindex(columns=SEQUENCE_COLUMNS).reset_index(drop=True)


def join_jobs(calls: pd.DataFrame, df: pd.DataFrame) -> pd.DataFrame:
    """calls.csv rows with their job's dtype, static_argnums, knobs and params (matched on job_num and mode)."""
    extra = [c for c in ["dtype", VARIANT, *KNOBS, *param_columns(df)] if c in df.columns]
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


def caveat_summary(df: pd.DataFrame) -> list[str]:
    """Caveats counted by kind, not repeated per row.

    ``unstable: 7 of 12 rows (waited to run: 7, samples within a process spread: 2)``;
    the rows and their full reasons are in results.csv (unstable, unstable_reason).
    """
    n = len(df)
    lines = []
    unstable = df[get_column(df, "unstable").map(is_true).astype(bool)] if n else df
    if len(unstable):
        kinds: dict[str, int] = {}
        for reason in get_column(unstable, "unstable_reason"):
            for kind in {reason_kind(r) for r in split_reasons(reason)}:
                kinds[kind] = kinds.get(kind, 0) + 1
        detail = ", ".join(f"{k}: {v}" for k, v in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))
        lines.append(
            f"unstable: {len(unstable)} of {n} rows"
            + (f" ({detail})" if detail else "")
            + "; reasons per row in results.csv (unstable_reason)"
            + _examples(unstable, total=n)
        )
    compiles = pd.to_numeric(get_column(df, "compiles_during_timing"), errors="coerce").fillna(0)
    if (compiles > 0).any():
        lines.append(
            f"compiled while timed: {int((compiles > 0).sum())} of {n} rows "
            f"({int(compiles.sum())} compile(s)): their steady state was not steady" + _examples(df[compiles > 0])
        )
    lines += steal_caveats(df)
    for column, text in (("matches_eager", "differs from eager"), ("matches_numpy", "differs from NumPy")):
        values = get_column(df, column)
        bad = values.notna() & ~values.map(is_true).astype(bool)
        if bad.any():
            lines.append(f"result {text}: {int(bad.sum())} of {n} rows" + _examples(df[bad]))
    for against in ("eager", "NumPy"):  # no figure at all: the check says why in check_vs_<against>
        uncomparable = get_column(df, f"check_vs_{against.lower()}").map(cell_text).str.startswith("cannot compare")
        if uncomparable.any():
            lines.append(
                f"result not comparable with {against}: {int(uncomparable.sum())} of {n} rows "
                f"(check_vs_{against.lower()} says why)" + _examples(df[uncomparable])
            )
    return lines


# A host probe's job medians further apart than this (max/min - 1) say the host moved between jobs:
# pyperf's 10% limit on spread, as the rows' own instability test uses (rows.MAX_SPREAD).
HOST_MOVED = 0.10


def one_per_job(df: pd.DataFrame) -> pd.DataFrame:
    """One row per job (and env): the job-level columns (steal, replacements, host probe) repeat on its rows."""
    job = "_job" if "_job" in df.columns else "job_num"  # _job: jitexp-compare's folder key
    keys = [c for c in (job, "env") if c in df.columns]
    return df.drop_duplicates(keys) if keys else df


def replaced_processes(df: pd.DataFrame) -> int:
    """Processes replaced under steal: n_steal_replaced counted once per job (and env), not once per row."""
    return int(pd.to_numeric(get_column(one_per_job(df), "n_steal_replaced"), errors="coerce").fillna(0).sum())


def steal_caveats(df: pd.DataFrame) -> list[str]:
    """CPU steal over the rows and the host probe's spread across jobs, each only when there is something to
    act on: a row above timing.max_steal or a process replaced under steal; a probe that moved beyond HOST_MOVED."""
    lines = []
    steal = pd.to_numeric(get_column(df, "steal_median"), errors="coerce")
    reasons = get_column(df, "unstable_reason").astype("string").fillna("")
    moved = reasons.str.contains("CPU steal").astype(bool)  # above the job's timing.max_steal
    replaced = replaced_processes(df)
    if steal.notna().any() and (moved.any() or replaced):
        worst = pd.to_numeric(get_column(df, "steal_max"), errors="coerce").max()
        lines.append(
            f"CPU steal (hypervisor): median process {steal.min():.1%}..{steal.max():.1%} over {len(df)} rows, "
            f"worst process {worst:.1%}; {int(moved.sum())} row(s) above timing.max_steal"
            + (_examples(df[moved]) if moved.any() else "")
            + (f"; {replaced} process(es) replaced under steal" if replaced else "")
        )
    spreads = []
    jobs = one_per_job(df)  # one probe per job's (env's) workers
    widest = 1.0
    for col in [c for c in df.columns if c.startswith("host_probe_")]:
        values = pd.to_numeric(jobs[col], errors="coerce").dropna()
        if len(values) > 1 and values.min() > 0:
            name = col.removeprefix("host_probe_").removesuffix("_s")
            widest = max(widest, values.max() / values.min())
            spreads.append(
                f"{name} {format_seconds(values.min())}..{format_seconds(values.max())} "
                f"({values.max() / values.min():.2f}x)"
            )
    if spreads and widest > 1 + HOST_MOVED:
        lines.append(
            f"host probe across {len(jobs)} jobs (the same kernels every time: the host moved between jobs): "
            + ", ".join(spreads)
        )
    return lines


def reason_kind(reason: str) -> str:
    """An instability reason without its numbers or details: ``process medians spread 14% (robust cv; limit 10%)``
    -> ``process medians spread``, ``waited to run 12% of the time (...)`` -> ``waited to run``."""
    text = reason.strip().split(" (", 1)[0]
    text = re.sub(r"-?\d+(\.\d+)?%?( of the time)?", "", text)
    return re.sub(r"\s+", " ", text).strip()


def _examples(rows: pd.DataFrame, limit: int = 3, total: int | None = None) -> str:
    if rows.empty or len(rows) > limit or len(rows) == total:
        return ""
    labels = []
    for (_, row), params in zip(rows.iterrows(), params_labels(rows)):
        labels.append(
            f"{row.get('workload')}{' (' + params + ')' if params else ''} {row.get('mode')} "
            f"{size_text(row, ' ')}".rstrip()
        )
    return ": " + "; ".join(labels)


def compact_view(
    table: pd.DataFrame, values: Sequence[str], always: Sequence[str] = ("workload", "size", "mode")
) -> pd.DataFrame:
    """A table trimmed for reading: identity columns that vary (always the given ones), params as one
    ``params`` column, then the value columns that hold anything."""
    idents = ["workload", AB_VARIANT, "params", "size", "dtype", "device_kind", "mode", VARIANT, *KNOBS]
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


ATTRIBUTION_VIEW = [
    "speedup",
    "explanation",
    "eager_ops",
    "xla_kernels",
    "xla_fusions",
    "eager_bytes",
    "bytes_accessed",
    "traffic_cut",
    "arithmetic_intensity",
    "op_dispatch_s",
]
ATTRIBUTION_TERMINAL = [
    "speedup",
    "explanation",
    "eager_ops",
    "xla_kernels",
    "eager_bytes",
    "bytes_accessed",
    "traffic_cut",
]
MEMORY_VIEW = [
    "peak_rss_growth_bytes",
    "device_peak_bytes",
    "argument_size_bytes",
    "output_size_bytes",
    "temp_size_bytes",
    "alias_size_bytes",
    "donation",
]
CACHE_VIEW = [
    "cache_hit",
    "cache_cold_first_call_s",
    "cache_warm_first_call_s",
    "first_call_saved_s",
    "cache_cold_compile_s",
    "cache_warm_compile_s",
    "cache_warm_trace_s",
    "cache_warm_lower_s",
]
SEQUENCE_VIEW = [
    "job_num",
    "workload",
    "mode",
    VARIANT,
    "call",
    "label",
    "status",
    "call_s",
    "compiled",
    "compile_s",
    "miss_reason",
    "error_type",
]


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
    for col in [AB_VARIANT, VARIANT, *KNOBS]:
        if col in speedup.columns and speedup[col].nunique(dropna=False) > 1:
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


# ---- helpers ---------------------------------------------------------------------------


def _variants(compiled: pd.DataFrame) -> list[tuple[tuple, pd.DataFrame]]:
    """Compiled rows split by (mode, static_argnums), modes in jit, aot, other order (jit's knobs are case keys)."""
    frame = compiled.assign(static_argnums=get_column(compiled, VARIANT))
    groups = list(frame.groupby(["mode", VARIANT], dropna=False, sort=False))
    return sorted(groups, key=lambda g: (mode_rank(g[0][0]), cell_text(g[0][1])))


def with_variant_columns(df: pd.DataFrame) -> pd.DataFrame:
    """df with static_argnums and the knob columns present (missing ones empty), so old CSVs group alike."""
    return df.assign(
        **{c: get_column(df, c).astype("object").where(get_column(df, c).notna(), None) for c in [VARIANT, *KNOBS]}
    )


def _sorted(table: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
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


def _ratio(num: float, den: float) -> float:
    if is_missing(num) or is_missing(den) or den <= 0:
        return math.nan
    return float(num) / float(den)


def as_tuple(values: object) -> tuple:
    """A groupby key as a tuple (pandas gives a bare value for one key)."""
    return values if isinstance(values, tuple) else (values,)
