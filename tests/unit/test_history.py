"""jitexp-history's timeline (issue 24) from hand-made run folders: runs ordered by the commit they measured (by
their time outside git), one tidy row per run, case and metric with its CI, one line per machine, ok rows only."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import jitexp
from helpers import history_run as run
from jitexp.report.history import cli as history_cli
from jitexp.report.history.timeline import HISTORY_COLUMNS, history, steps_table


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    # folder names sort against the commit order: the timeline must follow the commits
    run(tmp_path, "a", "c3", "2026-01-03T10:00:00+00:00", "2026-02-01T10:00:00", 1.5e-3)
    run(tmp_path, "b", "c1", "2026-01-01T10:00:00+00:00", "2026-02-03T10:00:00", 1.0e-3)
    run(tmp_path, "c", "c2", "2026-01-02T10:00:00+00:00", "2026-02-02T10:00:00", 1.0e-3)
    run(tmp_path, "d", None, None, "2026-01-02T12:00:00+00:00", 1.0e-3)  # outside git: by its time, after c2
    return tmp_path


SAVED = Path(__file__).parents[1] / "data" / "histories"  # made by make.py there


def test_runs_are_ordered_by_commit_and_each_row_is_a_run_case_and_metric(runs):
    tidy = history(str(runs / "*"))
    assert list(tidy.columns) == HISTORY_COLUMNS
    steady = tidy[tidy["metric"] == "steady"]
    assert [Path(r).name for r in steady["run"]] == ["b", "c", "d", "a"]
    assert list(steady["order"]) == [0, 1, 2, 3]
    assert list(steady["code_commit"].fillna("-")) == ["c1", "c2", "-", "c3"]
    assert steady["case"].unique().tolist() == [
        "workload=matmul size=64 dtype=float32 mode=jit"
    ]  # the error rows are not on it
    assert steady["value"].tolist() == pytest.approx([1e-3, 1e-3, 1e-3, 1.5e-3])
    assert steady["ci_low"].tolist() == pytest.approx([0.9e-3, 0.9e-3, 0.9e-3, 1.35e-3])  # the row's own CI
    assert set(tidy["metric"]) == {"steady", "first_call", "compile", "trace"}  # no peak memory recorded: no row
    compile_ = tidy[tidy["metric"] == "compile"].iloc[0]
    assert (compile_["value"], compile_["ci_low"], compile_["ci_high"]) == pytest.approx((0.02, 0.018, 0.03))
    assert (tidy["n_processes"] == 6).all() and (tidy["line"] == 1).all()


def test_a_run_from_another_machine_starts_a_new_line(tmp_path):
    run(tmp_path, "a", "c1", "2026-01-01T10:00:00+00:00", "2026-02-01T10:00:00", 1e-3)
    run(tmp_path, "b", "c2", "2026-01-02T10:00:00+00:00", "2026-02-02T10:00:00", 1e-3, hostname="other-host")
    run(tmp_path, "c", "c3", "2026-01-03T10:00:00+00:00", "2026-02-03T10:00:00", 1e-3)
    steady = history([tmp_path / "a", tmp_path / "b", tmp_path / "c"]).query("metric == 'steady'")
    assert steady["line"].tolist() == [1, 2, 1]
    assert steady["machine"].iloc[1].startswith("other-host | ")


def test_the_command_writes_history_csv_and_a_missing_run_is_one_line(runs, tmp_path, capsys):
    out = tmp_path / "hist"
    assert history_cli.main([str(runs / "*"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert (
        printed.strip()
        == f"4 runs, 1 case, 4 metrics, on 1 machine; 0 steps: {out / 'history.csv'}, {out / 'steps.csv'}, {out / 'index.html'}"
    )
    assert len(pd.read_csv(out / "history.csv")) == 16
    assert jitexp.history(str(runs / "*")).shape == (16, len(HISTORY_COLUMNS))
    assert history_cli.main([str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert said == [
        f"jitexp-history: error: {tmp_path / 'nowhere'}: no run or sweep folder (a folder with results.csv in it or below)"
    ]


def test_a_history_of_twelve_commits_has_exactly_its_two_steps():
    """The issue's history: a 1.5x steady slowdown at commit 7, compile time doubled at commit 10."""
    steps = steps_table(history(str(SAVED / "twelve_commits" / "r*")))
    got = steps[["metric", "commit_before", "commit_after", "direction", "newest"]].values.tolist()
    assert got == [["steady", "c6", "c7", "slower", True], ["compile", "c9", "c10", "slower", True]]
    steady = steps.iloc[0]
    assert steady["ci_low"] < 1.5 < steady["ci_high"] and steady["subject_after"] == "commit c7"
    assert (steady["n_before"], steady["n_after"]) == (6, 6)


def test_twelve_runs_of_one_commit_have_no_step():
    tidy = history(str(SAVED / "unchanged" / "r*"))
    assert tidy["order"].nunique() == 12 and steps_table(tidy).empty


def test_fail_on_step_fails_only_on_a_slower_newest_level_in_a_fail_on_metric(tmp_path, capsys):
    out = str(tmp_path / "out")
    assert history_cli.main([str(SAVED / "slower_newest" / "r*"), "--out", out]) == 0  # without the flag: a report
    printed = capsys.readouterr().out
    assert "1 step: " in printed and "mode=jit steady: 1." in printed and "x slower (95% CI" in printed
    assert 'between c9..c10 "commit c10"' in printed
    assert history_cli.main([str(SAVED / "slower_newest" / "r*"), "--out", out, "--fail-on-step"]) == 1
    assert "slower step(s) in the newest runs" in capsys.readouterr().err
    assert (
        history_cli.main([str(SAVED / "slower_newest" / "r*"), "--out", out, "--fail-on-step", "--fail-on", "compile"])
        == 0
    )
    assert history_cli.main([str(SAVED / "recovered" / "r*"), "--out", out, "--fail-on-step"]) == 0
    steps = pd.read_csv(tmp_path / "out" / "steps.csv")
    assert steps["direction"].tolist() == ["slower", "faster"] and steps["newest"].tolist() == [False, True]


def test_markdown_puts_the_newest_run_against_the_level_before_it(tmp_path, capsys):
    assert history_cli.main([str(SAVED / "twelve_commits" / "r*"), "--out", str(tmp_path / "out"), "--markdown"]) == 0
    text = capsys.readouterr().out.strip().splitlines()
    assert text[0].startswith("**jitexp-history**: newest run c12 (commit c12), jax ")
    assert text[2:4] == ["| case | metric | newest | before | change | step |", "|---|---|---|---|---|---|"]
    rows = {line.split(" | ")[1]: line for line in text[4:]}
    assert set(rows) == {"steady", "first_call", "compile", "trace"}
    assert (
        "(6 runs, c1..c6)" in rows["steady"] and "x slower (95% CI " in rows["steady"] and "since c7" in rows["steady"]
    )
    assert "(9 runs, c1..c9)" in rows["compile"] and "since c10 |" in rows["compile"]
    assert rows["first_call"].endswith("(11 runs, c1..c11) | 1x |  |")  # no step: the level is every earlier run


def test_the_progress_line_shows_only_past_two_seconds(capsys, monkeypatch):
    quick = history_cli.Progress()
    for done in (1, 2, 3):
        quick(done, 3)  # well under 2 s: nothing
    assert capsys.readouterr().err == ""
    slow = history_cli.Progress()
    monkeypatch.setattr(slow, "start", slow.start - 5)  # reading began 5 s ago
    for done in (1, 2, 3):
        slow(done, 3)
    assert capsys.readouterr().err == "\rreading runs: 1/3\rreading runs: 2/3\rreading runs: 3/3\n"


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (
            ["--fail-on", "steady,speed"],
            "--fail-on='speed' is invalid; valid choices: steady, first_call, compile, trace, peak_memory_bytes, "
            "temp_bytes, device_peak_bytes, peak_rss_growth_bytes",
        ),
        (["--threshold", "1.5"], "--threshold=1.5 is invalid; must lie in [0, 1)"),
    ],
)
def test_a_bad_option_is_one_line(args, said, tmp_path, capsys):
    assert history_cli.main([str(SAVED / "unchanged" / "r*"), "--out", str(tmp_path), *args]) == 2
    assert capsys.readouterr().err.splitlines() == [f"jitexp-history: error: {said}"]
    assert not (tmp_path / "history.csv").exists()


def test_a_memory_step_reads_as_bytes_not_as_an_infinite_ratio():
    """jitexp-history printed `temp_bytes: infx the memory (95% CI infx-infx)` for temporaries that grew from 0 bytes
    (a real 8-commit history), and `(95% CI 2x-2x)` for XLA's exact figures."""
    from jitexp.report.history.timeline import step_change

    def step(metric, ratio, low, high):
        return pd.Series({"metric": metric, "ratio": ratio, "ci_low": low, "ci_high": high})

    inf = float("inf")
    assert step_change(step("temp_bytes", inf, inf, inf)) == "more memory, from none"
    assert step_change(step("temp_bytes", 2.0, 2.0, 2.0)) == "2x the memory"
    assert step_change(step("device_peak_bytes", 1.5, 1.41, 1.6)) == "1.5x the memory (95% CI 1.41x-1.6x)"
    assert step_change(step("steady", 1.5, 1.41, 1.6)).startswith("1.5x slower")
