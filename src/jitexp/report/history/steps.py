"""Steps in a history: where a case's metric changed level, between which commits, by how much, with a CI.

Pure: one line of runs in (values in timeline order, each with its own 95% CI and, where known, a summary of its
processes), steps out. A change-point search (PELT, ruptures' KernelCPD, on the log levels, segments of at least two
runs, so a single outlying run can never be a segment of its own) proposes boundaries; a boundary is established
when the ratio of the levels on either side is beyond the threshold, it is significant (corrected for the search)
and it is held by two runs on either side. A rejected boundary merges its two segments and the rest are judged
again.

What each run knows is used (issue 49): where every run of the line has processes, a run's level is the geometric
mean of its processes' medians and its own variance is the processes' spread (pooled over the line) over their
count; otherwise a run's level is its value and its own variance comes from its CI (a one-process run: its
rounds). The run-to-run variance a step is judged against is a moderated estimate: the line's own spread about its
levels, on its degrees of freedom, pooled with a prior of NU0 degrees of freedom calibrated on a recorded A/A
history (each run's own variance times a drift factor, RHO, for the excess of one run over the next). A short line
leans on its runs' own evidence; a long one on its own spread (docs/decisions.md, "Steps that use what each run
knows").

A large change in the newest runs that is not established yet (one run, or a t short of the corrected bound) is a
*possible* step (`established=False`): listed, so that a user sees it, and judged again when more runs come.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import stdtrit  # t.ppf(p, df) is stdtrit(df, p): scipy.stats costs ~1 s more to import

Z95 = 1.959963984540054
MIN_SEGMENT = 2  # runs: one run alone is never a level of its own
OUTLIER = 4.0  # robust sd: a run further than this from its segment's median is left out of levels and spread
ALPHA = 0.01  # a line's chance of a false step where it has none (Bonferroni over the places a step can be)
# The prior on one run's variance about its level, by what the runs bring, calibrated on the A/A history in
# tests/data/aa_history (24 default runs on the 2-core VM; docs/decisions.md): runs of processes: (RHO + 1/n) times
# one process's variance (the drift between runs was 0.31 of it there); runs with a CI alone: RHO times the
# typical run's CI variance (4.5 there); one-process runs (a CI of rounds): RHO times their CI variance (457
# there: a process's rounds say little of the next process). The prior weighs NU0 degrees of freedom.
RHO = {"processes": 0.4, "runs": 4.5, "rounds": 457.0}
NU0 = 20
DRIFT_SD = 0.115  # sd of log(run median) between the A/A history's 24 runs
POSSIBLE_ALPHA = 0.01  # the newest runs, one test at their place: a possible step (not established, never failing)
POSSIBLE_LAST = 3  # the newest 1..3 runs are the candidates for a possible step


@dataclass(frozen=True)
class Processes:
    """Per run, what its processes say of one metric: their count, the mean and sd of their log values (the
    geometric mean and spread) and their smallest and largest value (NaN where a run has none)."""

    n: Sequence[float]
    log_mean: Sequence[float]
    log_sd: Sequence[float]
    low: Sequence[float]
    high: Sequence[float]


@dataclass(frozen=True)
class Step:
    """A change of level between run `before` (the last of the old level) and run `after` (the first of the new)."""

    before: int
    after: int
    ratio: float  # new level / old level (geometric means of the runs on either side)
    ci_low: float
    ci_high: float
    n_before: int  # runs on either side that the ratio is computed from
    n_after: int
    established: bool = True  # False: a possible step in the newest runs, not established yet
    runs_beyond: int = 0  # runs after it beyond (slower for a step up) every run before it
    processes_before: int = 0  # processes on either side (0 where the runs have none)
    processes_after: int = 0
    processes_apart: bool = False  # every process after it beyond every process before it

    @property
    def direction(self) -> str:
        """`slower` or `faster` for a time (for memory: `more` or `less` reads the same way: up is worse)."""
        return "slower" if self.ratio > 1 else "faster"


@dataclass(frozen=True)
class _Line:
    """One line as the test sees it: log levels, each run's own variance, the prior's run variance and weight."""

    y: np.ndarray
    own: np.ndarray  # each run's own variance of its level (NaN: unknown)
    prior: float  # the prior's variance of one run about its level (0: none)
    nu0: int  # the prior's degrees of freedom (0 where the runs bring no evidence of their own)
    processes: Processes | None


def find_steps(
    values: Sequence[float],
    ci_low: Sequence[float | None] | None = None,
    ci_high: Sequence[float | None] | None = None,
    *,
    processes: Processes | None = None,
    threshold: float = 0.05,
    possible: bool = False,
) -> list[Step]:
    """The steps of one line of runs (positive values in timeline order, each with its 95% CI where known and its
    processes' summary where known); with `possible`, also a possible step in the newest runs (established=False)."""
    line = _line(values, ci_low, ci_high, processes)
    if line is None:
        return []
    y, n = line.y, line.y.size
    # the search's scale: the prior's run sd where the runs bring one (a short line's successive differences,
    # one of them the step, overstate it), else the robust spread of successive differences
    noise = max(math.sqrt(line.prior) if line.nu0 else _difference_sd(y), 1e-6)
    bounds = _proposed(y / noise, n)
    while True:
        judged = [_judge(line, bounds, i) for i in range(len(bounds) - 2)]
        weak = [(abs(z), i) for i, (step, z, df) in enumerate(judged) if not _kept(y, step, z, df, threshold)]
        if not weak:
            break
        del bounds[min(weak)[1] + 1]  # the weakest boundary goes; its two segments are one level now
    found = [_with_evidence(line, step) for step, _, _ in judged]
    if possible:
        newest = _possible(line, bounds, threshold)
        if newest is not None:
            found.append(_with_evidence(line, newest))
    return found


def exact_steps(values: Sequence[float], versions: Sequence[str] | None = None) -> list[Step]:
    """The steps of a deterministic metric (XLA's memory analysis: one program, one compiler, one value): every
    change of value is a step at the run that made it, its ratio exact (no interval), established at once, since
    no noise needs more runs to rule out; except where the jax version changed at the same place (`versions`, one
    per run), where the analysis is not comparable and the step is never established."""
    v = np.asarray(values, dtype=float)
    changes = [i for i in range(1, v.size) if v[i] != v[i - 1]]
    bounds = [0, *changes, v.size]
    found = []
    for k, i in enumerate(changes):
        n_before, n_after = i - bounds[k], bounds[k + 2] - i
        ratio = float(v[i] / v[i - 1]) if v[i - 1] > 0 else math.inf
        same = versions is None or versions[i] == versions[i - 1]
        found.append(Step(i - 1, i, ratio, ratio, ratio, n_before, n_after, established=same, runs_beyond=n_after))
    return found


def _line(
    values: Sequence[float], low: Sequence | None, high: Sequence | None, processes: Processes | None
) -> _Line | None:
    """The line's levels and variances: from the processes where every run has two or more, else from the values
    and their CIs; None where the line is too short or a value is not a positive number."""
    y = np.log(np.asarray(values, dtype=float))
    if y.size < 2 * MIN_SEGMENT or not np.all(np.isfinite(y)):
        return None
    n = np.asarray(processes.n, dtype=float) if processes is not None else np.full(y.size, np.nan)
    if processes is not None and n.size == y.size and np.all(n >= 2):
        mean, sd = np.asarray(processes.log_mean, dtype=float), np.asarray(processes.log_sd, dtype=float)
        if np.all(np.isfinite(mean)) and np.all(np.isfinite(sd)):
            unit = float(np.mean(sd**2))  # a typical run's variance between its processes (robust: a run of
            # a few outlying processes neither hides nor makes a step)
            return _Line(mean, unit / n, _prior(RHO["processes"] * unit), NU0, processes)
    own = _own_var(y, low, high)
    known = own[np.isfinite(own)]
    if known.size == 0 or float(np.median(known)) <= 0:
        return _Line(y, own, 0.0, 0, processes)
    kind = "rounds" if n.size == y.size and np.all(n == 1) else "runs"
    return _Line(y, own, _prior(RHO[kind] * float(np.median(known))), NU0, processes)


def _prior(from_runs: float) -> float:
    """The prior's variance of one run about its level: what the runs' own spread predicts (RHO), never below
    the drift between runs of the same code on the calibration VM (DRIFT_SD): a short line of runs that each
    look tight (every process in one mode) is not trusted to drift less than runs did there."""
    return max(from_runs, DRIFT_SD**2)


def _proposed(z: np.ndarray, n: int) -> list[int]:
    """Segment bounds [0, b1, ..., n] from PELT on the standardized log values (BIC-like penalty): ruptures'
    KernelCPD with the linear kernel, the l2 cost's PELT in C (the same bounds as `Pelt(model="l2")`, checked on
    300 lines; 3 s against 1.5 ms on 1,000 runs)."""
    import ruptures

    if n < 2 * MIN_SEGMENT:
        return [0, n]
    search = ruptures.KernelCPD(kernel="linear", min_size=MIN_SEGMENT, jump=1).fit(z.reshape(-1, 1))
    return [0, *(int(end) for end in search.predict(pen=3 * math.log(n)))]


def _variance(line: _Line, segments: list[tuple[int, int]]) -> tuple[float, int]:
    """One run's variance about its level and its degrees of freedom: the typical runs' spread about their
    segments' means (df: runs less segments), pooled with the prior (NU0 df), never below the runs' own."""
    keep = _typical(line.y, segments)
    residual = np.concatenate([line.y[s:e][keep[s:e]] - line.y[s:e][keep[s:e]].mean() for s, e in segments])
    df = residual.size - len(segments)
    pooled = float(residual @ residual)
    var = (pooled + line.nu0 * line.prior) / max(df + line.nu0, 1)
    own = line.own[np.isfinite(line.own)]
    return max(var, float(own.mean()) if own.size else 0.0), max(df + line.nu0, 1)


def _judge(line: _Line, bounds: list[int], i: int) -> tuple[Step, float, int]:
    """The boundary between segments i and i+1: the step, its t (log ratio over its standard error), its df.

    Levels come from each segment's typical runs (`_typical`): one run far off (a noisy neighbour, a cold disk)
    neither moves a level nor widens every CI of the line, so it cannot hide a real step."""
    segments = list(zip(bounds[:-1], bounds[1:]))
    keep = _typical(line.y, segments)
    var, df = _variance(line, segments)
    (s0, e0), (s1, e1) = segments[i], segments[i + 1]
    a, b = line.y[s0:e0][keep[s0:e0]], line.y[s1:e1][keep[s1:e1]]
    return _step(float(a.mean()), float(b.mean()), a.size, b.size, var, df, e0, e0 - s0, e1 - e0)


def _step(a: float, b: float, na: int, nb: int, var: float, df: int, at: int, n_before: int, n_after: int):
    """The step from level a (na runs) to level b (nb runs) at run `at`, its 95% CI and its t on df."""
    diff = b - a
    se = math.sqrt(var / na + var / nb)
    t = float(stdtrit(df, 0.975))
    step = Step(
        before=at - 1,
        after=at,
        ratio=math.exp(diff),
        ci_low=math.exp(diff - t * se),
        ci_high=math.exp(diff + t * se),
        n_before=n_before,
        n_after=n_after,
    )
    return step, diff / se if se > 0 else (math.inf if diff else 0.0), df


def _possible(line: _Line, bounds: list[int], threshold: float) -> Step | None:
    """A possible step in the newest runs: of the newest 1..POSSIBLE_LAST runs against the rest of the last
    level (at least MIN_SEGMENT runs), the one with the largest t that is beyond the threshold and significant as
    one test at POSSIBLE_ALPHA, every one of those runs on the new side of the middle, and not already a step."""
    start, n = bounds[-2], line.y.size
    var, df = _variance(line, list(zip(bounds[:-1], bounds[1:])))
    best: tuple[float, Step] | None = None
    for k in range(1, POSSIBLE_LAST + 1):
        if n - k - start < MIN_SEGMENT:
            break
        old, new = line.y[start : n - k], line.y[n - k :]
        step, z, _ = _step(float(old.mean()), float(new.mean()), old.size, k, var, df, n - k, old.size, k)
        middle = (old.mean() + new.mean()) / 2
        consistent = bool(np.all(new > middle) if z > 0 else np.all(new < middle))
        if (
            abs(math.log(step.ratio)) > math.log1p(threshold)
            and abs(z) > float(stdtrit(df, 1 - POSSIBLE_ALPHA / 2))
            and consistent
            and (best is None or abs(z) > best[0])
        ):
            best = (abs(z), step)
    if best is None:
        return None
    s = best[1]
    return Step(s.before, s.after, s.ratio, s.ci_low, s.ci_high, s.n_before, s.n_after, established=False)


def _with_evidence(line: _Line, step: Step) -> Step:
    """The step with its evidence in counts: how many runs after it lie beyond every run before it, and whether
    every process after it lies beyond every process before it (where the runs have processes)."""
    up = step.ratio > 1
    before = slice(step.after - step.n_before, step.after)
    after = slice(step.after, step.after + step.n_after)
    y = line.y
    beyond = int(np.sum(y[after] > y[before].max()) if up else np.sum(y[after] < y[before].min()))
    procs = line.processes
    if procs is None:
        return _replace(step, runs_beyond=beyond)
    n = np.asarray(procs.n, dtype=float)
    lo, hi = np.asarray(procs.low, dtype=float), np.asarray(procs.high, dtype=float)
    if not (np.all(np.isfinite(lo[before])) and np.all(np.isfinite(lo[after]))):
        return _replace(step, runs_beyond=beyond)
    apart = bool(lo[after].min() > hi[before].max()) if up else bool(hi[after].max() < lo[before].min())
    return _replace(
        step,
        runs_beyond=beyond,
        processes_before=int(np.nansum(n[before])),
        processes_after=int(np.nansum(n[after])),
        processes_apart=apart,
    )


def _replace(step: Step, **changes: object) -> Step:
    from dataclasses import replace

    return replace(step, **changes)  # type: ignore[arg-type]


def _typical(y: np.ndarray, segments: list[tuple[int, int]]) -> np.ndarray:
    """Which runs lie within OUTLIER robust sd (1.4826 MAD about each segment's median, pooled over the line) of
    their segment's median; every run of a segment that would keep fewer than MIN_SEGMENT; all where the spread is 0."""
    centered = np.concatenate([y[s:e] - np.median(y[s:e]) for s, e in segments])
    scale = 1.4826 * float(np.median(np.abs(centered)))
    keep = np.abs(centered) <= OUTLIER * scale if scale > 0 else np.ones(y.size, bool)
    for s, e in segments:
        if keep[s:e].sum() < MIN_SEGMENT:
            keep[s:e] = True
    return keep


def _kept(y: np.ndarray, step: Step, z: float, df: int, threshold: float) -> bool:
    """A step: beyond the threshold; significant once corrected for the search (the boundary was picked as the
    best of n - 1 places, so the test is Bonferroni's over them at ALPHA: a 95% CI that just excludes 1 is not
    enough); and
    at least MIN_SEGMENT runs on either side nearer their own level than the other side's (one outlying run, at
    the end of the line or within a segment, is never enough)."""
    if abs(math.log(step.ratio)) <= math.log1p(threshold):
        return False
    if abs(z) <= float(stdtrit(df, 1 - ALPHA / 2 / _places(y.size))):
        return False
    before, after = y[step.before + 1 - step.n_before : step.before + 1], y[step.after : step.after + step.n_after]
    middle = (before.mean() + after.mean()) / 2
    up = after.mean() > before.mean()
    nearer_after = int(np.sum(after > middle) if up else np.sum(after < middle))
    nearer_before = int(np.sum(before < middle) if up else np.sum(before > middle))
    return nearer_after >= MIN_SEGMENT and nearer_before >= MIN_SEGMENT


def _places(n: int) -> int:
    """The places a step can be in a line of n runs: every boundary with MIN_SEGMENT runs or more on either side."""
    return max(n - 2 * MIN_SEGMENT + 1, 1)


def _own_var(y: np.ndarray, low: Sequence | None, high: Sequence | None) -> np.ndarray:
    """Each run's own variance of log(value), from its 95% CI (NaN where a run has none)."""
    if low is None or high is None:
        return np.full(y.size, np.nan)
    return _own_sd(y, low, high, keep_missing=True) ** 2


def _own_sd(y: np.ndarray, low: Sequence, high: Sequence | None, keep_missing: bool = False) -> np.ndarray:
    """Each run's own standard error of log(value), from its 95% CI: a missing, inverted or non-positive CI is
    left out (NaN with keep_missing)."""
    if low is None or high is None:
        return np.empty(0)
    lo = np.array([np.nan if v is None else v for v in low], dtype=float)
    hi = np.array([np.nan if v is None else v for v in high], dtype=float)
    ok = np.isfinite(lo) & np.isfinite(hi) & (lo > 0) & (hi >= lo)
    sd = np.full(lo.size, np.nan)
    sd[ok] = (np.log(hi[ok]) - np.log(lo[ok])) / (2 * Z95)
    return sd if keep_missing else sd[ok]


def _difference_sd(y: np.ndarray) -> float:
    """The noise sd from successive differences (a robust scale, MAD): blind to a few steps in the line."""
    d = np.diff(y)
    return float(np.median(np.abs(d - np.median(d))) * 1.4826 / math.sqrt(2)) if d.size else 0.0
