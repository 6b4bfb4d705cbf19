"""Lines of runs simulated from a recorded A/A history (issue 49): the step test's false-step rate and power are
computed on these, in tests/unit/test_steps.py (fixed seeds) and benchmarks/history_steps.py (more lines).

The A/A history (tests/data/aa_history, benchmarks/history_aa_record.py) is N default runs of one unchanged
function made back to back on the 2-core VM. A simulated default run is one of those runs drawn at random, its
processes drawn with replacement from its own (so both the drift between runs and the spread between a run's
processes are the recorded ones), every process scaled by the run's level (a step is inserted by scaling). A
simulated quick run is one process of a random run, its rounds drawn with replacement: one process, its rounds as
its evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis.stats import median_ci
from jitexp.report.history.steps import Processes, Step, find_steps

DATA = Path(__file__).parent / "data" / "aa_history"


@dataclass(frozen=True)
class AA:
    """A recorded A/A history: per run, its processes' medians, and per run and process, its rounds."""

    processes: tuple[np.ndarray, ...]
    rounds: tuple[tuple[np.ndarray, ...], ...]


@cache
def load(name: str = "cpu_vm") -> AA:
    """The A/A history `name` from tests/data/aa_history."""
    procs = pd.read_csv(DATA / f"{name}_processes.csv")
    rounds = pd.read_csv(DATA / f"{name}_rounds.csv")
    runs = sorted(procs["run"].unique())
    return AA(
        processes=tuple(procs.loc[procs["run"] == r, "median_s"].to_numpy(float) for r in runs),
        rounds=tuple(
            tuple(g["per_call_s"].to_numpy(float) for _, g in rounds[rounds["run"] == r].groupby("process"))
            for r in runs
        ),
    )


@dataclass(frozen=True)
class Line:
    """A simulated line: what jitexp-history hands find_steps."""

    values: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    processes: Processes | None

    def steps(self, **kw: object) -> list[Step]:
        return find_steps(self.values, self.ci_low, self.ci_high, processes=self.processes, **kw)  # type: ignore[arg-type]


def default_line(aa: AA, levels: Sequence[float], rng: np.random.Generator) -> Line:
    """Default runs at these levels: each a random recorded run, its processes resampled and scaled."""
    runs = []
    for level in levels:
        own = aa.processes[rng.integers(len(aa.processes))]
        runs.append(rng.choice(own, size=own.size, replace=True) * level)
    cis = np.array([median_ci(p) for p in runs])
    logs = [np.log(p) for p in runs]
    return Line(
        values=np.array([np.median(p) for p in runs]),
        ci_low=cis[:, 0],
        ci_high=cis[:, 1],
        processes=Processes(
            n=[p.size for p in runs],
            log_mean=[float(v.mean()) for v in logs],
            log_sd=[float(v.std(ddof=1)) for v in logs],
            low=[float(p.min()) for p in runs],
            high=[float(p.max()) for p in runs],
        ),
    )


def quick_line(aa: AA, levels: Sequence[float], rng: np.random.Generator) -> Line:
    """Quick runs (one process each) at these levels: one process of a random run, its rounds resampled."""
    runs = []
    for level in levels:
        run = aa.rounds[rng.integers(len(aa.rounds))]
        own = run[rng.integers(len(run))]
        runs.append(rng.choice(own, size=own.size, replace=True) * level)
    cis = np.array([median_ci(r) for r in runs])
    one = [1] * len(runs)
    nan = [float("nan")] * len(runs)
    return Line(
        values=np.array([np.median(r) for r in runs]),
        ci_low=cis[:, 0],
        ci_high=cis[:, 1],
        processes=Processes(n=one, log_mean=nan, log_sd=nan, low=nan, high=nan),
    )


def rate(
    levels: Sequence[float],
    expected: list[tuple[int, int]],
    trials: int,
    seed: int,
    quick: bool = False,
    established: bool = True,
) -> float:
    """The share of simulated lines whose established steps (or, with established=False, whose possible steps)
    are exactly `expected` (before, after) places."""
    aa, rng = load(), np.random.default_rng(seed)
    make = quick_line if quick else default_line
    right = 0
    for _ in range(trials):
        found = make(aa, levels, rng).steps(possible=not established)
        right += [(s.before, s.after) for s in found if s.established is established] == expected
    return right / trials
