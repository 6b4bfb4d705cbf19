"""A job's sign of life from its first second: where it stands, what the estimate is so far, and how long is left.

On an interactive terminal a live status line on stderr (rich, redrawn on each event, removed when the job ends,
colour only where NO_COLOR is unset); elsewhere (CI, a pipe, Hydra's job log) one plain line per finished process,
on stderr and in the job's log file. `progress=false` turns both off. The words are `status_text`'s and
`process_text`'s (pure); `Status` only decides where they go.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
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
    """`of at least 6`, or past it `of at most 12` (more are added while the CI is wider than its target)."""
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
    ) -> None:
        self.standing = Standing(list(modes), at_least, at_most, sweep=sweep)
        self.off = setting is False
        self.live: Any = None
        if not self.off and live_wanted(setting):
            from rich.console import Console
            from rich.live import Live
            from rich.text import Text

            self._text = Text
            console = Console(stderr=True, no_color=bool(os.environ.get("NO_COLOR")) or None)
            self.live = Live(Text(""), console=console, auto_refresh=False, transient=True)
            self.live.start()
            self._draw()

    def _draw(self) -> None:
        if self.live is not None:
            self.live.update(self._text(status_text(self.standing, time.monotonic())), refresh=True)

    def phase(self, name: str) -> None:
        """The running process entered phase `name` (its pipe said so)."""
        self.standing.phase = name
        self._draw()

    def started(self, index: int) -> None:
        self.standing.running, self.standing.phase = index, "start"
        self._draw()

    def finished(self, result: ProcessResult) -> None:
        """A process ended: counted, the estimate updated; a plain line where there is no live one."""
        self.standing.results.append(result)
        self.standing.running = len(self.standing.results)
        if self.off or result.config_error is not None:  # a mistake is the job's one line, nothing before it
            return
        if self.live is not None:
            self._draw()
            return
        line = process_text(self.standing, result, time.monotonic())
        print(f"jitexp: {line}", file=sys.stderr, flush=True)
        record = log.makeRecord(log.name, logging.INFO, __file__, 0, line, (), None)
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.FileHandler):
                handler.handle(record)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None
