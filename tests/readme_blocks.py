"""The README's marked blocks (`<!-- commands -->`, `<!-- file: PATH -->`, ...), read for the tests that run them:
tests/inprocess/test_readme_commands.py checks each command before running, tests/e2e/test_readme.py runs them."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
ARRAYS = "### A function of arrays"
MODELS = "### Real models"
VARIANTS = "### Before and after in one run"
FROM_PYTHON = ("## From Python, notebooks and pytest", "## Running on a cluster")


def chapter(start: str, end: str) -> str:
    """The README from the heading `start` to the heading `end`."""
    text = README.read_text()
    return text[text.index(start) : text.index(end)]


def section(part: str = ARRAYS) -> str:
    """One part of the README's "Your own code" section: the arrays example or the models example."""
    text = chapter("## Your own code", "## Common mistakes")
    start = text.index(part)
    end = text.find("\n### ", start + len(part))
    return text[start : end if end > 0 else len(text)]


def commands(part: str = ARRAYS, marker: str = "commands") -> list[list[str]]:
    """The part's `<!-- MARKER -->` block, one split command per line."""
    block = re.search(rf"<!-- {marker} -->\n```bash\n(.*?)```", section(part), re.S).group(1)
    return [shlex.split(line) for line in block.splitlines() if line.strip()]


def write_files(folder: Path, part: str) -> set[str]:
    """Write the part's `<!-- file: PATH -->` blocks under folder; return their paths."""
    files = re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", section(part), re.S)
    for path, body in files:
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(body)
    return {path for path, _ in files}


def own_workload(folder: Path) -> list[list[str]]:
    """Write the arrays example's files under folder; return its commands, split."""
    assert write_files(folder, ARRAYS) == {"mylosses.py", "myconf/workload/myloss.yaml"}
    found = commands()
    assert found and all(c[0] == "jitexp" for c in found)
    return found


def own_models(folder: Path) -> list[list[str]]:
    """Write the models example's files under folder; return its commands, split."""
    assert write_files(folder, MODELS) == {
        "mymodel.py",
        "myconf/workload/mlp_loss.yaml",
        "myconf/workload/train_step.yaml",
    }
    found = commands(MODELS, "model-commands")
    assert found and all(c[0] == "jitexp" for c in found)
    return found
