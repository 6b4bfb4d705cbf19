"""Every page's `<!-- run -->` blocks run as a reader would run them (docs/development/docs.md): one test per page
of README.md and docs/ that has any, in a fresh folder holding the page's `<!-- file: PATH -->` blocks, each run
block in page order through the installed commands: bash blocks with `bash -e`, Python blocks with this Python.
`jitexp` gets `timing=quick` appended unless the line sets `timing=` itself (a shim in front of it on PATH), a tune
study `tune.runoff=0` unless it sets `tune.runoff=` (the runoff's two jobs of six processes were most of the tune
page's time; tests/e2e/test_tune.py runs the runoff, fresh and resumed), and `pytest` `--jitexp-timing=quick`, so
that a page's commands take seconds. Each block must exit 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from docs_blocks import ROOT, Block, all_blocks, page_blocks
from helpers import command

PAGES = sorted({b.page for b in all_blocks() if b.kind == "run"})
TIMEOUT = 600  # seconds for one block

# run as printed, with the quick timing added unless the command line sets one or runs no job; a tune study
# (hydra/sweeper=tune) without its own tune.runoff also gets tune.runoff=0
SHIM = """#!/usr/bin/env bash
add=({quick})
for arg in "$@"; do
  case "$arg" in
    {keep}) add=() ;;
  esac
done
for arg in "$@"; do  # a tune study's runoff: tests/e2e/test_tune.py's
  case "$arg" in
    hydra/sweeper=tune) add+=(tune.runoff=0) ;;
  esac
done
for arg in "$@"; do
  case "$arg" in
    tune.runoff=*|--help|-h|--hydra-help|--version|--cfg|--info) add=("${{add[@]/tune.runoff=0}}") ;;
  esac
done
exec {real} "$@" ${{add[@]}}
"""
SHIMS = {
    "jitexp": ("timing=*|--help|-h|--hydra-help|--version|--cfg|--info", "timing=quick"),
    "pytest": ("--jitexp-timing*|--jitexp-disable|--help|-h", "--jitexp-timing=quick"),
}


def shims(folder: Path) -> Path:
    """A folder of `jitexp` and `pytest` wrappers that call the installed commands with the quick timing."""
    folder.mkdir()
    for name, (keep, quick) in SHIMS.items():
        real = command(name)
        (folder / name).write_text(SHIM.format(keep=keep, real=real, quick=quick))
        (folder / name).chmod(0o755)
    return folder


def write_files(blocks: list[Block], folder: Path) -> None:
    for block in blocks:
        if block.kind == "file":
            path = folder / block.arg
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(block.text)


def run_block(block: Block, folder: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-c", block.text] if block.lang == "python" else ["bash", "-e", "-c", block.text]
    return subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=TIMEOUT)


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=str)
def test_docs_page_runs(tmp_path, page):
    blocks = page_blocks(page)
    folder = tmp_path / "reader"
    folder.mkdir()
    write_files(blocks, folder)
    env = {**os.environ, "HYDRA_FULL_ERROR": "0"}
    env.pop("PYTHONPATH", None)  # the installed package, not the source tree
    env.pop("PYTEST_XDIST_WORKER", None)  # this suite may itself run under xdist; a page's pytest does not
    env["PATH"] = os.pathsep.join([str(shims(tmp_path / "shims")), str(Path(sys.executable).parent), env["PATH"]])
    for block in (b for b in blocks if b.kind == "run"):
        done = run_block(block, folder, env)
        assert done.returncode == 0, (
            f"{block.where}: the block exited {done.returncode}:\n{block.text}\n"
            f"--- stdout (tail)\n{done.stdout[-2000:]}\n--- stderr (tail)\n{done.stderr[-3000:]}"
        )


def test_the_pages_with_run_blocks_are_found():
    assert PAGES, "no page of README.md or docs/ has a <!-- run --> block"
    assert all((ROOT / page).exists() for page in PAGES)
