"""Which rows make one report figure, and its x groups (cases) and modes in the report's order."""

from __future__ import annotations

import pandas as pd

from jitexp.analysis.formatting.phrases import is_static, params_text
from jitexp.analysis.formatting.values import cell_text, is_missing, plain
from jitexp.labels import size_text
from jitexp.report.shared import cases


def figure_groups(df: pd.DataFrame):
    """(identity, rows) per figure: workload, dtype and device; params, sizes and variants go inside."""
    keys = [k for k in ("workload", "dtype", "platform", "device_kind") if k in df.columns]
    if df.empty or not keys:
        return
    for values, rows in df.groupby(keys, dropna=False, sort=False):
        yield dict(zip(keys, cases.as_tuple(values))), rows


def case_groups(rows: pd.DataFrame, shared: dict | None = None) -> list[tuple[str, pd.DataFrame]]:
    """The x groups of a figure: one per (variant, params, static_argnums, knobs, size), labelled on two lines.

    The label names only what varies in the figure: ``n=2 (static)`` / ``donate [0]`` / ``mesh data=2`` and
    ``size 50`` (or what built the inputs where size did not: ``f32[128,32] +params``; nothing for a setup
    without size); params every group shares (shared, default shared_params(rows)) go in the title instead.
    """
    rows = cases.with_variant_columns(rows)
    keys = _case_columns(rows)
    shared = shared_params(rows) if shared is None else shared
    varying = {k for k in keys if rows[k].astype("string").nunique(dropna=False) > 1}
    static_varies = cases.STATIC_ARGNUMS in varying
    groups = []
    for values, case in rows.groupby(keys, dropna=False, sort=False):
        ident = dict(zip(keys, cases.as_tuple(values)))
        parts = [cell_text(ident[cases.AB_VARIANT])] if cases.AB_VARIANT in varying else []
        static_mark = static_varies or is_static(ident.get(cases.STATIC_ARGNUMS))
        text = params_text({k: v for k, v in ident.items() if k not in shared}, static_mark=static_mark)
        if text:
            parts.append(text)
        elif static_varies:
            parts.append(f"static_argnums={ident.get(cases.STATIC_ARGNUMS)}")
        parts += [
            cases.knob_text(k, ident.get(k)) for k in ("donate_argnums", "compiler_options", "mesh") if k in varying
        ]
        parts += _count_parts(ident, varying)
        if "size" in ident and size_text(ident, " "):
            parts.append(size_text(ident, " "))
        sort_key = tuple(
            (cell_text(ident.get(k)).replace("[]", "") if k != "size" else float(ident["size"]))
            if not is_missing(ident.get(k))
            else ""
            for k in keys
            if k != cases.AB_VARIANT  # variants keep the job's order, the baseline first
        )
        groups.append((sort_key, "\n".join(parts), case))
    try:
        groups.sort(key=lambda g: g[0])
    except TypeError:
        pass
    return [(label, case) for _, label, case in groups]


def shared_params(rows: pd.DataFrame) -> dict:
    """The params with one value in every row of a figure of several x groups (none for one group: its label
    names them)."""
    rows = cases.with_variant_columns(rows)
    keys = _case_columns(rows)
    if rows.empty or not keys or rows.groupby(keys, dropna=False).ngroups < 2:
        return {}
    return {
        c: rows[c].iloc[0]
        for c in cases.param_columns(rows)
        if rows[c].astype("string").nunique(dropna=False) == 1 and not is_missing(rows[c].iloc[0])
    }


def shared_text(rows: pd.DataFrame, shared: dict | None = None) -> str:
    """The shared params as the title shows them: ``depth=2, width=256 (static)`` (marked when static_argnums
    is the same in every row and no label names a param)."""
    shared = shared_params(rows) if shared is None else shared
    static = cases.get_column(rows, cases.STATIC_ARGNUMS).astype("string")
    named = [c for c in cases.param_columns(rows) if rows[c].notna().any()]
    if shared and set(named) <= set(shared) and static.nunique(dropna=False) == 1:
        shared = {**shared, cases.STATIC_ARGNUMS: static.iloc[0]}
    return params_text(shared, static_mark=True) if shared else ""


def _case_columns(rows: pd.DataFrame) -> list[str]:
    keys = [
        cases.AB_VARIANT,
        *cases.param_columns(rows),
        cases.STATIC_ARGNUMS,
        *cases.KNOBS,
        "device_count",
        "distributed_processes",
        "size",
        "inputs",
        "input_shapes",
    ]
    return [k for k in keys if k in rows.columns]


def _count_parts(ident: dict, varying: set[str]) -> list[str]:
    """``4 devices`` / ``2 processes`` where the count varies and no mesh label already says it."""
    parts = []
    for column, noun in (("device_count", "device"), ("distributed_processes", "process")):
        value = ident.get(column)
        if column in varying and "mesh" not in varying and not is_missing(value):
            count = plain(value)
            parts.append(f"{count} {noun}" + ("" if str(count) == "1" else ("es" if noun == "process" else "s")))
    return parts


def modes(rows: pd.DataFrame) -> list[str]:
    """The modes in rows, in the report's order."""
    modes = [str(m) for m in pd.unique(rows["mode"].dropna())] if "mode" in rows.columns else []
    return sorted(modes, key=lambda m: (cases.mode_rank(m), m))
