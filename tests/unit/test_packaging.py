"""The wheel holds every package of the source tree: pyproject lists them by hand (conf/ ships as jitexp.conf), so a
new subpackage missing from the list installs without its modules (an editable install hides it)."""

from __future__ import annotations

from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]


def test_every_source_package_is_in_the_wheel():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(ROOT / "src").parts) for init in (ROOT / "src" / "jitexp").rglob("__init__.py")
    }
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"
