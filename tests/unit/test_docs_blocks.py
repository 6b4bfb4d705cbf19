"""Every block of README.md and docs/ that a user would run or read as jitexp's output carries a marker
(docs/development/docs.md), and every marker points at something that checks it: a `run` block is run by
tests/e2e/test_docs_pages.py, an `output: NAME` block is made by scripts/docs_samples.py's generator NAME, a named
block `<!-- NAME -->` is read by a test that names it, a `not-run` block says why it cannot run here."""

from __future__ import annotations

import importlib.util
import re
import sys
from functools import cache
from pathlib import Path

import pytest

from docs_blocks import ROOT, Block, all_blocks, page_blocks, pages

TESTS = ROOT / "tests"
SAMPLES = ROOT / "scripts" / "docs_samples.py"
NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
RUNNABLE = ("bash", "sh", "python")


@cache
def generators() -> set[str]:
    """The NAMEs scripts/docs_samples.py can make (its module imports nothing of jitexp until a generator runs)."""
    spec = importlib.util.spec_from_file_location("docs_samples", SAMPLES)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return set(module.GENERATORS)


@cache
def lab_notebook() -> set[Path]:
    """The Development section's own pages (docs/development/index.md's toctree): the lab notebook, whose unlabelled
    blocks are dated records, not something a user runs."""
    index = ROOT / "docs" / "development" / "index.md"
    if not index.exists():
        return set()
    tree = re.search(r"```\{toctree\}\n(.*?)```", index.read_text(), re.S)
    entries = [line.strip() for line in (tree.group(1) if tree else "").splitlines()]
    found = set()
    for entry in entries:
        if entry and not entry.startswith(":"):
            base = ROOT / "docs" if entry.startswith("/") else index.parent
            found.add((base / f"{entry.lstrip('/')}.md").relative_to(ROOT))
    return found


def needs_marker(block: Block) -> bool:
    """A shell, Python or text block, or one with no language outside the lab notebook (it could hide either)."""
    if block.lang in ("bash", "sh", "shell", "console", "python", "py", "text"):
        return True
    return block.lang == "" and block.page not in lab_notebook()


def test_every_block_a_user_runs_or_reads_has_a_marker():
    missing = [f"{b.where} ```{b.lang}" for b in all_blocks() if needs_marker(b) and b.marker is None]
    assert not missing, (
        f"{len(missing)} block(s) without a marker on the line before the fence (<!-- run -->, <!-- file: PATH -->, "
        "<!-- output: NAME -->, <!-- NAME -->, <!-- not-run: why -->; docs/development/docs.md):\n" + "\n".join(missing)
    )


def named_in(name: str, text: str) -> bool:
    """The test names the block: `<!-- NAME -->`, or NAME as a string ("NAME", 'NAME'), not a word in passing."""
    return bool(re.search(rf"""<!-- {re.escape(name)} -->|["']{re.escape(name)}["']""", text))


def test_every_named_block_is_read_by_a_test():
    sources = [p.read_text() for p in TESTS.rglob("*.py") if p.name not in ("docs_blocks.py", Path(__file__).name)]
    named = [b for b in all_blocks() if b.kind == "name"]
    bad = [
        f"{b.where}: <!-- {b.arg} --> is not a marker (lower-case-with-dashes)"
        for b in named
        if not NAME.fullmatch(b.arg)
    ]
    bad += [
        f"{b.where}: <!-- {b.arg} --> is named in no file under tests/: no test checks it"
        for b in named
        if NAME.fullmatch(b.arg) and not any(named_in(b.arg, text) for text in sources)
    ]
    assert not bad, "\n".join(bad)


def test_every_marker_says_what_it_needs():
    bad = []
    for b in all_blocks():
        if b.kind == "not-run" and not b.arg:
            bad.append(f"{b.where}: <!-- not-run --> gives no reason (<!-- not-run: needs a GPU -->)")
        if b.kind == "file" and not b.arg:
            bad.append(f"{b.where}: <!-- file: --> gives no path")
        if b.kind == "run" and b.lang not in RUNNABLE:
            bad.append(f"{b.where}: <!-- run --> on a ```{b.lang} block: only {', '.join(RUNNABLE)} blocks run")
        if b.kind == "output" and b.arg not in generators():
            bad.append(f"{b.where}: <!-- output: {b.arg} --> has no generator in scripts/docs_samples.py's GENERATORS")
        if b.kind == "output" and b.lang != "text":
            bad.append(f"{b.where}: <!-- output: {b.arg} --> marks a ```{b.lang} block: samples are ```text")
    assert not bad, "\n".join(bad)


def test_the_pages_are_readme_and_docs_without_the_built_site():
    found = pages()
    assert found[0] == Path("README.md")
    assert all(p.parts[0] == "docs" and p.suffix == ".md" and "_build" not in p.parts for p in found[1:])
    assert Path("docs/configuration.md") in found


PAGE = """\
# A page
<!-- run -->
```bash
jitexp size=64
```
text between
<!-- file: mine.py -->
```python
def f(x):
    return x
```

```text
no marker
```
1. a list item

   <!-- output: main-block -->
   ````text
   indented
   ```
   a fence inside is text
   ````
<!-- not-run: needs a GPU -->
~~~bash
jitexp device=gpu
~~~
<!-- model-commands -->
```{toctree}
:maxdepth: 1
```
"""


def test_blocks_are_read_with_their_line_language_text_and_marker():
    blocks = page_blocks(Path("page.md"), text=PAGE)
    got = [(b.line, b.lang, b.kind, b.arg) for b in blocks]
    assert got == [
        (3, "bash", "run", ""),
        (8, "python", "file", "mine.py"),
        (13, "text", None, ""),
        (19, "text", "output", "main-block"),
        (25, "bash", "not-run", "needs a GPU"),
        (29, "{toctree}", "name", "model-commands"),
    ]
    assert blocks[0].text == "jitexp size=64\n"
    assert blocks[1].text == "def f(x):\n    return x\n"
    assert blocks[3].text == "indented\n```\na fence inside is text\n"
    assert (blocks[3].line, blocks[3].end) == (19, 23)
    assert blocks[0].where == "page.md:3"


def test_a_name_counts_only_where_a_test_names_it():
    assert named_in("model-commands", 'commands(MODELS, "model-commands")')
    assert named_in("setup-commands", 're.search(r"<!-- setup-commands -->\\n```bash")')
    assert not named_in("commands", "the README's commands, run")  # a word in passing is no test


@pytest.mark.parametrize("lang", ["bash", "python", "text", "console", "sh", ""])
def test_an_unmarked_block_needs_a_marker(lang):
    [block] = page_blocks(Path("docs/howto/x.md"), text=f"```{lang}\nx\n```\n")
    assert needs_marker(block)
    [config] = page_blocks(Path("docs/howto/x.md"), text="```yaml\nsize: 64\n```\n")
    assert not needs_marker(config)  # a config excerpt, not a file a user writes
