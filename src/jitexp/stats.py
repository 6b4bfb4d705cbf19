"""Summary statistics over an array of per-call times (pure NumPy, no JAX)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

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


def hierarchical_medians(groups, n_resamples: int = N_RESAMPLES, seed: int = 0) -> np.ndarray:
    """Bootstrap replicates of the median of per-process medians, resampling at both levels.

    `groups` holds one (rounds x modes) array per process, a row being one round of paired
    samples. Each replicate draws processes with replacement, then rounds with replacement
    inside each drawn process (a round's samples stay together), takes every process's median
    per mode and the median of those. Returns an (n_resamples x modes) array. scipy.stats.bootstrap
    resamples one level only; the spread between processes is the one that matters here.
    """
    arrays = [np.asarray(g, dtype=float).reshape(len(g), -1) for g in groups]
    if not arrays or any(a.shape[0] == 0 for a in arrays):
        raise ValueError("every process needs at least one round")
    rng = np.random.default_rng(seed)
    n_proc, n_modes = len(arrays), arrays[0].shape[1]
    inner = np.empty((n_proc, n_resamples, n_modes))
    for i, a in enumerate(arrays):
        rows = rng.integers(0, a.shape[0], size=(n_resamples, a.shape[0]))
        inner[i] = np.median(a[rows], axis=1)
    picked = rng.integers(0, n_proc, size=(n_resamples, n_proc))
    # Draw j of replicate b takes the process's inner resample (b + j) mod B, so a process drawn
    # twice in one replicate brings two different resamples of its rounds.
    slot = (np.arange(n_resamples)[:, None] + np.arange(n_proc)[None, :]) % n_resamples
    return np.median(inner[picked, slot], axis=1)


def point_medians(groups) -> np.ndarray:
    """The estimate the bootstrap replicates: per mode, the median of the process medians."""
    arrays = [np.asarray(g, dtype=float).reshape(len(g), -1) for g in groups]
    return np.median(np.stack([np.median(a, axis=0) for a in arrays]), axis=0)


def percentile_ci(replicates, level: float = 0.95) -> tuple[float, float]:
    """The central `level` interval of bootstrap replicates (percentile method)."""
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(np.asarray(replicates, dtype=float), [tail, 100 - tail])
    return float(lo), float(hi)


def verdict(ci_low: float, ci_high: float) -> str:
    """faster / slower / no significant difference, from a speedup's CI against 1."""
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


def independent_p(per_a: list[float], per_b: list[float]) -> float:
    """Two-sided Mann-Whitney U p over per-process values of two independent runs (1.0 when untestable)."""
    from scipy.stats import mannwhitneyu

    if len(per_a) < 1 or len(per_b) < 1 or len(per_a) + len(per_b) < 3:
        return 1.0
    return float(mannwhitneyu(per_a, per_b, alternative="two-sided").pvalue)


def paired_p(log_ratios: list[float]) -> float:
    """Two-sided Wilcoxon signed-rank p over per-process (or per process pair) log ratios (1.0 when untestable)."""
    from scipy.stats import wilcoxon

    x = np.asarray(log_ratios, dtype=float)
    x = x[np.isfinite(x)]
    if x.size < 2 or np.all(x == 0):
        return 1.0
    return float(wilcoxon(x, alternative="two-sided").pvalue)


def paired_change(
    base: list[float], new: list[float], threshold: float = THRESHOLD, alpha: float = ALPHA, seed: int = 0
) -> dict:
    """NEW against BASE over pairs measured side by side (one process's two variants, or a process pair).

    ratio: the median of the per-pair NEW/BASE ratios (time: > 1 is slower), a paired estimate that a
    process's own level (steal, memory layout) cancels out of; its 95% CI from resampling whole pairs;
    p from a Wilcoxon signed-rank test on the same per-pair log ratios; the verdict as
    `change_verdict`, 'cannot tell' when n pairs could never be significant.
    """
    a, b = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    if a.shape != b.shape or a.size == 0:
        raise ValueError("paired_change needs the same number (>= 1) of values on each side")
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(b / a)
    logs = logs[np.isfinite(logs)]  # a pair without a ratio (a zero or missing time) is left out of everything
    if logs.size:
        ratio = float(np.exp(np.median(logs)))
        picked = np.random.default_rng(seed).integers(0, logs.size, size=(N_RESAMPLES, logs.size))
        lo, hi = (float(np.exp(v)) for v in percentile_ci(np.median(logs[picked], axis=1)))
    else:
        ratio = lo = hi = math.nan
    p = paired_p(list(logs))
    return {
        "ratio": ratio,
        "ratio_ci_low": lo,
        "ratio_ci_high": hi,
        "p_value": p,
        "verdict": change_verdict(ratio, p, threshold, alpha, cannot=undetectable(logs.size, None, alpha)),
        "n_pairs": int(logs.size),
    }
