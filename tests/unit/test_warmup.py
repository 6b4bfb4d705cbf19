"""The warm-up's calls (timing.warmup, capped by timing.max_warmup_time_s) before each mode's calibration."""

from __future__ import annotations

import numpy as np
from omegaconf import OmegaConf

from jitexp.api import timing_presets
from jitexp.config import TimingConfig
from jitexp.config.digest import config_hash
from jitexp.worker.timing import measure_rounds, warm_up, warmup_next


class FakeLoop:
    """A timed loop whose calls take `per_call_s` each by its own report: records each count asked of it."""

    def __init__(self, per_call_s: float):
        self.per_call_s, self.asked = per_call_s, []

    def __call__(self, number: int):
        self.asked.append(number)
        return self.per_call_s, None


def test_the_next_chunk_doubles_within_the_count_and_the_time_left():
    assert warmup_next(99, 0.001, 0.099, 1) == 2  # doubling
    assert warmup_next(3, 0.001, 0.05, 8) == 3  # the count's last calls
    assert warmup_next(50, 0.002, 0.011, 16) == 5  # what fits the time left
    assert warmup_next(50, 0.05, 0.0, 1) == 0  # the time is spent: the warm-up ends
    assert warmup_next(50, 0.0, 0.05, 4) == 8  # a call too fast to time: the count and the doubling


def test_without_a_cap_the_warm_up_is_its_count_in_one_loop():
    loop = FakeLoop(0.05)
    warm_up(loop, 3)
    assert loop.asked == [3]
    none = FakeLoop(0.001)
    warm_up(none, 0, 0.1)
    assert none.asked == []


def test_with_a_cap_the_chunks_stop_at_the_count_or_the_time():
    fast = FakeLoop(0.0001)
    warm_up(fast, 100, 0.1)
    assert fast.asked == [1, 2, 4, 8, 16, 32, 37] and sum(fast.asked) == 100
    paced = FakeLoop(0.002)
    warm_up(paced, 100, 0.1)
    assert paced.asked == [1, 2, 4, 8, 16, 19] and sum(paced.asked) == 50  # 50 calls of 2 ms fill 0.1 s
    slow = FakeLoop(0.05)
    warm_up(slow, 100, 0.1)
    assert slow.asked == [1, 1]  # two calls of 50 ms
    slower = FakeLoop(0.5)
    warm_up(slower, 100, 0.1)
    assert slower.asked == [1]  # the first call always runs


def test_every_rank_makes_rank_0s_chunks():
    agreed: list[int] = []

    def rank0(values):
        agreed.append(int(values[0]))
        return values

    rank_0 = FakeLoop(0.0001)
    warm_up(rank_0, 100, 0.1, agree=rank0)
    replay = iter(agreed)
    rank_1 = FakeLoop(0.01)  # on its own it would stop after ~10 calls
    warm_up(rank_1, 100, 0.1, agree=lambda values: np.array([next(replay)]))
    assert rank_1.asked == rank_0.asked and sum(rank_1.asked) == 100


def test_the_rounds_warm_each_mode_up_before_its_calibration():
    loop = FakeLoop(0.002)
    policy = TimingConfig(warmup=100, max_warmup_time_s=0.1, min_samples=2, max_samples=2, min_sample_time_s=0.0005)
    measure_rounds({"m": loop}, policy, quiet_gc=False)
    assert loop.asked[:7] == [1, 2, 4, 8, 16, 19, 1]  # the warm-up's chunks, then calibration's one call
    before = FakeLoop(0.002)
    measure_rounds({"m": before}, TimingConfig(warmup=3, min_samples=2, max_samples=2, min_sample_time_s=0.0005))
    assert before.asked[:2] == [3, 1]  # no cap (the default preset): the count in one loop, as before


def test_quick_warms_up_with_100_calls_for_at_most_a_tenth_of_a_second():
    quick = timing_presets()["quick"]
    assert (quick["warmup"], quick["max_warmup_time_s"]) == (100, 0.1)
    assert timing_presets()["default"]["max_warmup_time_s"] is None


def test_quick_takes_samples_as_long_as_the_default_and_the_users_batches():
    """Issue 61: quick's 0.5 ms samples read x + 1 at 1.14 of the user's 10 ms batches on a noisy host, 10 ms ones 1.03
    (docs/decisions.md); quick differs from default in how many processes and samples, not in a sample's length."""
    presets = timing_presets()
    assert presets["quick"]["min_sample_time_s"] == presets["default"]["min_sample_time_s"] == 0.01


def test_a_folder_written_before_the_cap_existed_has_the_same_digest():
    before = OmegaConf.create({"size": 8, "timing": {"warmup": 3}})
    now = OmegaConf.create({"size": 8, "timing": {"warmup": 3, "max_warmup_time_s": None}})
    capped = OmegaConf.create({"size": 8, "timing": {"warmup": 3, "max_warmup_time_s": 0.1}})
    assert config_hash(now) == config_hash(before) != config_hash(capped)
