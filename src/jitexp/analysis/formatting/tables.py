"""Frames as text tables: cells rendered and columns sized for a terminal (text_table) or for markdown
(markdown_table)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from jitexp.analysis.formatting.values import format_value

# ---- tables ------------------------------------------------------------------------------


def render(df: pd.DataFrame, *, width: int | None = None) -> tuple[list[str], list[list[str]]]:
    """A frame as (headers, rows) of cell strings; cells cut to width characters when given."""
    headers = [str(c) for c in df.columns]
    rows = []
    for values in df.itertuples(index=False, name=None):  # plain tuples: no namedtuple class built per frame
        cells = [format_value(c, v).replace("\n", " ") for c, v in zip(headers, values)]
        if width:
            cells = [c if len(c) <= width else c[: width - 3] + "..." for c in cells]
        rows.append(cells)
    return headers, rows


def markdown_table(df: pd.DataFrame) -> str:
    """A GitHub-flavoured markdown table (pipes escaped), without needing tabulate."""
    headers, rows = render(df)

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    numeric = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in df.columns]
    rule = ["---:" if n else "---" for n in numeric]
    return "\n".join([line(headers), "|" + "|".join(rule) + "|", *map(line, rows)])


def text_table(df: pd.DataFrame, *, width: int = 48) -> str:
    """An aligned plain-text table for the terminal (long cells cut)."""
    headers, rows = render(df, width=width)
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, numeric)).rstrip()

    return "\n".join([line(headers), "  ".join("-" * w for w in widths), *map(line, rows)])
