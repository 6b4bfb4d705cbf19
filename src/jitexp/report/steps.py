"""Steps in a history: where a case's metric changed level, between which commits, by how much, with a CI.

Pure: one line of runs in (values in timeline order, each with its own 95% CI), steps out. A change-point search
(PELT, ruptures' KernelCPD, on the log values, segments of at least two runs, so a single outlying run can never be a segment
of its own) proposes boundaries; a boundary is kept only when the ratio of the levels on either side is beyond the
threshold and it is significant (corrected for the search) and held by two runs on either side. Its CI comes from
the runs themselves: the spread of the typical runs about their segment's level (pooled over the line; a run far
off is left out), or the runs' own CIs where those are wider. A rejected boundary merges its
two segments and the rest are judged again (docs/decisions.md, "Steps").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

Z95 = 1.959963984540054
MIN_SEGMENT = 2  # runs: one run alone is never a level of its own
OUTLIER = 4.0  # robust sd: a run further than this from its segment's median is left out of levels and spread
ALPHA = 0.005  # a line's chance of a false step where it has none (Bonferroni over the n - 1 places a step can be)


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

    @property
    def direction(self) -> str:
        """`slower` or `faster` for a time (for memory: `more` or `less` reads the same way: up is worse)."""
        return "slower" if self.ratio > 1 else "faster"


def find_steps(
    values: Sequence[float],
    ci_low: Sequence[float | None] | None = None,
    ci_high: Sequence[float | None] | None = None,
    *,
    threshold: float = 0.05,
) -> list[Step]:
    """The steps of one line of runs (positive values in timeline order, each with its 95% CI where known)."""
    y = np.log(np.asarray(values, dtype=float))
    n = y.size
    if n < 2 * MIN_SEGMENT or not np.all(np.isfinite(y)):
        return []
    own = _own_sd(y, ci_low, ci_high)
    noise = max(_difference_sd(y), float(np.median(own)) if own.size else 0.0, 1e-6)
    bounds = _proposed(y / noise, n)
    while True:
        judged = [_judge(y, own, bounds, i) for i in range(len(bounds) - 2)]
        weak = [(abs(z), i) for i, (step, z, df) in enumerate(judged) if not _kept(y, step, z, df, threshold)]
        if not weak:
            return [step for step, _, _ in judged]
        del bounds[min(weak)[1] + 1]  # the weakest boundary goes; its two segments are one level now


def _proposed(z: np.ndarray, n: int) -> list[int]:
    """Segment bounds [0, b1, ..., n] from PELT on the standardized log values (BIC-like penalty): ruptures'
    KernelCPD with the linear kernel, the l2 cost's PELT in C (the same bounds as `Pelt(model="l2")`, checked on
    300 lines; 3 s against 1.5 ms on 1,000 runs)."""
    import ruptures

    if n < 2 * MIN_SEGMENT:
        return [0, n]
    search = ruptures.KernelCPD(kernel="linear", min_size=MIN_SEGMENT, jump=1).fit(z.reshape(-1, 1))
    return [0, *(int(end) for end in search.predict(pen=3 * math.log(n)))]


def _judge(y: np.ndarray, own: np.ndarray, bounds: list[int], i: int) -> tuple[Step, float, int]:
    """The boundary between segments i and i+1: the step, its t (log ratio over its standard error), its df.

    Levels and spread come from each segment's typical runs (`_typical`): one run far off (a noisy neighbour, a cold
    disk) neither moves a level nor widens every CI of the line, so it cannot hide a real step."""
    segments = list(zip(bounds[:-1], bounds[1:]))
    keep = _typical(y, segments)
    levels = [y[s:e][keep[s:e]] for s, e in segments]
    residual = np.concatenate([v - v.mean() for v in levels])
    df = max(residual.size - len(segments), 1)
    pooled = float(residual @ residual) / df
    var = max(pooled, float(np.mean(own**2)) if own.size else 0.0)
    a, b = levels[i], levels[i + 1]
    diff = float(b.mean() - a.mean())
    se = math.sqrt(var / a.size + var / b.size)
    t = float(sps.t.ppf(0.975, df))
    left, mid, right = bounds[i], bounds[i + 1], bounds[i + 2]
    step = Step(  # a 95% CI; whether it is kept is judged more strictly (_kept)
        before=mid - 1,
        after=mid,
        ratio=math.exp(diff),
        ci_low=math.exp(diff - t * se),
        ci_high=math.exp(diff + t * se),
        n_before=mid - left,
        n_after=right - mid,
    )
    return step, diff / se if se > 0 else math.inf, df


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
    if abs(z) <= float(sps.t.ppf(1 - ALPHA / 2 / (y.size - 1), df)):
        return False
    before, after = y[step.before + 1 - step.n_before : step.before + 1], y[step.after : step.after + step.n_after]
    middle = (before.mean() + after.mean()) / 2
    up = after.mean() > before.mean()
    nearer_after = int(np.sum(after > middle) if up else np.sum(after < middle))
    nearer_before = int(np.sum(before < middle) if up else np.sum(before > middle))
    return nearer_after >= MIN_SEGMENT and nearer_before >= MIN_SEGMENT


def _own_sd(y: np.ndarray, low: Sequence | None, high: Sequence | None) -> np.ndarray:
    """Each run's own standard error of log(value), from its 95% CI (runs without one are left out)."""
    if low is None or high is None:
        return np.empty(0)
    lo = np.array([np.nan if v is None else v for v in low], dtype=float)
    hi = np.array([np.nan if v is None else v for v in high], dtype=float)
    ok = np.isfinite(lo) & np.isfinite(hi) & (lo > 0) & (hi >= lo)
    return (np.log(hi[ok]) - np.log(lo[ok])) / (2 * Z95)


def _difference_sd(y: np.ndarray) -> float:
    """The noise sd from successive differences (a robust scale, MAD): blind to a few steps in the line."""
    d = np.diff(y)
    return float(np.median(np.abs(d - np.median(d))) * 1.4826 / math.sqrt(2)) if d.size else 0.0
