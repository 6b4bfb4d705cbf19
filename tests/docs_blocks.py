"""The fenced blocks of README.md and docs/**/*.md with their markers (docs/development/docs.md), read as plain text.

A marker is the HTML comment on the line right before a block's opening fence:
`<!-- file: PATH -->`, `<!-- run -->`, `<!-- not-run: why -->`, `<!-- output: NAME -->` or a name, `<!-- NAME -->`.
tests/unit/test_docs_blocks.py checks the markers, tests/e2e/test_docs_pages.py runs the `run` blocks and
scripts/docs_samples.py rewrites the `output` blocks."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^\s*<!--\s*(.*?)\s*-->\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([^`\s]*)(.*)$")
# the blocks a user would run or read as jitexp's output: each needs a marker
MARKED = ("bash", "sh", "shell", "console", "python", "py", "text", "")
KINDS = ("file", "run", "not-run", "output")


@dataclass(frozen=True)
class Block:
    page: Path  # relative to the repository's root
    line: int  # the opening fence's line, from 1
    lang: str  # the info string's first word ('' for none)
    text: str  # the block's lines, the fence's indentation removed, each ending in a newline
    marker: str | None  # the comment's text, e.g. "file: mylosses.py", "run", "output: main-block"
    end: int = 0  # the closing fence's line

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def kind(self) -> str | None:
        """file, run, not-run, output, or name (a named block), None without a marker."""
        if self.marker is None:
            return None
        head = self.marker.split(":", 1)[0].strip()
        return head if head in KINDS else "name"

    @property
    def arg(self) -> str:
        """The marker's argument: the path of a file, the reason of a not-run, the NAME of an output or named block."""
        if self.marker is None:
            return ""
        if self.kind == "name":
            return self.marker
        return self.marker.split(":", 1)[1].strip() if ":" in self.marker else ""


def pages(root: Path = ROOT) -> list[Path]:
    """README.md and every docs/**/*.md but the built site (docs/_build), relative to root."""
    found = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    return [p.relative_to(root) for p in found if p.exists() and "_build" not in p.relative_to(root).parts]


def page_blocks(page: Path, root: Path = ROOT, text: str | None = None) -> list[Block]:
    """The fenced blocks of one page, in order (a fence inside another block is its text)."""
    lines = (root / page).read_text().splitlines() if text is None else text.splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = len(m.group(1)), m.group(2), m.group(3)
        before = MARKER.match(lines[i - 1]) if i > 0 else None
        close = re.compile(rf"^\s*{fence[0]}{{{len(fence)},}}\s*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        body = "".join(
            f"{line[indent:] if not line[:indent].strip() else line.lstrip()}\n" for line in lines[i + 1 : j]
        )
        blocks.append(Block(page, i + 1, lang.lower(), body, before.group(1) if before else None, j + 1))
        i = j + 1
    return blocks


def all_blocks(root: Path = ROOT) -> list[Block]:
    return [block for page in pages(root) for block in page_blocks(page, root)]
