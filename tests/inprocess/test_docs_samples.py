"""Every sample of jitexp's own output in README.md and docs/ (`<!-- output: NAME -->`) is exactly what
scripts/docs_samples.py makes for NAME from today's code: a format, a message or an option that changes fails here
until `python scripts/docs_samples.py` rewrites the pages (issue 56, item 3). The error catalogue's command lines
go through the preflight (composes, in process: nothing runs)."""

from __future__ import annotations

import difflib
import importlib.util
import sys
from functools import cache

from docs_blocks import ROOT


@cache
def docs_samples():
    spec = importlib.util.spec_from_file_location("docs_samples", ROOT / "scripts" / "docs_samples.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_output_sample_is_what_the_code_prints_today():
    module = docs_samples()
    found = module.samples()
    assert found, "no <!-- output: NAME --> block in README.md or docs/"
    stale = [f"{s.block.where}: output {s.name}" for s in found if s.stale]
    diffs = [
        "".join(difflib.unified_diff(s.block.text.splitlines(True), s.text.splitlines(True), "page", "code"))
        for s in found
        if s.stale and s.text is not None
    ]
    assert not stale, (
        f"{len(stale)} sample(s) no longer what the code prints:\n"
        + "\n".join(stale + diffs)
        + f"\nrun `{module.FIX}` to regenerate them, and read the diff"
    )
    missing = [f"{s.block.where}: output {s.name}: {s.why}" for s in found if s.text is None]
    assert not missing, "\n".join(missing)


def test_each_mistake_of_the_catalogue_is_refused_by_the_preflight_with_one_line():
    lines = docs_samples().catalogue()
    assert set(lines) == {m.name for m in docs_samples().MISTAKES}
    for name, text in lines.items():
        command, line = text.split("\n")[-2:]  # after the user's files it reads, if any
        assert command.startswith("$ jitexp ") and line.startswith("jitexp: error: "), (name, text)
    assert "did you mean size?" in lines["unknown-key"]
    assert "\n$ jitexp --config-dir conf workload=typo\njitexp: error: conf/workload/typo.yaml: " in lines["file-key"]


def test_the_catalogue_page_shows_every_mistake():
    module = docs_samples()
    shown = {s.name for s in module.samples() if s.block.page.name == "errors.md"}
    missing = sorted({f"error-{m.name}" for m in module.MISTAKES} - shown)
    assert not missing, f"docs/reference/errors.md has no sample of: {', '.join(missing)}"
