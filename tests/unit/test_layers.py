"""The unit layer imports neither JAX, the model libraries nor the built-in workloads (its conftest refuses
processes and fails a test that loads JAX at run time, which also covers a JAX import through another module)."""

from __future__ import annotations

import ast
from pathlib import Path

FORBIDDEN = ("jax", "jaxlib", "jitexp.workloads", "flax", "optax", "equinox")


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def may_import(path: Path) -> bool:
    """Whether the module's text names any of FORBIDDEN at all (an import of one must): only those are parsed."""
    text = path.read_text()
    return any(word in text for word in ("jax", "flax", "optax", "equinox", "workloads"))


def test_unit_tests_import_no_jax():
    here = Path(__file__).parent
    bad = {
        f"{path.name}: {name}"
        for path in sorted(here.glob("*.py"))
        if may_import(path)
        for name in imported(path)
        if name.split(".")[0] in FORBIDDEN or name.startswith(FORBIDDEN)
    }
    assert not bad, f"unit tests importing JAX: {sorted(bad)}"
