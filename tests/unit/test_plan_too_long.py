"""Issue 51, item 6: a sampling plan that cannot finish fails once calibration knows the time, before the first round,
with a hint naming timing.min_samples, not at timing.timeout_s with a generic Timeout."""

from __future__ import annotations

import time

from jitexp.config import TimingConfig as Policy
from jitexp.errors import failure_of
from jitexp.worker.timing import Calibrated, PlanTooLong, measure_rounds, plain_loop, plan_too_long


def test_min_samples_rounds_past_the_timeout_fail_after_calibration():
    calls = []
    policy = Policy(warmup=0, min_samples=100_000, max_samples=100_000, min_sample_time_s=0.001, timeout_s=120.0)
    loop = plain_loop(lambda: calls.append(1), lambda x: x)
    start = time.perf_counter()
    rounds = measure_rounds({"eager": loop, "jit": loop}, policy)
    assert time.perf_counter() - start < 5  # calibration only: no round ran
    assert rounds.samples_s == {} and set(rounds.errors) == {"eager", "jit"}
    failure = failure_of("execute", rounds.errors["jit"])
    assert failure.error_type == "jitexp.worker.timing.PlanTooLong"
    assert failure.error_message.startswith("timing.min_samples=100000 rounds of ")
    assert "past timing.timeout_s=120 s" in failure.error_message
    assert failure.hint.startswith("lower timing.min_samples (about ")
    assert "or raise timing.timeout_s above" in failure.hint


def test_the_plan_counts_every_mode_and_its_rewarm_calls():
    policy = Policy(min_samples=10, max_samples=10, timeout_s=10.0)
    fits = {"a": Calibrated(10, 0.01), "b": Calibrated(10, 0.01)}  # 0.2 s a round: 2 s for 10 rounds
    assert plan_too_long(fits, {}, policy) is None
    assert plan_too_long(fits, {"a": 30, "b": 30}, policy) is None  # 0.8 s a round: 8 s
    too_long = plan_too_long(fits, {"a": 50, "b": 50}, policy)  # 1.2 s a round: 12 s
    assert isinstance(too_long, PlanTooLong)
    assert str(too_long) == (
        "timing.min_samples=10 rounds of 1.2 s each (calibrated) take about 12 s, past timing.timeout_s=10 s: the "
        "worker would be killed before its last round"
    )
    assert too_long.hint == (
        "lower timing.min_samples (about 8 rounds fit in timing.timeout_s; timing.max_samples with it), or raise "
        "timing.timeout_s above 18"
    )


def test_a_plan_that_fits_samples_as_before():
    policy = Policy(warmup=0, min_samples=3, max_samples=3, min_sample_time_s=0.0005, timeout_s=120.0)
    rounds = measure_rounds({"m": plain_loop(lambda: 1, lambda x: x)}, policy)
    assert rounds.errors == {} and len(rounds.samples_s["m"]) == 3
