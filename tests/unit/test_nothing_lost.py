"""Nothing lost, anywhere (issue 57, item 1), where pure logic sees it: a Ctrl-C keeps the processes that finished and
says what it kept; resuming into a folder of another config, saving over results, replacing a larger sweep and
writing over a user's files each refuse in one line or keep every old row. The folders and signals themselves:
tests/e2e/test_ctrl_c.py and tests/e2e/test_nothing_lost.py."""

from __future__ import annotations

import pandas as pd
import pytest

from helpers import job_config

ARGS = [{"shape": [8]}]


# ---- Ctrl-C ----------------------------------------------------------------------------------------------------


def test_a_sweep_stopped_before_any_row_prints_its_summary():
    """The gathered frame of a sweep whose first job never ended has no rows: its summary once raised pandas'
    `Can only use .str accessor with string values` after `jitexp: interrupted (Ctrl-C)`."""
    from jitexp.report.run.terminal import format_sweep_summary
    from jitexp.store.csvio import typed
    from jitexp.store.folders import SweepState
    from jitexp.store.schema import COLUMNS

    empty = typed(pd.DataFrame(columns=COLUMNS, dtype=str))
    text = format_sweep_summary(empty, SweepState(3, missing=[(0, "size=4"), (1, "size=8"), (2, "size=16")]))
    assert text.startswith("jitexp: 3 jobs: 0 rows, 3 never finished: #0 size=4")


def test_ctrl_c_after_some_processes_keeps_them_as_the_jobs_rows(monkeypatch):
    from jitexp.engine import runner
    from jitexp.records import INTERRUPTED, ProcessResult

    ran = []

    def run_task(task, cfg, handover=None):
        if len(ran) == 2:
            raise KeyboardInterrupt
        ran.append(task.process)
        return ProcessResult(task.process)

    monkeypatch.setattr(runner, "run_task", run_task)
    cfg = job_config(ARGS, timing={"processes": 5, "max_processes": 5})
    processes, why, replaced = runner.collect(cfg)
    assert [p.process for p in processes] == [0, 1] and why == INTERRUPTED and replaced == []

    ran.clear()
    ran.extend([0, 1])  # interrupted before any process finished: nothing to keep, the interrupt goes on
    with pytest.raises(KeyboardInterrupt):
        runner.collect(cfg)


def test_ctrl_c_keeps_nothing_where_processes_pair_up(monkeypatch):
    """timing.interleave=processes pairs one mode's process with the other's: half a pair is no row."""
    from jitexp.engine import runner
    from jitexp.errors import Interrupted
    from jitexp.records import ProcessResult

    calls = iter([ProcessResult(0), KeyboardInterrupt])

    def run_task(task, cfg, handover=None):
        got = next(calls)
        if got is KeyboardInterrupt:
            raise KeyboardInterrupt
        return got

    monkeypatch.setattr(runner, "run_task", run_task)
    with pytest.raises(Interrupted) as stopped:
        runner.collect(job_config(ARGS, timing={"interleave": "processes"}))
    assert stopped.value.result is None and stopped.value.finished == 1  # the driver says it discarded 1


def test_rows_kept_by_a_ctrl_c_are_no_complete_job_for_resume(tmp_path):
    from jitexp.store.csvio import write_csv
    from jitexp.store.folders import is_complete

    row = {"mode": "jit", "config_hash": "abc", "job_num": 0, "overrides": "size=8", "stop_reason": "ci"}
    write_csv(pd.DataFrame([row]), tmp_path / "results.csv")
    assert is_complete(tmp_path, "abc", 0, "size=8")
    write_csv(pd.DataFrame([{**row, "stop_reason": "interrupted"}]), tmp_path / "results.csv")
    assert not is_complete(tmp_path, "abc", 0, "size=8")


@pytest.mark.parametrize(
    ("running", "said"),
    [
        ({}, "jitexp: stopped before any job started: nothing was measured or written"),
        (
            {"where": "out/run/x/"},
            "jitexp: the job stopped before any of its processes finished: nothing of it is kept",
        ),
        ({"where": "x/", "kept": "kept the 2 processes of job #0 that finished: x/results.csv"}, "jitexp: kept the 2"),
    ],
)
def test_ctrl_c_says_what_it_kept(monkeypatch, capsys, running, said):
    from jitexp import cli

    monkeypatch.setattr(cli, "_running", running)
    monkeypatch.setattr("signal.signal", lambda *a: None)  # the test process keeps its own Ctrl-C
    assert cli._stopped("interrupted (Ctrl-C)", 130) == 130
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0] == "jitexp: interrupted (Ctrl-C)" and lines[1].startswith(said) and len(lines) == 2


# ---- the run's folder: its own, resumed, replaced, saved into ------------------------------------------------------


def test_two_runs_of_one_clock_named_folder_each_claim_their_own(tmp_path):
    from jitexp.store.folders import claim_folder

    name = tmp_path / "outputs" / "run" / "2026-12-06_14-43-12"
    assert claim_folder(name) == name and name.is_dir()
    assert claim_folder(name) == name.with_name("2026-12-06_14-43-12_2")
    assert claim_folder(name) == name.with_name("2026-12-06_14-43-12_3")


def _job_rows(folder, *, num=0, digest="h0", overrides="size=64"):
    from jitexp.store.csvio import write_csv

    rows = [{"mode": "jit", "job_num": num, "overrides": overrides, "config_hash": digest, "status": "ok"}]
    write_csv(pd.DataFrame(rows), folder / "results.csv")


def test_resume_refuses_a_folder_whose_rows_are_of_another_config(tmp_path):
    from jitexp.store.folders import resume_conflict

    _job_rows(tmp_path / "run", overrides="size=64")
    assert resume_conflict(tmp_path / "run", ["h0"], ["size=64"], sweep=False) == ""  # the same job: skipped later
    assert resume_conflict(tmp_path / "run", [None], ["size=64"], sweep=False) == ""  # cannot tell before the job
    assert resume_conflict(tmp_path / "run", ["h1"], ["size=128 resume=true"], sweep=False) == (
        "resume=true, but it holds the rows of another config (size=64, where this run has size=128): this run would "
        "replace them; resume with that config, write overwrite=true to replace them, or another hydra.run.dir"
    )
    assert "(size=64: the same overrides, so a config file or a default changed, where this run has today's)" in (
        resume_conflict(tmp_path / "run", ["h1"], ["size=64"], sweep=False)
    )
    assert "(size=64, where this run has none of them)" in resume_conflict(tmp_path / "run", ["h1"], [""], sweep=False)
    assert "(no seed=1, where this run has seed=1)" in (
        resume_conflict(tmp_path / "run", ["h1"], ["size=64 seed=1"], sweep=False)
    )


def test_resume_refuses_a_sweep_folder_of_another_sweep(tmp_path):
    from jitexp.store.folders import resume_conflict, write_manifest

    sweep = tmp_path / "sweep"
    write_manifest(sweep, [["size=64"], ["size=128"]])
    _job_rows(sweep / "0", num=0, digest="h64", overrides="size=64")
    _job_rows(sweep / "1", num=1, digest="h128", overrides="size=128")
    # the same sweep, and the same sweep with a point more: every old job keeps its rows
    assert resume_conflict(sweep, ["h64", "h128"], ["size=64", "size=128"], sweep=True) == ""
    assert resume_conflict(sweep, ["h64", "h128", "h256"], ["size=64", "size=128", "size=256"], sweep=True) == ""
    # another point as job #0 (issue 57: its rows and jobs.csv were overwritten)
    assert resume_conflict(sweep, ["h256"], ["size=256"], sweep=True).startswith(
        "resume=true, but its job #0 is another config (size=64, where this sweep's #0 has size=256): resuming would "
        "replace its rows;"
    )
    # fewer points: job #1's rows would be left out of the gathered results.csv
    assert resume_conflict(sweep, ["h64"], ["size=64"], sweep=True) == (
        "resume=true, but it holds job #1 (size=128), which this sweep of 1 job does not have: its rows would be left "
        "out; resume the sweep that made it, write overwrite=true to replace it, or another hydra.sweep.dir"
    )


def test_overwrite_removes_every_result_an_earlier_sweep_left(tmp_path):
    """A 3-job sweep replaced by a 1-job one: no job folder of the old one is left for jitexp-history or
    jitexp-compare to read as part of the new one."""
    from jitexp.store.folders import clear_results, held_results, job_result_files, write_manifest

    sweep = tmp_path / "sweep"
    write_manifest(sweep, [["size=1"], ["size=2"], ["size=3"]])
    for num in range(3):
        _job_rows(sweep / str(num), num=num)
        (sweep / str(num) / "samples.csv").write_text("x\n1\n")
    (sweep / "notes.txt").write_text("mine")
    assert clear_results(sweep) == ["jobs.csv", "0/results.csv", "1/results.csv", "2/results.csv"]
    assert held_results(sweep) == [] and job_result_files(sweep) == []
    assert (sweep / "notes.txt").read_text() == "mine" and not (sweep / "1" / "samples.csv").exists()


def test_result_save_refuses_a_folder_that_holds_results(tmp_path):
    from jitexp.api import Measurement
    from jitexp.errors import ConfigError
    from jitexp.records import JobResult

    first = Measurement(JobResult([{"mode": "jit", "status": "ok", "median_s": 1.0}]))
    second = Measurement(JobResult([{"mode": "jit", "status": "ok", "median_s": 2.0}]))
    first.save(tmp_path / "a")
    with pytest.raises(ConfigError) as refused:
        second.save(tmp_path / "a")
    assert str(refused.value) == (
        f"folder='{tmp_path / 'a'}' is invalid; already holds results (results.csv); save(folder, overwrite=True) "
        "replaces them, or save into another folder"
    )
    assert pd.read_csv(tmp_path / "a" / "results.csv")["median_s"].tolist() == [1.0]  # the first save is kept
    second.save(tmp_path / "a", overwrite=True)
    assert pd.read_csv(tmp_path / "a" / "results.csv")["median_s"].tolist() == [2.0]
    # a command-line run's folder (a sweep's job folders below it) is results too
    _job_rows(tmp_path / "cli" / "0")
    with pytest.raises(ConfigError, match=r"already holds results \(0/results.csv\)"):
        second.save(tmp_path / "cli")


# ---- no command replaces a file it did not write without a word -----------------------------------------------------

RUNS = __import__("pathlib").Path(__file__).parents[1] / "data" / "runs"


def test_an_output_folder_lists_what_jitexp_wrote_and_refuses_the_rest(tmp_path):
    from jitexp.store.owned import NotOurs, foreign, record, refuse_foreign

    (tmp_path / "index.html").write_text("mine")
    assert foreign(tmp_path, ["index.html", "summary.md"]) == ["index.html"]  # summary.md is not there
    assert foreign(tmp_path, ["index.html"], default=True) == []  # a command's own default folder before the list
    with pytest.raises(NotOurs, match=r"holds index.html, which jitexp-report did not write and would replace"):
        refuse_foreign(tmp_path, ["index.html"], "jitexp-report")
    record(tmp_path, ["summary.md"])
    assert foreign(tmp_path, ["index.html"], default=True) == ["index.html"]  # a list now: only it says what is ours
    record(tmp_path, ["index.html"])
    assert foreign(tmp_path, ["index.html", "summary.md"]) == []


def test_report_compare_and_history_refuse_a_users_file_in_out(tmp_path, capsys):
    import shutil

    from jitexp.report.compare import cli as compare_cli
    from jitexp.report.history import cli as history_cli
    from jitexp.report.run import build

    run = shutil.copytree(RUNS / "main", tmp_path / "run")
    out = tmp_path / "mine"
    out.mkdir()
    for name in ("index.html", "compare.md", "history.csv"):
        (out / name).write_text("mine")
    capsys.readouterr()
    assert build.main([str(run), "--no-plots", "-q", "--out", str(out)]) == 2
    assert compare_cli.main([str(run), str(run), "--no-plot", "--out", str(out)]) == 2
    assert history_cli.main([str(run), "--out", str(out)]) == 2
    said = capsys.readouterr()
    assert said.err.splitlines() == [
        f"jitexp-{command}: error: {out} holds {name}, which jitexp-{command} did not write and would replace; choose "
        "another --out, or move them away"
        for command, name in (
            ("report", "index.html"),
            ("compare", "compare.md"),
            ("history", "history.csv, index.html"),
        )
    ]
    assert said.out == "" and all((out / name).read_text() == "mine" for name in ("index.html", "compare.md"))
    # a folder of its own: written, then replaced by the next run of the same command without a word
    fresh = tmp_path / "fresh"
    assert build.main([str(run), "--no-plots", "-q", "--out", str(fresh)]) == 0
    assert build.main([str(run), "--no-plots", "-q", "--out", str(fresh)]) == 0
    assert (
        history_cli.main([str(run), "--out", str(fresh)]) == 0
        and history_cli.main([str(run), "--out", str(fresh)]) == 0
    )
