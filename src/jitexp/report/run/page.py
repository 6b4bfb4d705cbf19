"""report/index.html: the verdicts, every picture and the environment on one self-contained page.

The pictures are embedded as base64 data URIs and the style is inline, so the file can be
mailed or attached to a CI run on its own; nothing is fetched and no script runs.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from jitexp.analysis.formatting.phrases import params_text, payoff_text, ratio_cell, speedup_as_time_ratio
from jitexp.analysis.formatting.tables import render
from jitexp.analysis.formatting.values import cell_text, format_seconds, is_missing, plain, short_name
from jitexp.report.run.profile_view import profile_html
from jitexp.report.run.tables import ab_table
from jitexp.report.run.views import ab_view
from jitexp.report.shared.cases import KNOBS, STATIC_ARGNUMS, case_keys, error_rows, get_column, ok_rows

PAGE = "index.html"
CHANGE = "change (95% CI)"
VERDICT_COLUMNS = [
    "case",
    "modes",
    "baseline median",
    "mode median",
    "mode compile",
    CHANGE,
    "verdict",
    "pays off",
    "why",
]
CAPTIONS = {
    "time": "median time per call of each mode with its 95% CI; hollow: CI wider than its target, "
    "diamond: unstable, x: failed",
    "speedup": "each compiled mode's speedup over its baseline with the 95% CI, verdict and pay-off",
    "coldstart": "the cold first call in a fresh process, split into trace, lower, compile and execute",
    "scaling": "median time over size (log-log); the growth exponent and its dashed fit from three sizes on",
    "compile": "compile time (circles) and cold first call (squares) over size",
    "devices": "time per call and speedup against one device over the device counts a sweep measured; dotted: "
    "the ideal (speedup = devices). CPU devices share the machine's cores",
    "roofline": "achieved FLOP/s against arithmetic intensity (flops / bytes_accessed), by wall time (circles) and "
    "by device time where measured (triangles; the line between them is the host's share), under the device's "
    "measured ceilings (dotted: the matmul and copy probes' peaks)",
    "calls": "per-call latency of the first calls and of the retrace probe; red ring: the call compiled",
}
STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; padding: 0 1.5em; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.faster { color: #1a7f37; font-weight: 600; } td.slower { color: #b42318; font-weight: 600; }
figure { margin: 1em 0 2em; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #444; }
"""


def verdict_table(df: pd.DataFrame, speedup: pd.DataFrame) -> pd.DataFrame:
    """One row per compared mode of each case (speedup.csv), and one per case without a comparison
    saying what it has instead (a failure, or one mode only)."""
    keys = case_keys(df)
    why = _explanations(df, keys)
    show_static = (
        STATIC_ARGNUMS in speedup.columns and speedup[STATIC_ARGNUMS].astype("string").nunique(dropna=False) > 1
    )
    records = []
    for _, row in speedup.iterrows():
        records.append(
            {
                "_key": _key(row, keys),
                "case": _case(row, keys),
                "modes": f"{row['mode']} vs {row['baseline_mode']}" + (_variant(row) if show_static else ""),
                "baseline median": format_seconds(row.get("eager_median_s")),
                "mode median": format_seconds(row.get("median_s")),
                "mode compile": format_seconds(row.get("compile_s")),
                CHANGE: _speedup_cell(row),
                "verdict": cell_text(row["verdict"]) or "-",
                "pays off": payoff_text(
                    row["verdict"], row["break_even_calls"], row["ahead_until_calls"], row["baseline_mode"]
                ),
                "why": why.get((_key(row, keys), row["mode"], cell_text(row.get(STATIC_ARGNUMS))), ""),
            }
        )
    compared = {r["_key"] for r in records}
    for _, case in df.groupby(keys, dropna=False, sort=False) if keys else ():
        first = case.iloc[0]
        if _key(first, keys) in compared:
            continue
        failed = error_rows(case)
        modes = ", ".join(dict.fromkeys(str(m) for m in get_column(case, "mode").dropna()))
        verdict = (
            "; ".join(f"{r['mode']} failed: {short_name(r.get('error_type'))}" for _, r in failed.iterrows())
            if len(failed)
            else "nothing to compare"
        )
        hints = [cell_text(h) for h in get_column(failed, "hint") if cell_text(h)]
        records.append(
            {
                "_key": _key(first, keys),
                "case": _case(first, keys),
                "modes": modes,
                **dict.fromkeys(VERDICT_COLUMNS[2:6], "-"),
                "verdict": verdict,
                "pays off": "-",
                "why": hints[0] if hints else "",
            }
        )
    return pd.DataFrame.from_records(records, columns=["_key", *VERDICT_COLUMNS]).drop(columns="_key")


def _speedup_cell(row: pd.Series) -> str:
    """A speedup (baseline over mode time) as `ratio_cell` words: ``2.5x faster (95% CI 2.2x-2.8x)``."""
    return ratio_cell(*speedup_as_time_ratio(row.get("speedup"), row.get("speedup_ci_low"), row.get("speedup_ci_high")))


def page_html(
    df: pd.DataFrame,
    speedup: pd.DataFrame,
    images: Sequence[Path],
    environment: pd.DataFrame,
    *,
    title: str,
    headline: str,
    caveats: Sequence[str] = (),
    profile: pd.DataFrame | None = None,
    ab: pd.DataFrame | None = None,
) -> str:
    """The whole page as one string: verdict table, caveats, every picture with a caption, the profile, environment
    (`ab`: ab_table(df), where the caller has it already)."""
    parts = [
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>',
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        f"<p>{_e(headline)}.</p>",
        "<h2>Verdicts</h2>",
        _table_html(verdict_table(df, speedup), verdict_column="verdict"),
    ]
    ab = ab_table(df) if ab is None else ab
    if not ab.empty:
        parts += [
            "<h2>Variants against the baseline</h2>",
            "<p>Each variant (or env) against the baseline, its time ratio paired per process (variants) or process "
            "pair (envs) and read one way round: N&times; faster or slower with the 95% CI in the same direction; "
            "Wilcoxon p.</p>",
            _table_html(ab_view(ab), verdict_column="verdict"),
        ]
    if caveats:
        parts += ["<h2>Caveats</h2>", "<ul>", *[f"<li>{_e(c)}</li>" for c in caveats], "</ul>"]
    if images:
        parts.append("<h2>Pictures</h2>")
        parts += [_figure_html(path) for path in images]
    parts += profile_html(profile if profile is not None else pd.DataFrame())
    parts += [
        "<h2>Environment</h2>",
        _table_html(environment),
        '<p>Tables: <a href="summary.md">summary.md</a> and the CSV files beside this page.</p>',
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def caption(name: str) -> str:
    """A picture's one-line caption: its file name and what it shows (``time_w_float32.png: median time ...``)."""
    what = CAPTIONS.get(Path(name).stem.split("_", 1)[0], "")
    return name + (f": {what}" if what else "")


def _figure_html(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    text = caption(path.name)
    return (
        f'<figure><img src="data:image/png;base64,{data}" alt="{_e(path.stem)}">'
        f"<figcaption>{_e(text)}</figcaption></figure>"
    )


def _table_html(table: pd.DataFrame, verdict_column: str | None = None) -> str:
    headers, rows = render(table)
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = []
    for cells in rows:
        tds = []
        for header, cell in zip(headers, cells):
            cls = f' class="{_e(cell)}"' if header == verdict_column and cell in ("faster", "slower") else ""
            tds.append(f"<td{cls}>{_e(cell)}</td>")
        body.append("<tr>" + "".join(tds) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>\n" + "\n".join(body) + "\n</tbody></table>"


def _explanations(df: pd.DataFrame, keys: list[str]) -> dict[tuple, str]:
    """(case, mode, static_argnums) -> the first explanation of its ok rows."""
    found: dict[tuple, str] = {}
    for _, row in ok_rows(df).iterrows():
        text = cell_text(row.get("explanation"))
        if text:
            found.setdefault((_key(row, keys), row.get("mode"), cell_text(row.get(STATIC_ARGNUMS))), text)
    return found


def _key(row: pd.Series, keys: list[str]) -> tuple:
    return tuple(cell_text(row.get(k)) for k in keys)


def _case(row: pd.Series, keys: list[str]) -> str:
    params = params_text(row)
    variant = cell_text(row.get("variant")) if "variant" in keys else ""
    knobs = [
        f"{k}={row.get(k)}" for k in KNOBS if k in keys and cell_text(row.get(k)) not in ("", "[]", "{}", "jax.jit")
    ]
    parts = [
        str(row.get("workload")),
        f"[{variant}]" if variant else "",
        params,
        *knobs,
        f"size {plain(row.get('size'))}" if not is_missing(row.get("size")) else "",
        cell_text(row.get("dtype")),
    ]
    return " ".join(p for p in parts if p)


def _variant(row: pd.Series) -> str:
    return f" (static_argnums={cell_text(row.get(STATIC_ARGNUMS)) or '-'})"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)
