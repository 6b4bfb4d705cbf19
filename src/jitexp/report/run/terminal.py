"""The report as terminal text: the one-screen sweep summary and what jitexp-report prints."""

from __future__ import annotations

import shutil
import textwrap

import pandas as pd

from jitexp.analysis.formatting.tables import text_table
from jitexp.analysis.formatting.values import short_name
from jitexp.report.run.caveats import caveat_summary
from jitexp.report.run.tables import speedup_table
from jitexp.report.run.text_parts import AB_NOTE, TRIALS_NOTE, WHY_NOTE, errors_view, headline, scaling_view
from jitexp.report.run.views import (
    ATTRIBUTION_TERMINAL,
    DETAIL_SECTIONS,
    ab_view,
    attribution_details,
    compact_view,
    rows_table,
    speedup_view,
)
from jitexp.store.folders import SweepState


def format_sweep_summary(
    df: pd.DataFrame,
    state: SweepState | None = None,
    *,
    speedup: pd.DataFrame | None = None,
    caveats: list[str] | None = None,
) -> str:
    """One-screen terminal summary: every row, then the speedup table when eager and compiled rows exist
    (`speedup` and `caveats`: speedup_table(df) and caveat_summary(df), where the caller has them already)."""
    parts = (
        [f"jitexp: {headline(df, state)}", text_table(rows_table(df))]
        if len(df)
        else [f"jitexp: {headline(df, state)}"]
    )
    notes = caveat_summary(df) if caveats is None else caveats
    if notes:
        width = max(60, shutil.get_terminal_size((100, 24)).columns)
        parts += ["", "caveats:"] + [
            textwrap.fill(n, width, initial_indent="  ", subsequent_indent="    ") for n in notes
        ]
    speedup = speedup_table(df) if speedup is None else speedup
    if not speedup.empty:
        parts += [
            "",
            "speedup against the baseline mode (paired: measured together in one job; "
            "pays_off: where the cumulative costs cross)",
            text_table(speedup_view(speedup), width=72),  # a pay-off phrase read whole
        ]
    return "\n".join(parts)


def format_terminal_report(
    df: pd.DataFrame,
    frames: dict[str, pd.DataFrame],
    state: SweepState | None = None,
    *,
    caveats: list[str] | None = None,
) -> str:
    """What jitexp-report prints: the sweep summary, why, memory, disk cache, retrace probe, scaling, errors."""
    width = max(60, shutil.get_terminal_size((100, 24)).columns)
    parts = [format_sweep_summary(df, state, speedup=frames.get("speedup"), caveats=caveats)]
    if "trials" in frames:
        parts += ["", textwrap.fill(TRIALS_NOTE, width), text_table(frames["trials"])]
        if frames["trials"].attrs.get("verdict"):
            parts += [f"confirmation: {frames['trials'].attrs['verdict']}"]
    if "ab" in frames:
        parts += ["", textwrap.fill(AB_NOTE, width), text_table(ab_view(frames["ab"]))]
    if "attribution" in frames:
        parts += [
            "",
            textwrap.fill(WHY_NOTE, width),
            text_table(compact_view(frames["attribution"], ATTRIBUTION_TERMINAL)),
        ]
        parts += [
            textwrap.fill(line, width, initial_indent="  ", subsequent_indent="    ")
            for line in attribution_details(frames["attribution"])
        ]
    for key, section in DETAIL_SECTIONS.items():
        if key in frames:
            parts += ["", section.line, text_table(section.view(frames[key]), width=section.width)]
    if not frames["scaling"].empty:
        parts += [
            "",
            "scaling (growth exponent of median time over size)",
            text_table(scaling_view(frames["scaling"])),
        ]
    if not frames["errors"].empty:
        view = errors_view(frames["errors"])
        parts += ["", "errors", text_table(view.drop(columns="hint"), width=60)]
        parts += hint_lines(view, width)
    return "\n".join(parts)


def hint_lines(view: pd.DataFrame, width: int) -> list[str]:
    """Each distinct hint of the errors table whole, after the error type it answers: a table cell cuts it at 60
    characters, and a hint is a sentence to read."""
    pairs = view.reindex(columns=["error_type", "hint"]).dropna().drop_duplicates()
    pairs = pairs[pairs["hint"].astype(str).str.strip().astype(bool)]
    if pairs.empty:
        return []
    return ["hints:"] + [
        textwrap.fill(f"{short_name(kind)}: {hint}", width, initial_indent="  ", subsequent_indent="    ")
        for kind, hint in pairs.itertuples(index=False, name=None)
    ]
