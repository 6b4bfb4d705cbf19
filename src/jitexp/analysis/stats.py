"""Summary statistics over an array of per-call times, bootstrap CIs of medians, and the rank intervals of
paired and two-run changes (Hodges-Lehmann estimates with the CIs that invert their own Wilcoxon / Mann-Whitney
tests). NumPy and the standard library; no JAX."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Summary:
    n_samples: int
    median_s: float
    mean_s: float
    std_s: float
    min_s: float
    max_s: float
    p10_s: float
    p90_s: float
    iqr_s: float
    ci95_low_s: float
    ci95_high_s: float
    cv: float
    n_outliers: int

    def as_row(self) -> dict:
        return asdict(self)

    @property
    def rel_ci_halfwidth(self) -> float:
        """Half the median's CI width as a fraction of the median (the stopping rule's target)."""
        if not self.median_s > 0:
            return math.inf
        return (self.ci95_high_s - self.ci95_low_s) / 2 / self.median_s


def median_ci(values, z: float = Z95) -> tuple[float, float]:
    """Distribution-free CI of the median from order statistics (binomial ranks); min..max when n is tiny."""
    x = np.sort(np.asarray(values, dtype=float))
    n = x.size
    if n == 0:
        return math.nan, math.nan
    half = z * math.sqrt(n) / 2
    lo = max(int(math.floor(n / 2 - half)), 1)
    hi = min(int(math.ceil(1 + n / 2 + half)), n)
    return float(x[lo - 1]), float(x[hi - 1])


def tukey_outliers(values, k: float = 1.5) -> int:
    """How many values fall outside [q1 - k*IQR, q3 + k*IQR]; counted, never dropped."""
    x = np.asarray(values, dtype=float)
    if x.size < 4:
        return 0
    q1, q3 = np.percentile(x, [25, 75])
    iqr = q3 - q1
    return int(np.count_nonzero((x < q1 - k * iqr) | (x > q3 + k * iqr)))


def summarize(values) -> Summary:
    """Median, spread, percentiles, the median's 95% CI and the Tukey outlier count."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("summarize needs at least one sample")
    p10, q1, median, q3, p90 = np.percentile(x, [10, 25, 50, 75, 90])
    mean = float(x.mean())
    std = float(x.std(ddof=1)) if x.size > 1 else 0.0
    lo, hi = median_ci(x)
    return Summary(
        n_samples=int(x.size),
        median_s=float(median),
        mean_s=mean,
        std_s=std,
        min_s=float(x.min()),
        max_s=float(x.max()),
        p10_s=float(p10),
        p90_s=float(p90),
        iqr_s=float(q3 - q1),
        ci95_low_s=lo,
        ci95_high_s=hi,
        cv=std / mean if mean > 0 else math.nan,
        n_outliers=tukey_outliers(x),
    )


# ---- between processes -------------------------------------------------------------------

N_RESAMPLES = 2000


def robust_cv(values) -> float:
    """1.4826 * MAD / median: a spread comparable to std/mean for normal data, robust to outliers."""
    x = np.asarray(values, dtype=float)
    median = float(np.median(x)) if x.size else math.nan
    if x.size < 2 or not median > 0:
        return math.nan
    return 1.4826 * float(np.median(np.abs(x - median))) / median


class Unpaired(tuple):
    """One process's samples per mode when its modes' rounds are not paired: one 1-D array per mode, of any
    length (timing.interleave=processes, where pair i's modes were sampled in processes of their own)."""


def mode_samples(group) -> list[np.ndarray]:
    """A process's samples per mode, from a (rounds x modes) array or an Unpaired."""
    if isinstance(group, Unpaired):
        return [np.asarray(a, dtype=float) for a in group]
    a = np.asarray(group, dtype=float).reshape(len(group), -1)
    return [a[:, k] for k in range(a.shape[1])]


def group_medians(group) -> np.ndarray:
    """Per mode, the median of one process's samples."""
    if isinstance(group, Unpaired):
        return np.array([np.median(a) for a in mode_samples(group)])
    return np.median(np.asarray(group, dtype=float).reshape(len(group), -1), axis=0)


def hierarchical_medians(groups, n_resamples: int = N_RESAMPLES, seed: int = 0) -> np.ndarray:
    """Bootstrap replicates of the median of per-process medians, resampling at both levels.

    `groups` holds one (rounds x modes) array per process, a row being one round of paired
    samples. Each replicate draws processes with replacement, then rounds with replacement
    inside each drawn process (a round's samples stay together), takes every process's median
    per mode and the median of those. Returns an (n_resamples x modes) array. scipy.stats.bootstrap
    resamples one level only; the spread between processes is the one that matters here. An Unpaired
    group's modes are resampled each on its own (its rounds have no partner).
    """
    if not groups or any(len(a) == 0 for g in groups for a in mode_samples(g)):
        raise ValueError("every process needs at least one round")
    rng = np.random.default_rng(seed)
    n_proc, n_modes = len(groups), len(mode_samples(groups[0]))
    inner = np.empty((n_proc, n_resamples, n_modes))
    for i, g in enumerate(groups):
        if isinstance(g, Unpaired):
            for k, a in enumerate(mode_samples(g)):
                inner[i, :, k] = np.median(a[rng.integers(0, len(a), size=(n_resamples, len(a)))], axis=1)
            continue
        a = np.asarray(g, dtype=float).reshape(len(g), -1)
        rows = rng.integers(0, a.shape[0], size=(n_resamples, a.shape[0]))
        inner[i] = np.median(a[rows], axis=1)
    picked = rng.integers(0, n_proc, size=(n_resamples, n_proc))
    # Draw j of replicate b takes the process's inner resample (b + j) mod B, so a process drawn
    # twice in one replicate brings two different resamples of its rounds.
    slot = (np.arange(n_resamples)[:, None] + np.arange(n_proc)[None, :]) % n_resamples
    return np.median(inner[picked, slot], axis=1)


def point_medians(groups) -> np.ndarray:
    """The estimate the bootstrap replicates: per mode, the median of the process medians."""
    return np.median(np.stack([group_medians(g) for g in groups]), axis=0)


def percentile_ci(replicates, level: float = 0.95) -> tuple[float, float]:
    """The central `level` interval of bootstrap replicates (percentile method)."""
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(np.asarray(replicates, dtype=float), [tail, 100 - tail])
    return float(lo), float(hi)


def verdict(ci_low: float, ci_high: float) -> str:
    """faster / slower / no significant difference, from a speedup's CI against 1; 'cannot tell (...)' when no
    interval exists (2-5 processes: the Wilcoxon interval needs 6 for 95%; the CI is then 0-inf)."""
    if not (ci_low > 0 and math.isfinite(ci_high)):
        return f"{CANNOT_TELL} (fewer than 6 processes for a 95% interval)"
    if ci_low > 1:
        return "faster"
    if ci_high < 1:
        return "slower"
    return "no significant difference"


def break_even(base_first_s: float, base_median_s: float, first_s: float, median_s: float) -> tuple[float, float]:
    """(break_even_calls, ahead_until_calls) from the two cumulative cost lines.

    Total cost of n calls: first + (n - 1) * median. The lines cross at most once.
    break_even_calls: the smallest n from which the compiled mode's total is lower and stays
    lower (1: from the first call; inf: never for good). ahead_until_calls, only when the
    compiled steady state is slower: the last n at which it is still ahead thanks to a cheaper
    first call (0: never ahead); NaN when it is not slower. NaN inputs give NaN.
    """
    values = (base_first_s, base_median_s, first_s, median_s)
    if any(v is None or not math.isfinite(float(v)) for v in values):
        return math.nan, math.nan
    lead = base_first_s - first_s  # how far ahead the compiled mode is after call 1
    gain = base_median_s - median_s  # what each later call adds to that lead
    eps = 1e-12 * max(abs(base_first_s), abs(first_s))

    def ahead(n: int) -> bool:
        return lead + (n - 1) * gain >= -eps

    if gain > 0:
        if ahead(1):
            return 1.0, math.nan
        n = 1 + max(1, math.ceil(-lead / gain))
        while n > 2 and ahead(n - 1):
            n -= 1
        while not ahead(n):
            n += 1
        return float(n), math.nan
    if gain == 0:
        return (1.0, math.nan) if ahead(1) else (math.inf, math.nan)
    if not ahead(1):
        return math.inf, 0.0
    n = 1 + math.floor(lead / -gain)
    while not ahead(n):
        n -= 1
    while ahead(n + 1):
        n += 1
    return math.inf, float(n)


def settled_break_even(verdict_: str | None, calls: float, ahead: float) -> tuple[float, float]:
    """(break_even_calls, ahead_until_calls) as the verdict words them (issue 50): the cost lines come from the
    two medians, the verdict from the speedup's CI, and a mode whose steady state is not significantly faster
    has no gain to earn its first call back with. So unless the verdict is `faster`, a break-even after call 1
    becomes inf ("never pays off"), and ahead_until_calls is kept only for `slower` (what the text says:
    "ahead for the first N calls only"). A break-even at call 1 stays: the first call is already cheaper."""
    if verdict_ == "faster":
        return calls, ahead
    if not math.isnan(calls) and calls > 1:
        calls = math.inf
    return calls, (ahead if verdict_ == "slower" else math.nan)


# ---- has something changed ----------------------------------------------------------------

# Changes within 5% are noise here: the paired speedup of one preset moved by 5-10% between
# sessions on the 2-core VM (docs/benchmarks.md), and asv uses a factor of 1.1 for the same reason.
THRESHOLD = 0.05
ALPHA = 0.05
CANNOT_TELL = "cannot tell"
CHANGE_METRICS = ("steady", "first_call", "compile")  # what a comparison judges: steady state, cold call, compile


def undetectable(n_a: int, n_b: int | None = None, alpha: float = ALPHA) -> str | None:
    """Why no test result could reach significance at alpha with these counts, or None when one can.

    Two independent sides (n_b given): the smallest two-sided p of an exact Mann-Whitney U test
    is 2 / C(n_a + n_b, n_a). Paired (n_b None, n_a process pairs): the smallest two-sided p of an
    exact Wilcoxon signed-rank test is 2 / 2**n_a.
    """
    if n_b is None:
        smallest = 2.0 / 2.0**n_a if n_a > 0 else 1.0
        return None if smallest < alpha else f"{n_a} process pair{'s' if n_a != 1 else ''}"
    smallest = 2.0 / math.comb(n_a + n_b, n_a) if n_a > 0 and n_b > 0 else 1.0
    if smallest < alpha:
        return None
    if n_a == n_b:
        return f"{n_a} process{'es' if n_a != 1 else ''} per side"
    return f"{n_a} vs {n_b} processes per side"


def change_verdict(
    ratio: float, p_value: float, threshold: float = THRESHOLD, alpha: float = ALPHA, *, cannot: str | None = None
) -> str:
    """NEW/BASE time ratio -> slower / faster (significant and beyond the threshold, symmetric in log),
    'cannot tell (why)' when the counts could never reach significance, else no significant change."""
    if cannot:
        return f"{CANNOT_TELL} ({cannot})"
    if not (p_value < alpha) or not math.isfinite(ratio):
        return "no significant change"
    if ratio > 1 + threshold:
        return "slower"
    if ratio < 1 / (1 + threshold):
        return "faster"
    return "no significant change"


# ---- rank intervals: the Hodges-Lehmann estimate and the CI that inverts its own rank test ----------
#
# One construction for the paired (Wilcoxon signed-rank) and the two-sample (Mann-Whitney U) case.
# `diffs` are the Walsh averages (d_i + d_j) / 2, i <= j, of paired log ratios, or every difference
# log(new_j) - log(base_i) of two samples; the test statistic at shift theta counts the diffs above
# theta, and under H0 it has the null distribution `cdf` (P(T <= c), c = 0..len(diffs)). With
# c = the largest count with 2 * cdf[c] < alpha, the CI is [diffs_(c+1), diffs_(M-c)] (sorted,
# 1-based) and p = 2 * cdf[min(#diffs <= 0, #diffs >= 0)]: the CI excludes 0 exactly when p < alpha,
# by construction and not by luck (zeros and ties count on both sides: conservative). Its coverage
# is 1 - 2 * cdf[c] >= 1 - alpha for continuous data, symmetric about the shift (paired) or shifted
# alike (two samples); discrete at small n: 96.9% at 6 pairs, 96.1% at 8, 95.8% at 12.

EXACT_SIGNED_RANK_MAX_N = 50  # exact null distribution up to here (counts < 2**50), normal approximation above
_EXACT_RANK_SUM_MAX_COUNT = 2**60  # exact Mann-Whitney while C(m + n, m) stays far inside int64


def _normal_cdf(x: np.ndarray) -> np.ndarray:
    return 0.5 * np.array([math.erfc(-v / math.sqrt(2)) for v in np.ravel(x)]).reshape(np.shape(x))


@lru_cache(maxsize=256)
def signed_rank_cdf(n: int) -> np.ndarray:
    """P(T+ <= c) for c = 0..n(n+1)/2 under H0, T+ the Wilcoxon signed-rank statistic of n untied values.

    Exact (the coefficients of prod_r (1 + q^r) / 2^n) for n <= EXACT_SIGNED_RANK_MAX_N, the normal
    approximation with continuity correction above. Read-only (cached).
    """
    top = n * (n + 1) // 2
    if n <= EXACT_SIGNED_RANK_MAX_N:
        counts = np.zeros(top + 1, dtype=np.int64)
        counts[0] = 1
        for r in range(1, n + 1):
            counts[r:] = counts[r:] + counts[:-r].copy()
        cdf = np.cumsum(counts) / 2.0**n
    else:
        sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
        cdf = _normal_cdf((np.arange(top + 1) + 0.5 - top / 2) / sd)
    cdf.flags.writeable = False
    return cdf


@lru_cache(maxsize=256)
def rank_sum_cdf(m: int, n: int) -> np.ndarray:
    """P(U <= c) for c = 0..m*n under H0, U the Mann-Whitney count of pairs (x_i, y_j) with y_j > x_i.

    Exact (the Gaussian binomial coefficient [m + n choose m]_q over C(m + n, m)) while C(m + n, m) <= 2**60,
    the normal approximation with continuity correction above. Read-only (cached).
    """
    top = m * n
    if math.comb(m + n, m) <= _EXACT_RANK_SUM_MAX_COUNT:
        counts = np.zeros(top + 1, dtype=np.int64)
        counts[0] = 1
        for i in range(1, min(m, n) + 1):  # times (1 - q^(L+i)) / (1 - q^i), L = max(m, n): a polynomial again
            k = max(m, n) + i
            if k <= top:
                counts[k:] = counts[k:] - counts[: top + 1 - k].copy()
            for r in range(i):  # dividing by 1 - q^i: running sums along each residue class mod i
                counts[r::i] = np.cumsum(counts[r::i])
        cdf = np.cumsum(counts) / float(math.comb(m + n, m))
    else:
        sd = math.sqrt(m * n * (m + n + 1) / 12)
        cdf = _normal_cdf((np.arange(top + 1) + 0.5 - top / 2) / sd)
    cdf.flags.writeable = False
    return cdf


@lru_cache(maxsize=256)
def _walsh_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The (i, j) index pairs, i <= j, of n values' Walsh averages (np.triu_indices(n)), built once per n: building
    them was ~40% of a paired interval's time. Read-only (cached)."""
    i, j = np.triu_indices(n)
    i.flags.writeable = j.flags.writeable = False
    return i, j


@lru_cache(maxsize=512)
def _critical(kind: str, m: int, n: int, alpha: float) -> int:
    """The largest count c with 2 * cdf[c] < alpha, or -1, for the null distribution of `kind` ("signed": n pairs,
    m unused; "sum": m and n values), computed once per (kind, m, n, alpha)."""
    cdf = signed_rank_cdf(n) if kind == "signed" else rank_sum_cdf(m, n)
    return int(np.searchsorted(2.0 * cdf, alpha, side="left")) - 1


def _invert(diffs: np.ndarray, cdf: np.ndarray, c: int) -> tuple[float, float, float, float]:
    """(estimate, low, high, p) of the rank test whose statistic counts `diffs` above the shift, c its critical count
    (`_critical`); see above. `diffs` hold no NaN: they come from finite values."""
    d = np.sort(diffs)
    size = d.size
    below = int(d.searchsorted(0.0, side="right"))  # how many are <= 0 (d is sorted)
    above = size - int(d.searchsorted(0.0, side="left"))  # how many are >= 0
    p = min(1.0, 2.0 * float(cdf[min(below, above)]))
    if c < 0:
        lo, hi = -math.inf, math.inf  # no interval at this level exists with so few values: it is everything
    else:
        lo, hi = float(d[c]), float(d[size - 1 - c])
    middle = d[size // 2] if size % 2 else (d[size // 2 - 1] + d[size // 2]) / 2  # np.median's, of sorted values
    return float(middle), lo, hi, p


def signed_rank_interval(
    log_ratios: Sequence[float] | np.ndarray, alpha: float = ALPHA
) -> tuple[float, float, float, float]:
    """Hodges-Lehmann estimate of paired log ratios, its 1 - alpha CI inverting the Wilcoxon signed-rank test,
    and that test's two-sided p: (estimate, low, high, p), all in log space.

    The estimate is the median of the Walsh averages (d_i + d_j) / 2, i <= j. The CI excludes 0 exactly
    when p < alpha; p equals scipy.stats.wilcoxon's exact p when no value ties or is zero. When no CI
    at this level exists (n < 6 at alpha = 0.05: the smallest two-sided p is 2 / 2**n) it is
    (-inf, inf). Non-finite values are left out; none left: (nan, nan, nan, 1.0).
    """
    x = np.asarray(log_ratios, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return math.nan, math.nan, math.nan, 1.0
    i, j = _walsh_pairs(x.size)
    return _invert((x[i] + x[j]) / 2, signed_rank_cdf(x.size), _critical("signed", 0, x.size, alpha))


def rank_sum_interval(
    base_logs: Sequence[float] | np.ndarray, new_logs: Sequence[float] | np.ndarray, alpha: float = ALPHA
) -> tuple[float, float, float, float]:
    """Hodges-Lehmann shift of two independent samples (new - base), its 1 - alpha CI inverting the
    Mann-Whitney U test, and that test's two-sided p: (estimate, low, high, p).

    The estimate is the median of all differences new_j - base_i. The CI excludes 0 exactly when
    p < alpha; p equals scipy.stats.mannwhitneyu(method='exact')'s when no values tie. When no CI at
    this level exists (too few values: see `undetectable`) it is (-inf, inf). Non-finite values are
    left out; an empty side: (nan, nan, nan, 1.0).
    """
    a, b = np.asarray(base_logs, dtype=float), np.asarray(new_logs, dtype=float)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    if a.size == 0 or b.size == 0:
        return math.nan, math.nan, math.nan, 1.0
    return _invert(
        np.subtract.outer(b, a).ravel(), rank_sum_cdf(a.size, b.size), _critical("sum", a.size, b.size, alpha)
    )


def _logs(values: Sequence[float] | np.ndarray) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    x = np.log(x[x > 0])  # a zero, negative or missing time has no log: left out (no warning to silence)
    return x[np.isfinite(x)]  # nor has an infinite one


def _ratio_bounds(lo: float, hi: float) -> tuple[float, float]:
    """A log-space CI as ratios; a bound a hair from 0 stays off 1 (exp(1e-17) rounds to 1.0), so the CI
    excludes 1 exactly when the log CI excludes 0."""
    low, high = math.exp(lo), math.exp(hi)
    if lo > 0 and low <= 1.0:
        low = math.nextafter(1.0, 2.0)
    if hi < 0 and high >= 1.0:
        high = math.nextafter(1.0, 0.0)
    return low, high


def paired_change(
    base: Sequence[float], new: Sequence[float], threshold: float = THRESHOLD, alpha: float = ALPHA
) -> dict:
    """NEW against BASE over pairs measured side by side (one process's two variants, or a process pair).

    ratio: exp of the Hodges-Lehmann estimate of the per-pair log(NEW/BASE) (the median of their Walsh
    averages; time: > 1 is slower), a paired estimate that a process's own level (steal, memory
    layout) cancels out of. Its 1 - alpha CI inverts the Wilcoxon signed-rank test that gives p, from
    the same exact null distribution, so the CI excludes 1 exactly when p < alpha; coverage is at
    least 1 - alpha when the per-pair log ratios are symmetric about the truth (`signed_rank_interval`).
    With fewer pairs than any significance needs (n < 6 at alpha = 0.05) no such interval exists: the
    CI is (0, inf), and the verdict says 'cannot tell'. A pair without a ratio (a zero or missing
    time) is left out of everything. The verdict is `change_verdict`'s.
    """
    a, b = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    if a.shape != b.shape or a.size == 0:
        raise ValueError("paired_change needs the same number (>= 1) of values on each side")
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = _logs(b / a)
    est, lo, hi, p = signed_rank_interval(logs, alpha)
    ratio = math.exp(est) if logs.size else math.nan
    lo, hi = _ratio_bounds(lo, hi) if logs.size else (math.nan, math.nan)
    return {
        "ratio": ratio,
        "ratio_ci_low": lo,
        "ratio_ci_high": hi,
        "p_value": p,
        "verdict": change_verdict(ratio, p, threshold, alpha, cannot=undetectable(logs.size, None, alpha)),
        "n_pairs": int(logs.size),
    }


def two_sample_change(
    base: Sequence[float],
    new: Sequence[float],
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
    between_run_sd: float = 0.0,
) -> dict:
    """NEW against BASE from two independent runs: per-process values (times) on each side.

    ratio: exp of the Hodges-Lehmann shift of the log values (the median of every log(new_j) -
    log(base_i)); its 1 - alpha CI inverts the Mann-Whitney U test that gives p, from the same (exact
    for small n) null distribution, so the CI excludes 1 exactly when p < alpha; coverage is at least
    1 - alpha when the two runs' processes differ only by the shift (`rank_sum_interval`). Too few
    processes for any significance: CI (0, inf) and the verdict 'cannot tell'.

    between_run_sd > 0 models a between-run random effect: each run's level moves by a lognormal
    N(0, sd^2) in log space, common to all its processes, which no count of processes averages away.
    The interval is then widened on the log scale: se_within = (log high - log low) / (2 z) from the
    rank interval, se = sqrt(se_within^2 + 2 sd^2), CI = HL +- z se, p = the two-sided normal p of
    HL / se (z the 1 - alpha/2 normal quantile: 1.96), so CI and p still agree. Values that are not
    positive and finite are left out; n_base and n_new count the rest.
    """
    a, b = _logs(base), _logs(new)
    est, lo, hi, p = rank_sum_interval(a, b, alpha)
    if between_run_sd > 0 and a.size and b.size:
        z = NormalDist().inv_cdf(1 - alpha / 2)
        se = math.hypot((hi - lo) / (2 * z), math.sqrt(2) * between_run_sd)  # inf when the rank CI is
        lo, hi = est - z * se, est + z * se
        p = min(1.0, 2 * NormalDist().cdf(-abs(est) / se)) if math.isfinite(se) else 1.0
    finite = bool(a.size and b.size)
    ratio = math.exp(est) if finite else math.nan
    lo, hi = _ratio_bounds(lo, hi) if finite else (math.nan, math.nan)
    return {
        "ratio": ratio,
        "ratio_ci_low": lo,
        "ratio_ci_high": hi,
        "p_value": p,
        "verdict": change_verdict(ratio, p, threshold, alpha, cannot=undetectable(a.size, b.size, alpha)),
        "n_base": int(a.size),
        "n_new": int(b.size),
    }
