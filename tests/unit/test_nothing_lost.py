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
    from jitexp.records import ProcessResult

    calls = iter([ProcessResult(0), KeyboardInterrupt])

    def run_task(task, cfg, handover=None):
        got = next(calls)
        if got is KeyboardInterrupt:
            raise KeyboardInterrupt
        return got

    monkeypatch.setattr(runner, "run_task", run_task)
    with pytest.raises(KeyboardInterrupt):
        runner.collect(job_config(ARGS, timing={"interleave": "processes"}))


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
