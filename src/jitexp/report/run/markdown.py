"""summary.md: the headline, every table with its note, the caveats, the plots by kind and the environment."""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from jitexp.analysis.formatting.tables import markdown_table
from jitexp.report.run.caveats import caveat_summary
from jitexp.report.run.profile_view import profile_markdown
from jitexp.report.run.text_parts import (
    AB_NOTE,
    SPEEDUP_MEANING,
    TRIALS_NOTE,
    WHY_NOTE,
    errors_view,
    headline,
    scaling_view,
)
from jitexp.report.run.views import (
    ATTRIBUTION_VIEW,
    DETAIL_SECTIONS,
    ab_view,
    attribution_details,
    compact_view,
    rows_table,
    speedup_view,
)
from jitexp.store.folders import SweepState
from jitexp.store.schema import SETUP_COLUMNS

# The plot kinds (file-name prefixes) in the report's section order, with their headings.
PLOT_KINDS = {
    "time": "Time per call (median, 95% CI)",
    "speedup": "Speedup (95% CI, verdict)",
    "coldstart": "Cold start: trace, lower, compile, execute",
    "scaling": "Growth: time vs size",
    "compile": "Compile cost vs size",
    "devices": "Scaling over devices",
    "roofline": "Roofline: achieved FLOP/s against arithmetic intensity, under the measured ceilings",
    "calls": "Per-call latency: first calls and the retrace probe",
    "tune": "Tuning: the objective by trial, against each searched key, and the Pareto front",
}
SPEEDUP_NOTE = (
    f"{SPEEDUP_MEANING}. paired: both modes measured together in the same "
    "fresh processes, interleaved round by round; the 95% CI inverts the Wilcoxon signed-rank test over the "
    "processes (pairs kept together) and the verdict says whether it excludes 1. unpaired: modes from separate "
    "jobs, the speedup the ratio of their medians; the CI "
    "is conservative (baseline CI low / compiled CI high .. baseline CI high / compiled CI low). "
    "compile overhead = compiled first call - compiled median. pays off: where the cumulative cost lines "
    "(cold first call, then the median per call) cross; break_even_calls and ahead_until_calls in "
    "speedup.csv. Repeated rows of one case and mode (seeds) are combined: median of medians, union of CIs."
)


def summary_markdown(
    df: pd.DataFrame,
    frames: dict[str, pd.DataFrame],
    images: Sequence[str],
    source: str | os.PathLike | None = None,
    state: SweepState | None = None,
    caveats: list[str] | None = None,
) -> str:
    """summary.md: headline, tables, caveats (caveat_summary(df) unless given), image links (relative) and the run's
    environment."""
    title = f"# jitexp report: `{Path(source).name}`" if source is not None else "# jitexp report"
    lines = [title, "", f"Source: `{source}`" if source is not None else "", "", headline(df, state) + ".", ""]
    if state is not None and state.missing:
        lines += [
            "## Jobs that never finished",
            "",
            "| job | overrides |",
            "|---:|---|",
            *[f"| {num} | `{ov}` |" for num, ov in state.missing],
            "",
        ]
    if "trials" in frames:
        verdict = frames["trials"].attrs.get("verdict")
        lines += _section(
            "Tuning trials",
            TRIALS_NOTE + ".",
            markdown_table(frames["trials"]),
            _full("trials"),
            [f"Confirmation: {verdict}", ""] if verdict else [],
        )
    lines += ["## Results", "", markdown_table(rows_table(df)), ""]
    if not frames["speedup"].empty:
        lines += _section(
            "Speedup vs eager", SPEEDUP_NOTE, markdown_table(speedup_view(frames["speedup"])), _full("speedup")
        )
    if "ab" in frames:
        lines += _section(
            "Variants against the baseline", AB_NOTE + ".", markdown_table(ab_view(frames["ab"])), _full("ab")
        )
    if "attribution" in frames:
        lines += _section(
            "Why",
            "`"
            + WHY_NOTE.replace("why: ", "", 1).replace(" primitives", "` primitives", 1)
            + '. The explanation\'s rules and thresholds: docs/measurement.md, "Why: attribution".',
            markdown_table(compact_view(frames["attribution"], ATTRIBUTION_VIEW)),
            _full("attribution"),
            [*[f"- {line}" for line in attribution_details(frames["attribution"])], ""],
        )
    for key, section in DETAIL_SECTIONS.items():
        if key in frames:
            lines += _section(section.heading, section.note, markdown_table(section.view(frames[key])), _full(key))
    lines += profile_markdown(frames.get("profile", pd.DataFrame()))
    if not frames["scaling"].empty:
        lines += _section(
            "Scaling",
            "growth exponent = least-squares slope of log(median) over log(size) (1: linear, 2: quadratic).",
            markdown_table(scaling_view(frames["scaling"])),
            "Per size: [scaling_points.csv](scaling_points.csv)",
        )
    if not frames["errors"].empty:
        lines += _section("Errors", "", markdown_table(errors_view(frames["errors"])), _full("errors"))
    notes = caveat_summary(df) if caveats is None else caveats
    if notes:
        lines += ["## Caveats", "", *[f"- {n}" for n in notes], ""]
    lines += _image_sections(images)
    lines += ["## Environment", "", markdown_table(environment_table(df)), ""]
    return "\n".join(lines)


def _section(heading: str, note: str, table: str, link: str, after: Sequence[str] = ()) -> list[str]:
    """A table's section of summary.md: heading, its note (none when empty), the table, what follows it, the link to
    its CSV."""
    return [f"## {heading}", "", *([note, ""] if note else []), table, "", *after, link, ""]


def _full(stem: str) -> str:
    """The line that links a table's whole CSV."""
    return f"Full table: [{stem}.csv]({stem}.csv)"


def _image_sections(images: Sequence[str]) -> list[str]:
    lines = []
    for kind, heading in PLOT_KINDS.items():
        names = [n for n in images if is_kind(n, kind)]
        if names:
            lines += [f"## {heading}", ""]
            lines += [f"![{Path(n).stem}]({n})\n" for n in names]
    return lines


def is_kind(name: str, kind: str) -> bool:
    """Whether a picture's file name is of kind: ``kind_<case>.png``, or ``kind.png`` for a figure of the whole
    run (roofline.png)."""
    return name.startswith(kind + "_") or name == f"{kind}.png"


def environment_table(df: pd.DataFrame) -> pd.DataFrame:
    """The run's environment as (item, value): distinct values per column, load and time ranges."""
    items = [(col, _distinct(df[col])) for col in SETUP_COLUMNS if col in df.columns]
    for col in ("load_avg_start", "load_avg_end"):
        if col in df.columns:
            items.append((col, _range(pd.to_numeric(df[col], errors="coerce"), "{:.2f}")))
    if "timestamp" in df.columns:
        stamps = df["timestamp"].dropna().astype(str)
        items.append(("timestamp", f"{stamps.min()} .. {stamps.max()}" if len(stamps) else "-"))
    items.append(("report_generated", _dt.datetime.now().astimezone().isoformat(timespec="seconds")))
    return pd.DataFrame(items, columns=["item", "value"]).astype("string")


def _distinct(series: pd.Series, limit: int = 4) -> str:
    values = [str(v) for v in pd.unique(series.dropna()) if str(v) != ""]
    if not values:
        return "-"
    if len(values) > limit:
        return f"{len(values)} values: " + ", ".join(values[:limit]) + ", ..."
    return ", ".join(values)


def _range(series: pd.Series, fmt: str) -> str:
    series = series.dropna()
    if series.empty:
        return "-"
    low, high = series.min(), series.max()
    return fmt.format(low) if low == high else f"{fmt.format(low)} .. {fmt.format(high)}"
