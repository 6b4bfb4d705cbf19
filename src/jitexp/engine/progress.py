"""A job's sign of life from its first second: where it stands, what the estimate is so far, and how long is left.

On an interactive terminal a live status line on stderr (rich, redrawn on each event and each second, removed when
the job ends, colour only where NO_COLOR is unset); elsewhere (CI, a pipe, Hydra's job log) one plain line per
finished process, and for a process that has shown nothing for 10 s a line saying where it is (`Quiet`), on stderr and
in the job's log file. `progress=false` turns both off. The words are `status_text`'s, `process_text`'s and
`quiet_text`'s, and when a quiet line is due is `Quiet`'s (all pure); `Status` only decides where they go.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from jitexp.analysis.formatting.values import format_ratio, format_seconds
from jitexp.records import ProcessResult

log = logging.getLogger("jitexp")


@dataclass
class Sweep:
    """Where a job stands in its sweep: its number (from 0), the sweep's jobs, and seconds since the sweep began."""

    job: int
    jobs: int
    elapsed_s: float


@dataclass
class Standing:
    """What the status line says: the processes so far, the one running and its phase."""

    modes: Sequence[str]
    at_least: int
    at_most: int = 0  # 0: as many as at_least
    results: list[ProcessResult] = field(default_factory=list)
    running: int = 0
    phase: str = "start"
    started: float = field(default_factory=time.monotonic)
    sweep: Sweep | None = None


def estimate_text(modes: Sequence[str], results: Sequence[ProcessResult]) -> str:
    """`medians so far: eager 25.1 ms, jit 19.8 ms; eager/jit 1.27x (4 processes ranged 1.21x-1.33x)`: each mode's
    median of the process medians so far, and the first mode's time over each other's as the median of the
    per-process ratios with their range, said as a range (the CI comes with the answer); one process's own figures
    after the first; empty before any process has sampled."""
    medians = {mode: [_median(r, mode) for r in results if _sampled(r, mode)] for mode in modes}
    parts = [f"{m} {format_seconds(float(np.median(v)))}" for m, v in medians.items() if v]
    if not parts:
        return ""
    base = modes[0]
    ratios = []
    for mode in modes[1:]:
        pairs = [_median(r, base) / _median(r, mode) for r in results if _sampled(r, base) and _sampled(r, mode)]
        if pairs:
            spread = f" ({len(pairs)} processes ranged {format_ratio(min(pairs))}-{format_ratio(max(pairs))})"
            ratios.append(f"{base}/{mode} {format_ratio(float(np.median(pairs)))}{spread if len(pairs) > 1 else ''}")
    head = "medians so far: " if len(results) > 1 else ""
    return head + ", ".join(parts) + (f"; {'; '.join(ratios)}" if ratios else "")


def _median(r: ProcessResult, mode: str) -> float:
    return float(np.median(np.asarray(r.modes[mode].samples_s)))


def _sampled(r: ProcessResult, mode: str) -> bool:
    m = r.modes.get(mode)
    return m is not None and m.samples_s is not None and len(m.samples_s) > 0


def eta_s(s: Standing, now: float) -> float | None:
    """Seconds left: the processes still to come (at least timing.processes) at this job's pace, and in a sweep the
    jobs still to come at the sweep's pace so far; None before anything has finished."""
    done = len(s.results)
    elapsed = now - s.started
    left = None
    if done:
        per_process = elapsed / done
        left = max(s.at_least - done, 0) * per_process
    if s.sweep is not None and s.sweep.job > 0:
        per_job = s.sweep.elapsed_s / s.sweep.job
        now_left = left if left is not None else max(per_job - elapsed, 0.0)
        left = now_left + (s.sweep.jobs - s.sweep.job - 1) * per_job
    return left


def status_text(s: Standing, now: float) -> str:
    """`job 2/5 · process 3 of at least 6 · compile · eager 25.1 ms, jit 19.8 ms; ... · 6.1 s, ~8 s left`."""
    parts = []
    if s.sweep is not None and s.sweep.jobs > 1:
        parts.append(f"job {s.sweep.job + 1}/{s.sweep.jobs}")
    parts.append(f"process {s.running + 1} {_of(s)}")
    parts.append(s.phase.replace("_", " "))
    estimate = estimate_text(s.modes, s.results)
    if estimate:
        parts.append(estimate)
    left = eta_s(s, now)
    clock = format_seconds(now - s.started)
    parts.append(clock + (f", ~{format_seconds(left)} left" if left else ""))
    return " \u00b7 ".join(parts)


def _of(s: Standing) -> str:
    """`of at least 6`, or past it `of at most 12` (more are added while the CI is wider than its target); `of 1`
    when the fewest and the most are one number (timing=quick), where "at least" would promise more."""
    if s.at_most == s.at_least:
        return f"of {s.at_least}"
    if s.at_most > s.at_least and s.running + 1 > s.at_least:
        return f"of at most {s.at_most}"
    return f"of at least {s.at_least}"


def process_text(s: Standing, result: ProcessResult, now: float) -> str:
    """The plain line of a finished process: `process 3 of at least 6 done in 1.62 s: <estimate>; <eta>`."""
    took = result.wall_s if result.phases else None
    head = f"process {len(s.results)} {_of(dataclasses.replace(s, running=len(s.results) - 1))} done" + (
        f" in {format_seconds(took)}" if took else ""
    )
    if s.sweep is not None and s.sweep.jobs > 1:
        head = f"job {s.sweep.job + 1}/{s.sweep.jobs}: {head}"
    estimate = estimate_text(s.modes, s.results)
    left = eta_s(s, now)
    tail = f"; ~{format_seconds(left)} left" if left else ""
    return f"{head}{': ' + estimate if estimate else ''}{tail}"


QUIET_S = 10.0  # a process that has shown nothing this long says where it is, and again each QUIET_S after
PHASE_SHOWN_S = 1.0  # after that, a new phase is said once it has lasted this long (the worker passes through many)

# the words of a phase in a quiet line, where its name alone would not say it (records.PHASES, errors.PHASES)
PHASE_WORDS = {
    "start": "its start (importing, opening the device)",
    "first_call": "the first call (trace and compile)",
    "check": "the checks",
    "device_time": "the device time",
    "warm_backend": "the backend's warm-up",
}


def phase_words(phase: str) -> str:
    if phase.startswith("opened "):
        return f"its start ({phase.split(' ', 1)[1]} opened)"
    return PHASE_WORDS.get(phase, phase.replace("_", " "))


@dataclass
class Quiet:
    """When the running process's quiet line is due (pure: each call is given the time). The first once the process
    has shown nothing for `every_s` since it started (or since the last line, a process's own, was shown); after
    that, again each `every_s`, or as soon as a new phase has lasted `phase_s` (not more often: a phase the worker
    passes through in under a second gets no line of its own)."""

    every_s: float = QUIET_S
    phase_s: float = PHASE_SHOWN_S
    started: float = 0.0  # the running process's start
    phase: str = "start"
    phase_since: float = 0.0
    last_shown: float = 0.0  # the last line shown while this process ran (its start if none)
    shown_phase: str | None = None  # the phase the last quiet line named; None before this process's first

    def begin(self, now: float) -> None:
        """A process started: nothing shown for it yet."""
        self.started = self.phase_since = self.last_shown = now
        self.phase, self.shown_phase = "start", None

    def enter(self, phase: str, now: float) -> None:
        if phase != self.phase:
            self.phase, self.phase_since = phase, now

    def due(self, now: float) -> bool:
        if now - self.last_shown >= self.every_s:
            return True
        new_phase = self.shown_phase is not None and self.phase != self.shown_phase
        return new_phase and now - self.phase_since >= self.phase_s

    def shown(self, now: float) -> None:
        self.last_shown, self.shown_phase = now, self.phase


def quiet_text(s: Standing, quiet: Quiet, now: float) -> str:
    """`process 1 of at least 6 still running after 20 s: in the checks for 12 s`."""
    head = f"process {s.running + 1} {_of(s)} still running after {format_seconds(now - quiet.started)}"
    if s.sweep is not None and s.sweep.jobs > 1:
        head = f"job {s.sweep.job + 1}/{s.sweep.jobs}: {head}"
    return f"{head}: in {phase_words(quiet.phase)} for {format_seconds(now - quiet.phase_since)}"


def live_wanted(setting: bool | None, stream: Any = None) -> bool:
    """The animated line: asked for (progress=true), or by default on an interactive terminal (not under CI)."""
    stream = stream or sys.stderr
    if setting is not None:
        return setting
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("CI")


class Status:
    """The job's status line (live) or plain lines; `off` does nothing."""

    def __init__(
        self,
        modes: Sequence[str],
        at_least: int,
        setting: bool | None,
        sweep: Sweep | None = None,
        at_most: int = 0,
        tick_s: float | None = 0.5,
    ) -> None:
        self.standing = Standing(list(modes), at_least, at_most, sweep=sweep)
        self.off = setting is False
        self.live: Any = None
        self.quiet = Quiet()
        self.quiet.begin(time.monotonic())
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if not self.off and live_wanted(setting):
            from rich.console import Console
            from rich.live import Live
            from rich.text import Text

            self._text = Text
            console = Console(stderr=True, no_color=bool(os.environ.get("NO_COLOR")) or None)
            self.live = Live(Text(""), console=console, auto_refresh=False, transient=True)
            self.live.start()
            self._draw()
        if not self.off and tick_s is not None:  # the clock between the worker's events (tick_s=None: tests tick)
            self._ticker = threading.Thread(target=self._run_ticks, args=(tick_s,), name="jitexp-status", daemon=True)
            self._ticker.start()

    def _run_ticks(self, every_s: float) -> None:
        while not self._stop.wait(every_s):
            self.tick(time.monotonic())

    def tick(self, now: float) -> None:
        """The clock moved: the live line redrawn (its seconds), or a plain quiet line where one is due."""
        with self._lock:
            if self.off or self._stop.is_set():
                return
            if self.live is not None:
                self._draw()
            elif self.quiet.due(now):
                self._plain(quiet_text(self.standing, self.quiet, now))
                self.quiet.shown(now)

    def _draw(self) -> None:
        if self.live is not None:
            self.live.update(self._text(status_text(self.standing, time.monotonic())), refresh=True)

    def phase(self, name: str) -> None:
        """The running process entered phase `name` (its pipe said so)."""
        with self._lock:
            self.standing.phase = name
            self.quiet.enter(name, time.monotonic())
            self._draw()

    def started(self, index: int) -> None:
        with self._lock:
            self.standing.running, self.standing.phase = index, "start"
            self.quiet.begin(time.monotonic())
            self._draw()

    def finished(self, result: ProcessResult) -> None:
        """A process ended: counted, the estimate updated; a plain line where there is no live one."""
        with self._lock:
            self.standing.results.append(result)
            self.standing.running = len(self.standing.results)
            now = time.monotonic()
            self.quiet.begin(now)  # shown: the next process's quiet line counts from here (started() resets it too)
            if self.off or result.config_error is not None:  # a mistake is the job's one line, nothing before it
                return
            if self.live is not None:
                self._draw()
                return
            self._plain(process_text(self.standing, result, now))

    def _plain(self, line: str) -> None:
        """A plain line: on stderr and in the job's log file (jitexp.log)."""
        print(f"jitexp: {line}", file=sys.stderr, flush=True)
        record = log.makeRecord(log.name, logging.INFO, __file__, 0, line, (), None)
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.FileHandler):
                handler.handle(record)

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None and self._ticker is not threading.current_thread():
            self._ticker.join(5.0)
            self._ticker = None
        with self._lock:
            if self.live is not None:
                self.live.stop()
                self.live = None
