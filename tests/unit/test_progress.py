"""The job's status line and plain lines (engine.progress): what they say, from plain records."""

from __future__ import annotations

import dataclasses
import io

import numpy as np

from jitexp.engine.progress import (
    Quiet,
    Standing,
    Status,
    Sweep,
    estimate_text,
    eta_s,
    live_wanted,
    phase_words,
    process_text,
    quiet_text,
    status_text,
)
from jitexp.records import ModeResult, ProcessResult


def process(i: int, eager: float, jit: float, wall: float = 2.0) -> ProcessResult:
    modes = {"eager": ModeResult(samples_s=np.array([eager] * 3)), "jit": ModeResult(samples_s=np.array([jit] * 3))}
    return ProcessResult(i, modes=modes, phases={"sampling": wall}, measure_s=wall, driver_wall_s=wall)


def test_the_estimate_is_each_modes_median_and_the_per_process_ratios_with_their_range():
    results = [process(0, 2e-3, 1e-3), process(1, 3e-3, 1e-3), process(2, 4e-3, 1e-3)]
    assert estimate_text(["eager", "jit"], results) == (
        "medians so far: eager 3 ms, jit 1 ms; eager/jit 3x (3 processes ranged 2x-4x)"
    )
    assert estimate_text(["eager", "jit"], results[:1]) == "eager 2 ms, jit 1 ms; eager/jit 2x"
    assert estimate_text(["eager", "jit"], []) == ""


def test_eta_counts_the_processes_still_to_come_and_the_sweeps_jobs():
    s = Standing(["eager", "jit"], at_least=6, results=[process(0, 2, 1), process(1, 2, 1)], started=100.0)
    assert eta_s(s, now=104.0) == 8.0  # 2 s a process, 4 to come
    s.results = [process(i, 2, 1) for i in range(6)]
    assert eta_s(s, now=112.0) == 0.0
    s.sweep = Sweep(job=2, jobs=5, elapsed_s=40.0)  # 20 s a job before this one, 2 more after it
    assert eta_s(s, now=112.0) == 40.0
    assert eta_s(Standing(["jit"], at_least=6, started=0.0), now=1.0) is None


def test_the_status_line_names_the_job_the_process_the_phase_and_the_time_left():
    s = Standing(["eager", "jit"], 6, results=[process(0, 2e-3, 1e-3)], running=1, phase="compile", started=0.0)
    s.sweep = Sweep(job=0, jobs=3, elapsed_s=0.0)
    text = status_text(s, now=2.0)
    assert (
        text
        == "job 1/3 \u00b7 process 2 of at least 6 \u00b7 compile \u00b7 eager 2 ms, jit 1 ms; eager/jit 2x \u00b7 2 s, ~10 s left"
    )
    s.sweep = Sweep(0, 1, 0.0)  # a single job names no job
    assert status_text(s, now=2.0).startswith("process 2 of at least 6 \u00b7 compile")


def test_a_plain_line_per_finished_process():
    s = Standing(["eager", "jit"], 6, results=[process(0, 2e-3, 1e-3, wall=1.5)], started=0.0)
    assert process_text(s, s.results[0], now=1.5) == (
        "process 1 of at least 6 done in 1.5 s: eager 2 ms, jit 1 ms; eager/jit 2x; ~7.5 s left"
    )


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_live_line_only_on_a_terminal_outside_ci_unless_asked(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    assert live_wanted(None, Terminal()) and not live_wanted(None, io.StringIO())
    assert live_wanted(True, io.StringIO()) and not live_wanted(False, Terminal())
    monkeypatch.setenv("CI", "true")
    assert not live_wanted(None, Terminal())


def test_past_the_fewest_processes_the_line_names_the_most():
    s = Standing(["jit"], at_least=6, at_most=12, running=7, phase="first_call", started=0.0)
    assert status_text(s, now=1.0) == "process 8 of at most 12 \u00b7 first call \u00b7 1 s"
    s.running = 5
    assert status_text(s, now=1.0).startswith("process 6 of at least 6 \u00b7")


def test_a_fixed_number_of_processes_is_named_as_it_is():
    """timing=quick runs one process of one: the line said "process 1 of at least 1"."""
    s = Standing(["jit"], at_least=1, at_most=1, running=0, phase="first_call", started=0.0)
    assert status_text(s, now=1.0) == "process 1 of 1 \u00b7 first call \u00b7 1 s"


# ---- a quiet process says where it is (issue 57, item 6) ----------------------------------------------------------


def lines_of(events: list[tuple[float, str]], until: float, tick_s: float = 0.5) -> list[tuple[float, str]]:
    """The quiet lines a process started at 0 shows, ticked each tick_s, given its phases' (time, name) changes."""
    quiet, shown, pending = Quiet(), [], sorted(events)
    quiet.begin(0.0)
    for step in range(int(until / tick_s) + 1):
        now = step * tick_s
        while pending and pending[0][0] <= now:
            at, name = pending.pop(0)
            quiet.enter(name, at)
        if quiet.due(now):
            shown.append((now, quiet.phase))
            quiet.shown(now)
    return shown


def test_a_process_quiet_for_10_s_says_where_it_is_and_again_each_10_s():
    assert lines_of([], until=9.5) == []
    assert lines_of([], until=35.0) == [(10.0, "start"), (20.0, "start"), (30.0, "start")]


def test_after_its_first_line_a_new_phase_is_said_once_it_has_lasted_1_s_not_more_often():
    # matmul size=6000 as issue 57 found it: the first call, 16 s of checks, 26 s of device time
    events = [(2.0, "first_call"), (12.0, "check"), (28.0, "device_time")]
    assert lines_of(events, until=55.0) == [
        (10.0, "first_call"),
        (13.0, "check"),  # a new phase, 1 s in
        (23.0, "check"),
        (29.0, "device_time"),
        (39.0, "device_time"),
        (49.0, "device_time"),
    ]
    # phases shorter than a second get no line of their own; none before the first 10 s
    short = [(1.0, "first_call"), (10.2, "memory"), (10.6, "peaks"), (11.0, "sampling")]
    assert lines_of(short, until=21.0) == [(10.0, "first_call"), (12.0, "sampling")]


def test_a_process_that_shows_its_end_before_10_s_prints_no_quiet_line():
    quiet = Quiet()
    quiet.begin(0.0)
    quiet.enter("sampling", 3.0)
    assert not quiet.due(9.75)
    quiet.begin(9.75)  # the next process: counted from its own start
    assert not quiet.due(19.5)
    assert quiet.due(19.75)


def test_the_quiet_line_names_the_process_the_phase_and_both_times():
    s = Standing(["eager", "jit"], 6, running=0, started=0.0, sweep=Sweep(job=1, jobs=3, elapsed_s=5.0))
    quiet = Quiet()
    quiet.begin(1.0)
    quiet.enter("check", 9.0)
    assert quiet_text(s, quiet, 21.0) == (
        "job 2/3: process 1 of at least 6 still running after 20 s: in the checks for 12 s"
    )
    quiet.enter("opened tpu", 21.0)
    assert quiet_text(dataclasses.replace(s, sweep=None), quiet, 31.0).endswith("in its start (tpu opened) for 10 s")
    assert phase_words("device_time") == "the device time"
    assert phase_words("op_dispatch_probe") == "op dispatch probe"


def test_status_prints_the_quiet_line_in_plain_mode_and_logs_it(capsys, tmp_path):
    import logging

    handler = logging.FileHandler(tmp_path / "jitexp.log")
    logging.getLogger().addHandler(handler)
    try:
        status = Status(["jit"], 2, None, tick_s=None)  # not a terminal: plain lines; the test ticks
        status.started(0)
        status.phase("device_time")
        start = status.quiet.started
        status.tick(start + 5.0)
        status.tick(start + 10.0)
        status.close()
        status.tick(start + 20.0)  # closed: nothing more
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(
        "jitexp: process 1 of at least 2 still running after 10 s: in the device"
    )
    assert "still running after 10 s" in (tmp_path / "jitexp.log").read_text()


def test_progress_false_prints_no_quiet_line(capsys):
    status = Status(["jit"], 2, False, tick_s=None)
    status.started(0)
    status.tick(status.quiet.started + 30.0)
    status.close()
    assert capsys.readouterr().err == ""
