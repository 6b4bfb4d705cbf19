"""The unit layer imports neither JAX nor the worker (its conftest refuses processes at run time)."""

from __future__ import annotations

import ast
from pathlib import Path

FORBIDDEN = ("jax", "jaxlib", "jitexp.worker", "jitexp.workloads", "flax", "optax", "equinox")


def imported(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_unit_tests_import_no_jax_and_no_worker():
    here = Path(__file__).parent
    bad = {
        f"{path.name}: {name}"
        for path in sorted(here.glob("*.py"))
        for name in imported(path)
        if name.split(".")[0] in FORBIDDEN or name.startswith(FORBIDDEN)
    }
    assert not bad, f"unit tests importing JAX or the worker: {sorted(bad)}"
