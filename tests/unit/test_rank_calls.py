"""Every rank of a jax.distributed job makes rank 0's calls, whatever its own per-call times: each call of a sharded
step is a collective, so one call more on one rank meets another collective on the others (the CI's gloo abort,
2026-12-07: a short sample's settle call hung on the rank's own calibration)."""

from __future__ import annotations

import numpy as np
import pytest

from jitexp.config import TimingConfig as Policy
from jitexp.worker.timing import measure_rounds

POLICY = Policy(warmup=1, min_samples=3, max_samples=5, min_sample_time_s=4e-3)


def rank(per_call_s: dict[str, float], answers: list[np.ndarray] | None = None):
    """One rank's measure_rounds: the (mode, calls) it made and what it broadcast; rank 0 (answers=None) gets its own
    values back, another rank gets rank 0's, in order."""
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

    measure_rounds({m: loop_of(m) for m in per_call_s}, POLICY, agree=agree)
    return made, sent


@pytest.mark.parametrize(
    ("zero", "other"),
    [
        # 9-call samples: 4.5 ms on rank 0 (short: one settle call), 5.4 ms on the other (alone: none)
        ({"jit": 0.5e-3}, {"jit": 0.6e-3}),
        ({"jit": 0.6e-3}, {"jit": 0.5e-3}),
        # two modes whose per-call times differ by rank: the re-warm counts and the settle calls both
        ({"eager": 2e-3, "jit": 0.5e-3}, {"eager": 1e-3, "jit": 0.6e-3}),
        ({"eager": 1e-3, "jit": 0.6e-3}, {"eager": 3e-3, "jit": 0.1e-3}),
    ],
)
def test_every_rank_makes_rank_zeros_calls_whatever_its_own_times(zero, other):
    made_zero, sent = rank(zero)
    alone, _ = rank(other)
    assert alone != made_zero  # on its own this rank would make other calls: the case is one that can part
    made_other, _ = rank(other, answers=sent)
    assert made_other == made_zero
