"""The README's own-workload example, written and run exactly as printed, from a fresh directory."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from conftest import read, run_cli
from jitexp import preflight

README = Path(__file__).resolve().parents[1] / "README.md"


def own_workload(tmp_path: Path) -> list[list[str]]:
    """Write the section's `<!-- file: PATH -->` blocks under tmp_path; return its commands, split."""
    text = README.read_text()
    section = text[text.index("## Your own workload"):text.index("## Running on a cluster")]
    files = re.findall(r"<!-- file: (\S+) -->\n```\w*\n(.*?)```", section, re.S)
    assert {path for path, _ in files} == {"mylosses.py", "myconf/workload/myloss.yaml"}
    for path, body in files:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(body)
    block = re.search(r"<!-- commands -->\n```bash\n(.*?)```", section, re.S).group(1)
    commands = [shlex.split(line) for line in block.splitlines() if line.strip()]
    assert commands and all(c[0] == "jitexp" for c in commands)
    return commands


def test_readme_example_passes_every_check_before_running(tmp_path, monkeypatch):
    commands = own_workload(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # what cli.main does for the current directory
    for argv in commands:
        jobs = preflight.check(argv[1:])  # composes, validates, imports mylosses.myloss, checks its arity
        assert len(jobs) == 1 and jobs[0].workload.fn == "mylosses.myloss"
        assert len(jobs[0].workload.args) == 3


@pytest.mark.parametrize("index", [0, 1])
def test_readme_example_runs_verbatim(tmp_path, index):
    # needs engine: runs a measured job (timing=quick) through the installed command
    argv = own_workload(tmp_path)[index]
    out = tmp_path / "job"
    proc = run_cli([*argv[1:], "timing=quick", f"hydra.run.dir={out}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = read(out / "results.csv")
    assert (rows["status"] == "ok").all(), rows[["mode", "status", "error_message"]]
