"""The warm-up's calls (timing.warmup, capped by timing.max_warmup_time_s) before each mode's calibration."""

from __future__ import annotations

import numpy as np

from jitexp.config import TimingConfig
from jitexp.worker.timing import measure_rounds, warm_up, warmup_rest


class FakeLoop:
    """A timed loop whose calls take `per_call_s` each by its own report: records each count asked of it."""

    def __init__(self, per_call_s: float):
        self.per_call_s, self.asked = per_call_s, []

    def __call__(self, number: int):
        self.asked.append(number)
        return self.per_call_s, None


def test_the_rest_of_the_warm_up_is_its_count_or_what_fits_its_time():
    assert warmup_rest(100, 0.0001, 0.1) == 99  # 100 calls of 0.1 ms fit in 0.1 s
    assert warmup_rest(100, 0.002, 0.1) == 49  # 50 calls of 2 ms do
    assert warmup_rest(100, 0.5, 0.1) == 0  # the first call alone outlasts it
    assert warmup_rest(100, 0.0, 0.1) == 99  # a call too fast to time: the count


def test_without_a_cap_the_warm_up_is_its_count():
    loop = FakeLoop(0.05)
    warm_up(loop, 3)
    assert loop.asked == [3]
    none = FakeLoop(0.001)
    warm_up(none, 0, 0.1)
    assert none.asked == []


def test_with_a_cap_the_first_call_times_the_rest():
    fast = FakeLoop(0.0001)
    warm_up(fast, 100, 0.1)
    assert fast.asked == [1, 99]
    slow = FakeLoop(0.05)
    warm_up(slow, 100, 0.1)
    assert slow.asked == [1, 1]  # two calls of 50 ms fill 0.1 s


def test_a_distributed_job_makes_rank_0s_count():
    loop = FakeLoop(0.0001)
    warm_up(loop, 100, 0.1, agree=lambda values: np.array([7]))
    assert loop.asked == [1, 7]


def test_the_rounds_warm_each_mode_up_before_its_calibration():
    loop = FakeLoop(0.002)
    policy = TimingConfig(warmup=100, max_warmup_time_s=0.1, min_samples=2, max_samples=2, min_sample_time_s=0.0005)
    measure_rounds({"m": loop}, policy, quiet_gc=False)
    assert loop.asked[:3] == [1, 49, 1]  # the warm-up's first call, the 49 that fit, calibration's one call
    before = FakeLoop(0.002)
    measure_rounds({"m": before}, TimingConfig(warmup=3, min_samples=2, max_samples=2, min_sample_time_s=0.0005))
    assert before.asked[:2] == [3, 1]  # no cap (the default preset): the count in one loop, as before
