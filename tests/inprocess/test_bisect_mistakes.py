"""`jitexp-history bisect`'s mistakes are one line on stderr and exit code 2, before anything is measured: commits
that are not GOOD before BAD, a command that is not one jitexp job, a job jitexp would refuse, an unknown metric,
and a folder outside a repository. (The command itself, end to end: tests/e2e/test_bisect.py.)"""

from __future__ import annotations

from helpers import BISECT_JOB as JOB
from helpers import bisect_repository
from jitexp.bisection import history_main


def test_bisect_mistakes_are_one_line(tmp_path, monkeypatch, capsys):
    repo = tmp_path / "repo"
    commits = bisect_repository(repo, 2, slower_from=2)
    monkeypatch.chdir(repo)
    for args, said in [
        (["nope", commits[1], "--", *JOB], "GOOD='nope' is invalid; not a commit of this repository"),
        ([commits[1], commits[0], "--", *JOB], f"GOOD='{commits[1]}' is invalid; not an ancestor of BAD"),
        ([commits[0], commits[1], "--", "pytest"], "command='pytest' is invalid"),
        ([commits[0], commits[1], "--", *JOB, "-m"], "command='-m' is invalid; bisect measures one job per commit"),
        ([commits[0], commits[1], "--", *JOB, "timing=nope"], "timing='nope' is invalid; valid choices: default"),
        ([commits[0], commits[1], "--metric", "speed", "--", *JOB], "--metric='speed' is invalid"),
    ]:
        code = history_main(["bisect", *args])
        out, err = capsys.readouterr()
        assert code == 2, (args, out, err)
        assert said in err and len(err.strip().splitlines()) == 1, (args, err)
        assert not (repo / "bisect").exists(), args  # refused before anything was written
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    monkeypatch.chdir(outside)
    assert history_main(["bisect", "a", "b", "--", *JOB]) == 2
    assert "run bisect inside the git repository" in capsys.readouterr().err
