"""`jitexp-history bisect` on a real repository (issue 24): git bisect run over the commits, each measured in one
job against GOOD (envs), finds the commit that made the workload slower, skips a commit whose module does not
import, and leaves the user's checkout as it was. (Its judgement of one commit: tests/unit/test_bisect.py; its
one-line mistakes: tests/inprocess/test_bisect_mistakes.py.)"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from helpers import BISECT_JOB as JOB
from helpers import bisect_repository, command, git


@pytest.mark.slow
def test_bisect_finds_the_commit_that_made_it_slower_and_skips_one_that_does_not_import(tmp_path):
    repo = tmp_path / "repo"
    # a src layout on PYTHONPATH; git's first pick is commit 3: it must be skipped
    commits = bisect_repository(repo, 6, slower_from=5, broken=3, where="src/wl.py")
    (repo / "src" / "wl.py").write_text("# an uncommitted edit in the user's checkout: no step() here\n")
    env = {**os.environ, "PYTHONPATH": str(repo / "src"), "HYDRA_FULL_ERROR": "0"}  # moved to each commit's src/
    proc = subprocess.run(
        [command("jitexp-history"), "bisect", commits[0], commits[-1], "--", *JOB],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    table = pd.read_csv(repo / "bisect" / "bisect.csv")
    assert f"first slower commit: {commits[4]} 'commit 5'" in proc.stdout, (proc.stdout, table.to_string())
    verdicts = dict(zip(table["subject"], table["verdict"]))
    assert verdicts["commit 6"] == "slower"  # BAD is measured against GOOD first
    assert verdicts["commit 3"] == "skipped" and "not_a_module" in table.set_index("subject")["seen"]["commit 3"]
    assert verdicts["commit 5"] == "slower"
    assert table.loc[table["first_slower"], "subject"].tolist() == ["commit 5"]
    assert all(v == "good" for s, v in verdicts.items() if s in ("commit 2", "commit 4"))
    runs = pd.concat(
        [pd.read_csv(Path(run) / "results.csv") for run in table["run"] if Path(run, "results.csv").exists()]
    )
    assert set(runs["env"]) == {"good", "test"} and (runs["n_processes"] >= 6).all()  # paired, 6 pairs at least
    measured = {run: commit for run, commit in zip(table["run"], table["commit"]) if Path(run, "results.csv").exists()}
    for run, commit in measured.items():  # each run's provenance is the commit it tested, found in its worktree
        assert set(pd.read_csv(Path(run) / "results.csv")["code_commit"]) == {commit}, run
    # the user's checkout, branch and worktrees are as they were
    assert (repo / "src" / "wl.py").read_text().startswith("# an uncommitted edit in the user's checkout")
    assert git(repo, "rev-parse", "HEAD") == commits[-1] and git(repo, "branch", "--show-current") == "master"
    assert len(git(repo, "worktree", "list").splitlines()) == 1
