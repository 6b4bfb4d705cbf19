"""Issue 59: between and around the timed loop's runs nothing keeps an earlier output alive (warm-up, calibration, the
rounds' samples, the dispatch probe), as a user's loop keeps none; tests/inprocess/test_live_copies.py counts arrays."""

from __future__ import annotations

import weakref

from jitexp.config import TimingConfig as Policy
from jitexp.worker.timing import calibrate, dispatch_times, measure_rounds, plain_loop


class Out:
    """An output whose liveness a weak reference tells."""


class Call:
    """A call that records how many of its earlier outputs are still alive each time it is called."""

    def __init__(self) -> None:
        self.made: list[weakref.ref] = []
        self.alive: list[int] = []

    def __call__(self) -> Out:
        self.alive.append(sum(ref() is not None for ref in self.made))
        out = Out()
        self.made.append(weakref.ref(out))
        return out


def same(out: Out) -> Out:
    return out


def test_the_rounds_hold_no_earlier_output_while_a_mode_calls():
    calls = {m: Call() for m in ("a", "b")}
    policy = Policy(warmup=2, min_samples=4, max_samples=4, min_sample_time_s=1e-4, target_rel_ci=1.0)
    rounds = measure_rounds({m: plain_loop(c, same) for m, c in calls.items()}, policy, quiet_gc=False)
    for c in calls.values():
        assert len(c.alive) > 10 and max(c.alive) == 0, c.alive
    assert all(isinstance(rounds.last_output[m], Out) for m in calls)  # the last sample's, kept after the rounds


def test_calibration_and_the_dispatch_probe_drop_each_output_before_the_next_call():
    call = Call()
    calibrate(plain_loop(call, same), target_s=1e-3)
    dispatch_times(call, same, 5)
    assert len(call.alive) > 5 and max(call.alive) == 0, call.alive
