"""The results tables: each compiled mode's speedup and break-even, the A/B variants, scaling, errors.

Nothing here reads or writes files or prints; every function takes a results frame (the
columns of ``jitexp.store.schema.COLUMNS``) and returns a frame. The words for single values
(seconds, ratios, verdicts, params) are in analysis/formatting/, the views for reading in views.py.
"""

from __future__ import annotations

import math

import pandas as pd

from jitexp.analysis.formatting.values import EAGER, cell_text, is_missing
from jitexp.analysis.speedups import NOT_WORK_VERDICTS
from jitexp.analysis.stats import break_even, settled_break_even, verdict
from jitexp.report.shared.cases import (
    AB_VARIANT,
    STATIC_ARGNUMS,
    aggregate,
    as_tuple,
    case_keys,
    error_rows,
    get_column,
    has_value,
    mode_rank,
    ok_rows,
    param_columns,
    sort_cases,
    text_column,
)
from jitexp.report.shared.growth import growth_exponent, scaling_points
from jitexp.store.schema import SPEEDUP_FIGURES

SPEEDUP_COLUMNS = [
    "mode",
    STATIC_ARGNUMS,
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
    *SPEEDUP_FIGURES,
    "n_eager_rows",
    "n_rows",
]
SCALING_COLUMNS = [
    "mode",
    STATIC_ARGNUMS,
    "n_sizes",
    "size_min",
    "size_max",
    "min_size_median_s",
    "max_size_median_s",
    "growth_exponent",
    "first_call_growth_exponent",
]
ERROR_COLUMNS = [
    "workload",
    "mode",
    "size",
    "dtype",
    STATIC_ARGNUMS,
    "job_num",
    "error_phase",
    "error_type",
    "error_message",
    "hint",
]


# the columns of a results frame that speedup_table reads besides the case keys (aggregate's among them)
SPEEDUP_READS = {
    *("mode", STATIC_ARGNUMS, "job_num", "baseline_mode", "verdict", "break_even_calls", "ahead_until_calls"),
    *("speedup", "speedup_ci_low", "speedup_ci_high"),
    *("median_s", "ci95_low_s", "ci95_high_s", "first_call_s", "compile_s"),
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
    ok = ok[[c for c in ok.columns if c in keys or c in SPEEDUP_READS]]  # each group and filter copies every column
    records = []
    for case_values, case in ok.groupby(keys, dropna=False, sort=False):
        ident = dict(zip(keys, as_tuple(case_values)))
        paired_rows = case[get_column(case, "speedup").notna()]
        for _, against in paired_rows.groupby(text_column(paired_rows, "baseline_mode"), sort=False):
            for (mode, variant), rows in _variants(against):
                records.append({**ident, "mode": mode, STATIC_ARGNUMS: variant, **_paired_record(rows, case)})
        eager = case[has_value(case, "mode", EAGER)]
        unpaired = case[~has_value(case, "mode", EAGER) & ~case.index.isin(paired_rows.index)]
        if eager.empty:
            continue
        for (mode, variant), rows in _variants(unpaired):
            matching = eager[text_column(eager, STATIC_ARGNUMS) == cell_text(variant)]
            base = aggregate(matching if not matching.empty else eager)
            records.append({**ident, "mode": mode, STATIC_ARGNUMS: variant, **_unpaired_record(base, aggregate(rows))})
    table = pd.DataFrame.from_records(records, columns=keys + SPEEDUP_COLUMNS)
    return sort_cases(table, keys)


def _paired_record(rows: pd.DataFrame, case: pd.DataFrame) -> dict:
    """Rows of one compiled mode that carry their job's paired figures, combined."""
    comp = aggregate(rows)
    baseline = str(rows["baseline_mode"].iloc[0])
    jobs = set(get_column(rows, "job_num"))
    base = aggregate(case[has_value(case, "mode", baseline) & get_column(case, "job_num").isin(jobs)])
    speedup, lo, hi = (get_column(rows, c) for c in ("speedup", "speedup_ci_low", "speedup_ci_high"))
    not_work = [v for v in get_column(rows, "verdict").map(cell_text) if v in NOT_WORK_VERDICTS]
    verdict_ = not_work[0] if not_work else verdict(lo.min(), hi.max())  # a time that is not the work: no verdict
    if len(rows) == 1:
        # a file without the columns (hand-made, or older): NaN, as get_column reads a missing column
        calls = float(get_column(rows, "break_even_calls").iloc[0])
        ahead = float(get_column(rows, "ahead_until_calls").iloc[0])
    else:
        calls, ahead = break_even(base["first_call_s"], base["median_s"], comp["first_call_s"], comp["median_s"])
    calls, ahead = settled_break_even(verdict_, calls, ahead)
    return {
        **_sides(base, comp),
        "baseline_mode": baseline,
        "pairing": "paired",
        "speedup": speedup.median(),
        "speedup_ci_low": lo.min(),
        "speedup_ci_high": hi.max(),
        "verdict": verdict_,
        "break_even_calls": calls,
        "ahead_until_calls": ahead,
        "n_eager_rows": base["n_rows"],
        "n_rows": comp["n_rows"],
    }


def _unpaired_record(base: dict, comp: dict) -> dict:
    lo = _ratio(base["ci95_low_s"], comp["ci95_high_s"])
    hi = _ratio(base["ci95_high_s"], comp["ci95_low_s"])
    verdict_ = verdict(lo, hi) if not (is_missing(lo) or is_missing(hi)) else None
    calls, ahead = settled_break_even(
        verdict_, *break_even(base["first_call_s"], base["median_s"], comp["first_call_s"], comp["median_s"])
    )
    return {
        **_sides(base, comp),
        "baseline_mode": EAGER,
        "pairing": "unpaired",
        "speedup": _ratio(base["median_s"], comp["median_s"]),
        "speedup_ci_low": lo,
        "speedup_ci_high": hi,
        "verdict": verdict_,
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


def scaling_table(df: pd.DataFrame, points: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per (workload, params, dtype, device, mode, variant) with >= 2 sizes: the growth exponent of median_s
    (`points`: scaling_points(df), where the caller has it already)."""
    points = scaling_points(df) if points is None else points
    keys = case_keys(df, size=False)
    if points.empty:
        return pd.DataFrame(columns=keys + SCALING_COLUMNS)
    records = []
    group = keys + ["mode", STATIC_ARGNUMS]
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
    return sort_cases(pd.DataFrame.from_records(records, columns=keys + SCALING_COLUMNS), keys)


def errors_table(df: pd.DataFrame) -> pd.DataFrame:
    """Every failed case with its phase, exception class, message and hint."""
    columns = ERROR_COLUMNS[:4] + param_columns(df) + ERROR_COLUMNS[4:]
    errors = error_rows(df)
    return errors.reindex(columns=columns).reset_index(drop=True)


def _variants(compiled: pd.DataFrame) -> list[tuple[tuple, pd.DataFrame]]:
    """Compiled rows split by (mode, static_argnums), modes in jit, aot, other order (jit's knobs are case keys)."""
    frame = compiled.assign(static_argnums=get_column(compiled, STATIC_ARGNUMS))
    groups = list(frame.groupby(["mode", STATIC_ARGNUMS], dropna=False, sort=False))
    return sorted(groups, key=lambda g: (mode_rank(g[0][0]), cell_text(g[0][1])))


def _ratio(num: float, den: float) -> float:
    if is_missing(num) or is_missing(den) or den <= 0:
        return math.nan
    return float(num) / float(den)
