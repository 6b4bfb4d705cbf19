"""`jitexp-history bisect` on a real repository (issue 24): git bisect run over the commits, each measured in one
job against GOOD (envs), finds the commit that made the workload slower, skips a commit whose module does not
import, and leaves the user's checkout as it was. (Its judgement of one commit: tests/unit/test_bisect.py.)"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from helpers import WORK_MODULE, command, git, git_init, run_cli

JOB = [
    "jitexp",
    "workload=custom",
    "workload.fn=wl.step",
    "workload.args=[{shape:[128,128]}]",
    "mode=jit",
    "timing=quick",
]


def repository(
    repo: Path, commits: int, slower_from: int, broken: int | None = None, where: str = "wl.py"
) -> list[str]:
    """A repo of `commits` commits of wl.py (at `where`): twelve times the work from `slower_from`, `broken` does not
    import."""
    git_init(repo)
    (repo / where).parent.mkdir(parents=True, exist_ok=True)
    (repo / ".gitignore").write_text("bisect/\n__pycache__/\n")
    for i in range(1, commits + 1):
        text = WORK_MODULE.format(work=12 if i >= slower_from else 1)
        (repo / where).write_text(text + ("import not_a_module\n" if i == broken else ""))
        git(repo, "add", where, ".gitignore")
        git(repo, "commit", "-qm", f"commit {i}", "--allow-empty")
    return git(repo, "log", "--reverse", "--format=%H").split()


@pytest.mark.slow
def test_bisect_finds_the_commit_that_made_it_slower_and_skips_one_that_does_not_import(tmp_path):
    repo = tmp_path / "repo"
    # a src layout on PYTHONPATH; git's first pick is commit 3: it must be skipped
    commits = repository(repo, 6, slower_from=5, broken=3, where="src/wl.py")
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


def test_bisect_mistakes_are_one_line(tmp_path):
    repo = tmp_path / "repo"
    commits = repository(repo, 2, slower_from=2)
    for args, said in [
        (["nope", commits[1], "--", *JOB], "GOOD='nope' is invalid; not a commit of this repository"),
        ([commits[1], commits[0], "--", *JOB], f"GOOD='{commits[1]}' is invalid; not an ancestor of BAD"),
        ([commits[0], commits[1], "--", "pytest"], "command='pytest' is invalid"),
        ([commits[0], commits[1], "--", *JOB, "-m"], "command='-m' is invalid; bisect measures one job per commit"),
        ([commits[0], commits[1], "--", *JOB, "timing=nope"], "timing='nope' is invalid; valid choices: default"),
        ([commits[0], commits[1], "--metric", "speed", "--", *JOB], "--metric='speed' is invalid"),
    ]:
        proc = run_cli(["bisect", *args], cwd=repo, name="jitexp-history")
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        assert said in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, (args, proc.stderr)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    proc = run_cli(["bisect", "a", "b", "--", *JOB], cwd=outside, name="jitexp-history")
    assert proc.returncode == 2 and "run bisect inside the git repository" in proc.stderr
