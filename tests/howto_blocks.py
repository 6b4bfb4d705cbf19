"""The how-to guides' named and file blocks (docs/howto/*.md: `<!-- commands -->`, `<!-- file: PATH -->`, ...), read
for the tests that run them: tests/inprocess/test_howto_commands.py checks each command before running,
tests/e2e/test_howto_examples.py runs them. (The guides' `<!-- run -->` blocks are run by tests/e2e/test_docs_pages.py.)"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

HOWTO = Path(__file__).resolve().parents[1] / "docs" / "howto"
OWN_FUNCTION = "own-function.md"  # a function of arrays: mylosses.py, myconf/workload/myloss.yaml, commands
MODELS = "models.md"  # mymodel.py, two workload files, model-commands
BEFORE_AFTER = "before-after.md"  # mysoftmax.py, variant-commands; envs-commands
HISTORY = "history.md"  # history-commands
PYTHON = "python.md"  # python-example, notebook-magic
PYTEST = "pytest.md"  # test_perf.py, pytest-commands
MESH = "mesh.md"  # devices-commands


def page(name: str) -> str:
    """The guide docs/howto/NAME."""
    return (HOWTO / name).read_text()


def block(name: str, marker: str) -> str:
    """The text of the guide's one block marked `<!-- MARKER -->`."""
    found = re.findall(rf"<!-- {re.escape(marker)} -->\n```\w*\n(.*?)```", page(name), re.S)
    assert len(found) == 1, f"docs/howto/{name}: {len(found)} blocks marked <!-- {marker} -->, not one"
    return found[0]


def commands(name: str, marker: str) -> list[list[str]]:
    """The guide's `<!-- MARKER -->` block, one split command per line (a `# comment` dropped)."""
    split = (shlex.split(line, comments=True) for line in block(name, marker).splitlines())
    return [argv for argv in split if argv]


def write_files(folder: Path, name: str) -> set[str]:
    """Write the guide's `<!-- file: PATH -->` blocks under folder; return their paths."""
    files = re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", page(name), re.S)
    for path, body in files:
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(body)
    return {path for path, _ in files}


def own_workload(folder: Path) -> list[list[str]]:
    """Write the own-function guide's files under folder; return its commands, split."""
    assert write_files(folder, OWN_FUNCTION) == {"mylosses.py", "myconf/workload/myloss.yaml"}
    found = commands(OWN_FUNCTION, "commands")
    assert found and all(c[0] == "jitexp" for c in found)
    return found


def own_models(folder: Path) -> list[list[str]]:
    """Write the models guide's files under folder; return its commands, split."""
    assert write_files(folder, MODELS) == {
        "mymodel.py",
        "myconf/workload/mlp_loss.yaml",
        "myconf/workload/train_step.yaml",
    }
    found = commands(MODELS, "model-commands")
    assert found and all(c[0] == "jitexp" for c in found)
    return found
