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
        n_samples=int(x.size), median_s=float(median), mean_s=mean, std_s=std,
        min_s=float(x.min()), max_s=float(x.max()), p10_s=float(p10), p90_s=float(p90),
        iqr_s=float(q3 - q1), ci95_low_s=lo, ci95_high_s=hi,
        cv=std / mean if mean > 0 else math.nan, n_outliers=tukey_outliers(x),
    )
