"""The result block on the user's screen: coloured by rich on a terminal, plain in a pipe, a file or under NO_COLOR
(https://no-color.org). The words and the layout are analysis.formatting.block's; this only paints them."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import IO

from jitexp.analysis.formatting.block import BLOCK_WIDTH, Line, label_width, render_block, wrapped

__all__ = ["STYLES", "colour_wanted", "print_block"]

STYLES = {
    "case": "bold",
    "time": "bold",
    "good": "bold green",
    "bad": "bold red",
    "neutral": "yellow",
    "warn": "yellow",
    "error": "bold red",
    "dim": "dim",
    "": "",
}
LABEL_STYLE = "cyan"


def colour_wanted(stream: IO[str]) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set to anything but the empty string or TERM is dumb."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def print_block(lines: Sequence[Line], stream: IO[str] | None = None, width: int = BLOCK_WIDTH) -> None:
    """Print the block: the same characters either way, colour added on a terminal."""
    stream = stream or sys.stdout
    if not colour_wanted(stream):
        print(render_block(lines, width), file=stream, flush=True)
        return
    from rich.console import Console
    from rich.text import Text

    console = Console(file=stream, force_terminal=True, highlight=False, soft_wrap=True, width=10_000)
    labels = label_width(lines)
    for line in lines:
        for i, text in enumerate(wrapped(line, width, labels)):
            painted = Text()
            cut = 0 if line.style == "case" else 2 + labels
            if i == 0 and cut:
                painted.append(text[:cut], LABEL_STYLE)
            else:
                painted.append(text[:cut])
            painted.append(text[cut:], STYLES.get(line.style, ""))
            console.print(painted)
    stream.flush()
