"""A short sample of few calls gets one untimed call before it (issue 61: on the TPU one-call samples read 9-12% high)."""

from __future__ import annotations

import pytest

from jitexp.config import TimingConfig as Policy
from jitexp.worker.factors import FACTORS
from jitexp.worker.timing import SHORT_SAMPLE_S, measure_rounds, settle_calls


@pytest.mark.parametrize(
    ("number", "per_call_s", "short", "expected"),
    [
        (1, 550e-6, True, 1),  # the TPU's x + 1 in timing=quick: one call of 0.55 ms
        (9, 500e-6, True, 1),  # 4.5 ms: still short
        (9, 600e-6, True, 0),  # 5.4 ms: each call long beside the refill, no settle
        (1, SHORT_SAMPLE_S, True, 0),  # exactly the bound: not short
        (1, 550e-6, False, 0),  # switched off: as before
        (22, 1e-3, True, 2),  # 10 calls or more: a tenth of them, whatever the switch
        (22, 1e-3, False, 2),
    ],
)
def test_settle_calls(number, per_call_s, short, expected):
    assert settle_calls(number, per_call_s, short=short) == expected


def test_a_one_call_sample_after_its_own_is_settled_by_one_call_unless_switched_off():
    policy = Policy(warmup=0, min_samples=3, max_samples=3, min_sample_time_s=0.0)
    for settle_short, extra in ((True, 1), (False, 0)):
        calls: list[int] = []

        def loop(number, calls=calls):
            calls.append(number)
            return 550e-6, None

        measure_rounds({"m": loop}, policy, settle_short=settle_short)
        # calibration: one try of 1 call; then 3 samples of 1 call, each settled by one when short (the first
        # follows the calibration's try)
        assert calls == ([1] + [1, 1] * 3 if extra else [1] * 4)
    assert "short_settle" in FACTORS  # benchmarks/user_pairs.py's arm switches it off by this name
