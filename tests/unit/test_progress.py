"""The job's status line and plain lines (engine.progress): what they say, from plain records."""

from __future__ import annotations

import io

import numpy as np

from jitexp.engine.progress import Standing, Sweep, estimate_text, eta_s, live_wanted, process_text, status_text
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
