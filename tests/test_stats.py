"""Summary statistics on arrays whose answers are known by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from jitexp.stats import median_ci, summarize, tukey_outliers


def test_summary_of_a_known_array():
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s.n_samples == 5
    assert s.median_s == 3.0
    assert s.mean_s == 22.0
    assert s.min_s == 1.0 and s.max_s == 100.0
    assert s.iqr_s == pytest.approx(2.0)
    assert s.n_outliers == 1  # 100 lies beyond q3 + 1.5 * IQR = 7
    assert s.std_s == pytest.approx(np.std([1, 2, 3, 4, 100], ddof=1))
    assert s.cv == pytest.approx(s.std_s / 22.0)


def test_median_ci_uses_order_statistics():
    x = np.arange(1.0, 101.0)  # n = 100: ranks 40 and 61 (1-based)
    lo, hi = median_ci(x)
    assert (lo, hi) == (40.0, 61.0)
    assert lo <= np.median(x) <= hi


def test_median_ci_of_tiny_samples_is_the_range():
    assert median_ci([3.0, 1.0, 2.0]) == (1.0, 3.0)
    assert median_ci([5.0]) == (5.0, 5.0)
    assert all(math.isnan(v) for v in median_ci([]))


def test_ci_shrinks_with_more_samples():
    rng = np.random.default_rng(0)
    small = summarize(rng.normal(1.0, 0.1, 20))
    large = summarize(rng.normal(1.0, 0.1, 2000))
    assert large.rel_ci_halfwidth < small.rel_ci_halfwidth


def test_outliers_are_counted_on_both_sides():
    assert tukey_outliers([-50.0, 1.0, 1.1, 1.2, 1.3, 1.1, 60.0]) == 2
    assert tukey_outliers([1.0, 1.0, 1.0]) == 0


def test_constant_samples():
    s = summarize([2.0] * 10)
    assert s.std_s == 0.0 and s.cv == 0.0 and s.rel_ci_halfwidth == 0.0


def test_empty_input_is_an_error():
    with pytest.raises(ValueError):
        summarize([])
