"""`jitexp-history bisect`'s judgement of one commit, from hand-made job rows (what each exit code tells git bisect
run), and its reading of the command and of git's answer. The bisect itself, on a real repository:
tests/e2e/test_bisect.py."""

from __future__ import annotations

import pandas as pd
import pytest

from jitexp.bisection import (
    EXIT_ABORT,
    EXIT_BAD,
    EXIT_GOOD,
    EXIT_SKIP,
    _first_bad,
    jitexp_args,
    refuse,
    verdict,
)
from jitexp.errors import ConfigError


def rows(*tested: dict, good_status: str = "ok") -> pd.DataFrame:
    """A job with envs: GOOD's row, then one row per dict for the tested commit (ab_steady_* from the dict)."""
    out = [{"env": "good", "mode": "jit", "status": good_status, "error_type": "", "error_message": ""}]
    for t in tested:
        out.append({"env": "test", "mode": t.get("mode", "jit"), "status": t.get("status", "ok"), **t})
    return pd.DataFrame(out)


def change(ratio: float, said: str, low: float = 0.9, high: float = 1.1, p_value: float | None = None) -> dict:
    significant = said in ("slower", "faster")
    return {
        "ab_steady_ratio": ratio,
        "ab_steady_verdict": said,
        "ab_steady_ratio_ci_low": low,
        "ab_steady_ratio_ci_high": high,
        "ab_steady_p_value": p_value if p_value is not None else (0.01 if significant else 0.5),
    }


def test_bad_against_good_is_slower_when_significant_and_beyond_the_threshold():
    code, seen, slower = verdict(rows(change(1.5, "slower", 1.4, 1.6)), "steady", 0.05)
    assert (code, seen, slower) == (EXIT_BAD, "jit steady 1.5x [1.4, 1.6] slower", {"jit": 1.5})
    assert verdict(rows(change(1.01, "no significant change")), "steady", 0.05)[0] == EXIT_GOOD
    # significant, but under --threshold=0.2: not the step
    assert verdict(rows(change(1.1, "slower", 1.08, 1.12)), "steady", 0.2)[0] == EXIT_GOOD
    # --threshold below the verdict's own 5%: a significant 3% is the step (the p-value decides, not the verdict)
    assert verdict(rows(change(1.03, "no significant change", 1.02, 1.04, p_value=0.01)), "steady", 0.02)[0] == EXIT_BAD
    assert verdict(rows(change(1.03, "no significant change", 0.98, 1.08, p_value=0.2)), "steady", 0.02)[0] == EXIT_GOOD
    assert verdict(rows(change(0.6, "faster")), "steady", 0.05)[0] == EXIT_GOOD


def test_a_commit_is_slower_when_nearer_bad_s_level_than_good_s():
    bad = {"jit": 1.5}  # BAD measured 1.5x GOOD: the midpoint in log is 1.22x
    assert verdict(rows(change(1.3, "slower")), "steady", 0.05, bad)[0] == EXIT_BAD
    code, seen, _ = verdict(rows(change(1.15, "slower")), "steady", 0.05, bad)  # significant, but nearer GOOD
    assert code == EXIT_GOOD and seen.endswith("; 0.34 of the way to BAD")
    assert verdict(rows(change(0.9, "faster")), "steady", 0.05, bad)[0] == EXIT_GOOD


def test_the_position_is_averaged_over_the_modes_that_stepped_at_bad():
    tested = rows(change(2.0, "slower"), {"mode": "eager", **change(1.0, "no significant change")})
    assert verdict(tested, "steady", 0.05, {"jit": 2.0})[0] == EXIT_BAD  # eager did not step at BAD: not judged
    # jit all the way (1.0), eager none of it (0.0): 0.5 is not beyond the midpoint
    assert verdict(tested, "steady", 0.05, {"jit": 2.0, "eager": 3.0})[0] == EXIT_GOOD
    tested = rows(change(2.0, "slower"), {"mode": "eager", **change(2.0, "slower")})
    assert verdict(tested, "steady", 0.05, {"jit": 2.0, "eager": 3.0})[0] == EXIT_BAD  # (1 + 0.63) / 2
    assert verdict(rows(change(2.0, "slower")), "steady", 0.05, {"aot": 2.0})[0] == EXIT_SKIP


def test_a_mode_without_a_ratio_skips_only_when_it_is_judged():
    no_ratio = {"mode": "numpy", "ab_steady_ratio": float("nan"), "ab_steady_verdict": ""}  # e.g. numpy's compile
    tested = rows(change(2.0, "slower", 1.9, 2.1), no_ratio)
    assert verdict(tested, "steady", 0.05)[0] == EXIT_BAD  # BAD against GOOD: judged on the modes with a ratio
    assert verdict(tested, "steady", 0.05, {"jit": 2.0})[0] == EXIT_BAD  # numpy did not step: not judged
    assert verdict(rows(no_ratio), "steady", 0.05)[0] == EXIT_SKIP  # no mode has one


def test_a_commit_that_cannot_be_measured_is_skipped():
    broken = {"status": "error", "error_type": "ImportError", "error_message": "No module named 'x'"}
    code, seen, _ = verdict(rows(broken), "steady", 0.05, {"jit": 2.0})
    assert (code, seen) == (EXIT_SKIP, "cannot measure: ImportError: No module named 'x'")
    assert verdict(pd.DataFrame(), "steady", 0.05)[0] == EXIT_SKIP  # the job wrote nothing (jitexp refused it)
    assert verdict(rows(change(3.0, "cannot tell (1 process pair)")), "steady", 0.05, {"jit": 2.0})[0] == EXIT_SKIP


def test_good_failing_aborts_the_bisect():
    code, seen, _ = verdict(rows(change(1.5, "slower"), good_status="error"), "steady", 0.05, {"jit": 1.5})
    assert code == EXIT_ABORT and seen.startswith("GOOD failed")


def test_the_judged_metric_is_the_one_asked_for():
    tested = rows(
        {
            **change(1.0, "no significant change"),
            "ab_compile_ratio": 2.0,
            "ab_compile_verdict": "slower",
            "ab_compile_p_value": 0.01,
        }
    )
    assert verdict(tested, "steady", 0.05)[0] == EXIT_GOOD
    assert verdict(tested, "compile", 0.05)[0] == EXIT_BAD
    assert verdict(tested, "compile", 0.05, {"jit": 2.0})[0] == EXIT_BAD


def test_the_command_is_a_jitexp_command():
    assert jitexp_args(["jitexp", "size=10", "mode=jit"]) == ["size=10", "mode=jit"]
    assert jitexp_args(["/venv/bin/jitexp", "size=10"]) == ["size=10"]
    assert jitexp_args(["python3", "-m", "jitexp", "size=10"]) == ["size=10"]
    with pytest.raises(ConfigError, match=r"^command='pytest -q' is invalid; give the job after --"):
        jitexp_args(["pytest", "-q"])
    with pytest.raises(ConfigError, match=r"^command is invalid"):
        jitexp_args([])


@pytest.mark.parametrize(
    ("arg", "why"),
    [
        ("-m", "one job per commit"),
        ("--multirun", "one job per commit"),
        ("envs={a:x,b:y}", "sets envs itself"),
        ("+variants.fast.size=10", "sets envs itself"),
    ],
)
def test_what_a_bisect_job_cannot_hold_is_one_line(arg, why):
    with pytest.raises(ConfigError, match=why) as raised:
        refuse(["size=10", arg])
    assert "\n" not in str(raised.value) and repr(arg) in str(raised.value)


def test_git_s_answer_is_read():
    sha = "a" * 40
    said = ["Bisecting: 0 revisions left", f"{sha} is the first bad commit", "commit " + sha, "    commit 5"]
    assert _first_bad(said) == [sha]
    other = "b" * 40
    skipped = [
        "There are only 'skip'ped commits left to test.",
        "The first bad commit could be any of:",
        sha,
        other,
        "We cannot bisect more!",
    ]
    assert _first_bad(skipped) == [sha, other]
    assert _first_bad(["bisect run failed"]) == []


def test_bisect_is_jitexp_s_from_python():
    import jitexp
    from jitexp import bisection

    assert jitexp.bisect is bisection.bisect and "bisect" in jitexp.__all__


def test_out_holding_a_users_files_or_below_a_file_is_refused(tmp_path):
    """bisect replaces bisect.csv and steps.jsonl and empties runs/<commit>/ in --out: a user's files there are
    refused in one line, and so is an --out that cannot be written (issue 57: not probed before). Through the
    command: tests/inprocess/test_one_line_failures.py."""
    from jitexp.bisection import claim_out
    from jitexp.store.owned import NotOurs

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "bisect.csv").write_text("my,own\n")
    with pytest.raises(NotOurs, match=r"mine holds bisect.csv, which jitexp-history bisect did not write"):
        claim_out(mine)
    (mine / "bisect.csv").unlink()
    (mine / "runs" / "abc").mkdir(parents=True)
    with pytest.raises(NotOurs, match=r"mine holds runs/, which jitexp-history bisect did not write"):
        claim_out(mine)
    fresh = tmp_path / "fresh"
    claim_out(fresh)
    (fresh / "runs").mkdir()
    (fresh / "bisect.csv").write_text("ours\n")
    claim_out(fresh)  # its own files from an earlier bisect
    claim_out(mine / "runs", default=True)  # the default folder before the list: bisect's
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigError, match=r"^--out='.*file/out' is invalid; cannot be written: Not a directory$"):
        claim_out(tmp_path / "file" / "out")
