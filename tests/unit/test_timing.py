"""The sampling loop with plain Python callables: blocking, calibration and stopping rules."""

from __future__ import annotations

import gc
import time

import numpy as np
import pytest

from jitexp.config import TimingConfig as Policy
from jitexp.worker.timing import (
    Calibrated,
    calibrate,
    dispatch_times,
    measure_rounds,
    plain_loop,
    rewarm_numbers,
    rotation,
    round_order,
)

pytestmark = pytest.mark.serial  # sleeps and budgets: stop reasons and durations depend on a quiet machine


def loops(calls, blocks):
    """The generic timed loop of each mode."""
    return {m: plain_loop(call, blocks[m]) for m, call in calls.items()}


def measure(call, policy, block, **kw):
    """One mode through the interleaved loop: its samples, number and stop reason."""
    rounds = measure_rounds(loops({"m": call}, {"m": block}), policy, **kw)
    rounds.samples_s, rounds.number, rounds.last_output = (
        rounds.samples_s["m"],
        rounds.number["m"],
        rounds.last_output.get("m"),
    )
    return rounds


class Recorder:
    """A call whose outputs must each be blocked on; counts calls and blocks."""

    def __init__(self, sleep_s: float = 0.0):
        self.sleep_s, self.calls, self.blocked = sleep_s, 0, []

    def __call__(self):
        self.calls += 1
        if self.sleep_s:
            time.sleep(self.sleep_s)
        return {"out": [self.calls, (self.calls,)]}

    def block(self, out):
        self.blocked.append(out["out"][0])
        return out


def test_every_call_is_blocked_on_inside_the_timed_region():
    rec = Recorder()
    m = measure(rec, Policy(warmup=2, min_samples=5, max_samples=5, min_sample_time_s=1e-4), rec.block)
    assert rec.blocked == list(range(1, rec.calls + 1))
    assert len(m.samples_s) == 5
    assert m.last_output["out"][0] == rec.calls


def test_a_function_of_known_duration():
    rec = Recorder(sleep_s=0.002)
    m = measure(rec, Policy(warmup=1, min_samples=3, max_samples=4, min_sample_time_s=0.001), rec.block)
    assert m.number == 1  # one call already outlasts the target sample time
    assert min(m.samples_s) >= 0.002  # sleep never returns early


def test_calibration_batches_fast_calls():
    rec = Recorder()
    number, per_call = calibrate(plain_loop(rec, rec.block), target_s=0.005)
    assert number > 10 and number * per_call >= 0.005
    before = rec.calls
    per_call, out = plain_loop(rec, rec.block)(number)
    assert rec.calls - before == number and out["out"][0] == rec.calls
    assert per_call > 0


def test_floor_on_samples_even_when_the_budget_is_spent():
    rec = Recorder(sleep_s=0.001)
    m = measure(
        rec,
        Policy(warmup=0, min_samples=6, max_samples=100, min_sample_time_s=1e-4, max_time_s=1e-6, target_rel_ci=1e-9),
        rec.block,
    )
    assert len(m.samples_s) == 6
    assert m.stop_reason == "budget"


def test_stops_at_max_samples_and_when_the_ci_is_tight():
    rec = Recorder()
    capped = measure(
        rec,
        Policy(warmup=0, min_samples=3, max_samples=7, min_sample_time_s=1e-5, max_time_s=100, target_rel_ci=1e-12),
        rec.block,
    )
    assert len(capped.samples_s) == 7 and capped.stop_reason == "max_samples"
    loose = measure(
        rec,
        Policy(warmup=0, min_samples=3, max_samples=1000, min_sample_time_s=1e-5, max_time_s=100, target_rel_ci=10.0),
        rec.block,
    )
    assert len(loose.samples_s) == 3 and loose.stop_reason == "ci"


def test_gc_is_off_while_sampling_and_restored_after():
    states = []
    rec = Recorder()

    def call():
        states.append(gc.isenabled())
        return rec()

    assert gc.isenabled()
    measure(call, Policy(warmup=0, min_samples=3, max_samples=3, min_sample_time_s=1e-5), rec.block)
    assert gc.isenabled()
    assert states[-1] is False


def test_dispatch_time_excludes_the_block():
    def call():
        return "ready later"

    def slow_block(out):
        time.sleep(0.02)
        return out

    times = dispatch_times(call, slow_block, probes=3)
    assert len(times) == 3 and max(times) < 0.02


def fixed_loop(name, order, per_call_s=1e-3):
    """A loop that records its calls and reports `per_call_s` a call, whatever the clock says."""

    def loop(number):
        order.extend([name] * number)
        return per_call_s, name

    return loop


def test_rounds_interleave_modes_in_rotated_order():
    order = []
    policy = Policy(warmup=0, min_samples=4, max_samples=4, min_sample_time_s=0.0)
    r = measure_rounds({m: fixed_loop(m, order) for m in "abc"}, policy, shift=1)
    calibration = order[:3]
    assert calibration == ["a", "b", "c"]  # number=1 each: one calibration call per mode
    # rounds 1..4 (shift 1): rotated, and reversed in the second cycle of three (round_order); a sample that
    # follows another mode's is preceded by untimed calls of its own lasting what the longest other mode takes in
    # a round (a sample and a re-warm call: 2 calls of 1 ms): "a" right after "a" is not re-warmed, only settled by
    # one call (a one-call sample of 1 ms is short: settle_calls)
    sampled = ["b", "c", "a", "c", "a", "b", "c", "b", "a", "a", "c", "b"]
    rewarmed = [m for i, m in enumerate(sampled) for _ in range(2 if i and sampled[i - 1] == m else 3)]
    assert order[3:] == rewarmed
    assert {m: len(s) for m, s in r.samples_s.items()} == {"a": 4, "b": 4, "c": 4}
    assert rotation(["a", "b"], 3) == ["b", "a"] and rotation([], 2) == []


def test_a_fast_mode_after_a_slow_one_is_rewarmed_for_as_long_as_the_slow_sample():
    """The bias a 30 ms eager step put on a 2 ms jit step (docs/decisions.md): re-warm by time, not by count."""
    rewarm = rewarm_numbers({"eager": Calibrated(1, 0.030), "jit": Calibrated(5, 0.002)})
    # jit: 30 x 2 ms = eager's 30 ms sample and its one re-warm call; eager: one call at least (jit's 12 ms)
    assert rewarm == {"eager": 1, "jit": 30}
    assert rewarm_numbers({"jit": Calibrated(400, 1e-5), "aot": Calibrated(400, 1e-5)}) == {"jit": 500, "aot": 500}
    quick_other = {"jit": Calibrated(8, 0.001), "other": Calibrated(1, 1e-6)}
    assert rewarm_numbers(quick_other)["jit"] == 2  # a quarter of its sample, at least
    three = rewarm_numbers({"eager": Calibrated(1, 0.030), "jit": Calibrated(5, 0.002), "aot": Calibrated(5, 0.002)})
    assert three == {"eager": 1, "jit": 30, "aot": 30}  # the longest other mode (eager), not eager + aot
    order = []
    policy = Policy(warmup=0, min_samples=2, max_samples=2, min_sample_time_s=0.004)
    loops_ = {"slow": fixed_loop("slow", order, 0.030), "fast": fixed_loop("fast", order, 0.002)}
    measure_rounds(loops_, policy)
    calibrated = ["slow", "fast", "fast", "fast", "fast"]  # slow: 1 call is done; fast: tries of 1, then 3 calls
    assert order[:5] == calibrated
    # round 1: slow (1 re-warm call, 1 sampled), fast (30 re-warm: slow's 2 calls, 3 sampled); round 2 starts with
    # fast, right after fast (no re-warm), then slow (1 + 1)
    assert order[5:] == ["slow"] * 2 + ["fast"] * (30 + 3) + ["fast"] * 3 + ["slow"] * 2


def test_a_dropped_mode_no_longer_sets_the_others_rewarm():
    order = []
    calls = {"slow": 0}

    def slow(number):  # 30 ms a call; fails on its first call after calibration (its re-warm)
        calls["slow"] += 1
        if calls["slow"] > 1:
            raise RuntimeError("boom")
        order.extend(["slow"] * number)
        return 0.030, "slow"

    policy = Policy(warmup=0, min_samples=2, max_samples=2, min_sample_time_s=0.004)
    r = measure_rounds({"slow": slow, "a": fixed_loop("a", order, 0.002), "b": fixed_loop("b", order, 0.002)}, policy)
    assert isinstance(r.errors["slow"], RuntimeError)
    assert order[:9] == ["slow"] + ["a"] * (1 + 3) + ["b"] * (1 + 3)  # calibration: tries of 1, then 3 calls
    # round 1: slow fails; a and b each re-warm for slow's 60 ms (30 calls) and sample 3. Round 2 (b, then a) without
    # slow: b follows b (no re-warm), a re-warms for b's sample and least re-warm (4 calls of 2 ms), then samples 3
    assert order[9:] == ["a"] * 33 + ["b"] * 33 + ["b"] * 3 + ["a"] * (4 + 3)


def test_a_mode_that_fails_is_dropped_and_the_others_go_on():
    calls = {"n": 0}

    def flaky():
        calls["n"] += 1
        if calls["n"] > 3:
            raise RuntimeError("boom")
        return 1

    policy = Policy(warmup=1, min_samples=5, max_samples=5, min_sample_time_s=0.0)
    r = measure_rounds(loops({"ok": lambda: 2, "flaky": flaky}, {"ok": lambda o: o, "flaky": lambda o: o}), policy)
    assert set(r.samples_s) == {"ok"} and len(r.samples_s["ok"]) == 5
    assert isinstance(r.errors["flaky"], RuntimeError)


def test_sampling_context_wraps_each_sample_of_its_mode():
    entered = []

    class Ctx:
        def __init__(self, mode):
            self.mode = mode

        def __enter__(self):
            entered.append(self.mode)

        def __exit__(self, *exc):
            return False

    policy = Policy(warmup=0, min_samples=3, max_samples=3, min_sample_time_s=0.0)
    measure_rounds(loops({"a": lambda: 1, "b": lambda: 2}, {"a": lambda o: o, "b": lambda o: o}), policy, sampling=Ctx)
    assert sorted(entered) == ["a"] * 3 + ["b"] * 3


def test_with_three_keys_each_follows_both_neighbours_equally():
    keys = ["a", "b", "c"]
    follows: dict[tuple[str, str], int] = {}
    for r in range(12):
        order = round_order(keys, r)
        assert sorted(order) == keys
        for before, after in zip(order, order[1:]):
            follows[(before, after)] = follows.get((before, after), 0) + 1
    assert len(follows) == 6 and len(set(follows.values())) == 1  # every ordered pair, equally often
    assert [round_order(["a", "b"], r) for r in range(4)] == [rotation(["a", "b"], r) for r in range(4)]


def test_every_rank_takes_rank_zeros_calibration_and_stops_at_its_round():
    """A jax.distributed job: each call is a collective, so every rank must make rank 0's calls (`agree`)."""
    sent = []

    def rank_zero(values):  # what the broadcast brings back: rank 0 asks for 7 calls, then is done; stops in round 3
        sent.append([int(v) for v in values])
        if len(sent) <= 2:
            return np.array([len(sent) - 1, 7])  # calibration: (done, next count)
        if len(sent) == 3:
            return np.asarray(values)  # the untimed calls (re-warm, settle): this rank's own
        return np.array([2 if len(sent) == 6 else 0])  # rounds: go on, go on, "budget"

    rec = Recorder(sleep_s=0.001)  # one call outlasts the target: alone, this rank is done at one call
    policy = Policy(warmup=0, min_samples=1, max_samples=50, min_sample_time_s=1e-4, target_rel_ci=0.99)
    m = measure(rec, policy, rec.block, agree=rank_zero)
    assert sent[0] == [1, 1]  # this rank was done at one call...
    assert m.number == 7  # ...and took rank 0's seven
    assert len(m.samples_s) == 3 and m.stop_reason == "budget"  # its own "ci" verdicts did not stop it
    assert [len(v) for v in sent] == [2, 2, 2, 1, 1, 1]


def test_with_agree_a_failing_mode_ends_the_process_instead_of_being_dropped_on_one_rank():
    def fails():
        raise ValueError("only here")

    policy = Policy(warmup=1, min_samples=1, max_samples=2, min_sample_time_s=1e-4)
    with pytest.raises(ValueError, match="only here"):
        measure_rounds(loops({"m": fails}, {"m": lambda x: x}), policy, agree=lambda v: v)
    rounds = measure_rounds(loops({"m": fails}, {"m": lambda x: x}), policy)  # one process: dropped, kept as error
    assert isinstance(rounds.errors["m"], ValueError)


def test_a_sample_after_the_same_modes_is_settled_by_untimed_calls():
    """Issue 61: the bookkeeping between samples cools the caches; a tenth of a sample's calls runs untimed first
    (none for a sample of fewer than 10 calls), and settle=False leaves them out."""
    policy = Policy(warmup=0, min_samples=3, max_samples=3, min_sample_time_s=0.02)
    for settle, extra in ((True, 2), (False, 0)):
        order = []
        measure_rounds({"m": fixed_loop("m", order, 1e-3)}, policy, settle=settle)
        # calibration: tries of 1, then 22 calls (1.1 x the 20 ms wanted); 3 samples of 22, each settled (the first
        # follows the calibration's try and the first reading of the counters)
        assert len(order) == 1 + 22 + 3 * (extra + 22)
