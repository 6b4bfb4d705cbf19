"""history/index.html: one self-contained page (plotly's JavaScript inlined once, so it works offline) with the
steps table first, then a timeline per case and metric: each run's value and CI, hover with the commit, its
subject, the jax version, steal and the processes; steps drawn where they are, a change of machine marked."""

from __future__ import annotations

import functools
import html
import json
from pathlib import Path
from typing import Any

import pandas as pd

from jitexp.analysis.formatting.values import format_bytes, format_seconds
from jitexp.report.history.timeline import commit_range, counted, short_commit, step_change
from jitexp.report.shared.memory import MEMORY_METRICS
from jitexp.store.csvio import write_atomic

PAGE = "index.html"


def write_page(tidy: pd.DataFrame, steps: pd.DataFrame, out: str | Path) -> Path:
    """Write out/index.html for the history and its steps; returns its path.

    Each timeline is a plain plotly figure (data and layout as JSON) drawn by the page itself with plotly.js,
    inlined once: building hundreds of figure objects in Python was most of the page's time."""
    head = [
        "<!doctype html><html><head><meta charset='utf-8'><title>jitexp history</title>",
        "<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left}h2{margin-top:1.5em}</style>",
    ]
    parts = [
        "</head><body>",
        "<h1>jitexp history</h1>",
        f"<p>{counted(tidy['run'].nunique(), 'run')}, {counted(tidy['case'].nunique(), 'case')}, on "
        f"{counted(tidy['machine'].nunique(), 'machine')}; runs in the order of the commits they measured (hover a "
        "point for its commit, jax version, steal and processes; bars are each run's 95% CI).</p>",
        "<h2>Steps</h2>",
        _steps_table(steps),
    ]
    figures = []
    for i, ((case, metric), runs) in enumerate(tidy.groupby(["case", "metric"], sort=False)):
        mine = steps[(steps["case"] == case) & (steps["metric"] == metric)]
        figures.append(_timeline(runs.sort_values("order"), mine, metric))
        parts.append(f"<h2>{html.escape(case)}: {html.escape(metric)}</h2><div class='timeline' id='t{i}'></div>")
    parts.append(
        f"<script>const FIGURES = {json.dumps(figures, allow_nan=False)};\n"
        "FIGURES.forEach((f, i) => Plotly.newPlot('t' + i, f.data, f.layout, {displaylogo: false}));</script>"
    )
    parts.append("</body></html>")
    page = b"\n".join(["\n".join(head).encode("utf-8"), _plotly_script() + "\n".join(parts).encode("utf-8")])
    return write_atomic(Path(out) / PAGE, page)


@functools.cache
def _plotly_script() -> bytes:
    """`<script>plotly.js</script>` as UTF-8, read and encoded once per process: plotly's installed file (4.8 MB)
    does not change while a process runs, and reading and encoding it was a third of a small history's time."""
    from plotly.offline import get_plotlyjs

    return f"<script>{get_plotlyjs()}</script>".encode()


def _steps_table(steps: pd.DataFrame) -> str:
    """The steps as an HTML table: case, metric, the change with its CI, the commit range, jax on either side."""
    if steps.empty:
        return "<p>No steps: no case changed level beyond the threshold and its runs' own spread.</p>"
    head = "<tr><th>case</th><th>metric</th><th>change</th><th>commits</th><th>jax</th></tr>"
    body = []
    for _, s in steps.iterrows():
        commits = commit_range(s)
        if isinstance(s["subject_after"], str) and s["subject_after"]:
            commits += f" ({s['subject_after']})"
        jax = f"{s['jax_before']} -> {s['jax_after']}" if s["jax_before"] != s["jax_after"] else str(s["jax_after"])
        cells = [s["case"], s["metric"], step_change(s), commits, jax]
        body.append("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells) + "</tr>")
    return f"<table class='steps'><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"


def _timeline(runs: pd.DataFrame, steps: pd.DataFrame, metric: str) -> dict:
    """One case and metric over the runs as a plotly figure: a trace per machine line, CI bars, steps (dashed)
    and changes of machine (dotted) drawn."""
    show = format_bytes if metric in MEMORY_METRICS else format_seconds
    data = []
    for line, mine in runs.groupby("line", sort=True):
        hover = [
            "<br>".join(
                [
                    f"{short_commit(r.code_commit)} {html.escape(str(r.code_subject or ''))}",
                    f"{metric}: {show(r.value)} (95% CI {show(r.ci_low)}-{show(r.ci_high)})",
                    f"jax {r.jax_version}, steal {_percent(r.steal)}, {_count(r.n_processes)} processes",
                    html.escape(str(r.machine)),
                ]
            )
            for r in mine.itertuples()
        ]
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": f"machine {line}",
                "x": _plain(mine["order"]),
                "y": _plain(mine["value"]),
                "error_y": {
                    "type": "data",
                    "array": _plain((mine["ci_high"] - mine["value"]).fillna(0)),
                    "arrayminus": _plain((mine["value"] - mine["ci_low"]).fillna(0)),
                    "visible": True,
                },
                "hovertext": hover,
                "hoverinfo": "text",
            }
        )
    marks = [
        (_order(runs, s["first_after"]) - 0.5, "dash", "firebrick", f"step {s['ratio']:.3g}x")
        for _, s in steps.iterrows()
    ]
    machines = runs.drop_duplicates("order")[["order", "line"]]
    for order, line, previous in zip(machines["order"], machines["line"], machines["line"].shift()):
        if pd.notna(previous) and line != previous:
            marks.append((order - 0.5, "dot", "grey", "machine changed"))
    ticks = runs.drop_duplicates("order")
    layout = {
        "height": 320,
        "margin": {"l": 60, "r": 20, "t": 30, "b": 40},
        "yaxis": {
            "title": {"text": f"{metric} ({'bytes' if metric in MEMORY_METRICS else 's'})"},
            "rangemode": "tozero",
        },
        "xaxis": {
            "tickmode": "array",
            "tickvals": _plain(ticks["order"]),
            "ticktext": [short_commit(c) for c in ticks["code_commit"]],
        },
        "shapes": [
            {
                "type": "line",
                "xref": "x",
                "yref": "paper",
                "x0": x,
                "x1": x,
                "y0": 0,
                "y1": 1,
                "line": {"dash": dash, "color": colour},
            }
            for x, dash, colour, _ in marks
        ],
        "annotations": [
            {"x": x, "xref": "x", "yref": "paper", "y": 1, "text": text, "showarrow": False, "xanchor": "left"}
            for x, _, _, text in marks
        ],
    }
    return {"data": data, "layout": layout}


def _plain(values: pd.Series) -> list:
    """Numbers as JSON takes them (no NaN: null)."""
    return [None if pd.isna(v) else float(v) for v in values]


def _order(runs: pd.DataFrame, run: str) -> int:
    return int(runs.loc[runs["run"] == run, "order"].iloc[0])


def _percent(value: Any) -> str:
    return "-" if value is None or pd.isna(value) else f"{float(value):.1%}"


def _count(value: Any) -> str:
    return "?" if value is None or pd.isna(value) else str(int(float(value)))
