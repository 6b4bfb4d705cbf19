"""Every rank of a jax.distributed job makes rank 0's calls, whatever its own per-call times: each call of a sharded
step is a collective, so one call more on one rank meets another collective on the others (the CI's gloo abort,
2026-12-07: a short sample's settle call hung on the rank's own calibration)."""

from __future__ import annotations

import numpy as np
import pytest

from jitexp.config import TimingConfig as Policy
from jitexp.worker.timing import Calibrated, measure_rounds, rewarm_numbers, settle_calls


def rank(policy: Policy, per_call_s: dict[str, float], answers: list[np.ndarray] | None = None):
    """One rank's measure_rounds: the (mode, calls) it made, what it broadcast and its calls per sample; rank 0
    (answers=None) gets its own values back, another rank gets rank 0's, in order."""
    made: list[tuple[str, int]] = []
    sent: list[np.ndarray] = []

    def loop_of(mode):
        def loop(number):
            made.append((mode, number))
            return per_call_s[mode], None

        return loop

    def agree(values):
        sent.append(np.array(values))
        return sent[-1] if answers is None else answers[len(sent) - 1]

    rounds = measure_rounds({m: loop_of(m) for m in per_call_s}, policy, agree=agree)
    return made, sent, rounds.number


def untimed(number: dict[str, int], per_call_s: dict[str, float]) -> tuple[dict[str, int], dict[str, int]]:
    """The re-warm and settle counts a rank would take from its own per-call times at these calls per sample."""
    calibrated = {m: Calibrated(number[m], per_call_s[m]) for m in number}
    rewarm = rewarm_numbers(calibrated) if len(number) > 1 else {}
    return rewarm, {m: settle_calls(c.number, c.per_call_s) for m, c in calibrated.items()}


@pytest.mark.parametrize(
    ("target_s", "zero", "other"),
    [
        # 9-call samples: 4.5 ms on rank 0 (short: a settle call), 5.4 ms on the other (alone: none)
        (4e-3, {"jit": 0.5e-3}, {"jit": 0.6e-3}),
        # and the other way: 5.4 ms on rank 0 (none), 4.5 ms on the other (one)
        (4.6e-3, {"jit": 0.6e-3}, {"jit": 0.5e-3}),
        # two modes whose per-call times differ by rank: the re-warm counts, and the settle calls too
        (4e-3, {"eager": 2e-3, "jit": 0.5e-3}, {"eager": 1e-3, "jit": 0.6e-3}),
        (4e-3, {"eager": 1e-3, "jit": 0.6e-3}, {"eager": 3e-3, "jit": 0.1e-3}),
    ],
)
def test_every_rank_makes_rank_zeros_calls_whatever_its_own_times(target_s, zero, other):
    policy = Policy(warmup=1, min_samples=3, max_samples=5, min_sample_time_s=target_s)
    made_zero, sent_zero, number = rank(policy, zero)
    # the case is one that parts: at rank 0's calls per sample the other rank's own untimed calls differ
    assert untimed(number, other) != untimed(number, zero)
    made_other, sent_other, _ = rank(policy, other, answers=sent_zero)
    assert made_other == made_zero
    assert [v.shape for v in sent_other] == [v.shape for v in sent_zero]  # the same broadcasts, alike in shape
