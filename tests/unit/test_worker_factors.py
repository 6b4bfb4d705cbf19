"""JITEXP_WORKER_OFF (worker.factors): the elimination arms' switches, and a bad name's one-line error."""

from __future__ import annotations

import pytest

from jitexp.errors import ConfigError
from jitexp.worker import factors


def test_unset_switches_nothing_off(monkeypatch):
    monkeypatch.delenv(factors.ENV, raising=False)
    assert factors.switched_off() == frozenset()
    assert not factors.off("freeze")


def test_names_are_read_with_spaces(monkeypatch):
    monkeypatch.setenv(factors.ENV, "freeze, ticks,")
    assert factors.switched_off() == {"freeze", "ticks"}
    assert factors.off("ticks") and not factors.off("extras")


def test_a_bad_name_names_the_variable_and_the_valid_ones(monkeypatch):
    monkeypatch.setenv(factors.ENV, "freeze,tickz")
    with pytest.raises(ConfigError) as caught:
        factors.switched_off()
    assert caught.value.key == factors.ENV and caught.value.value == "tickz"
    assert all(name in caught.value.expected for name in factors.FACTORS)


def test_gc_stays_on_during_the_rounds_when_asked():
    import gc

    from jitexp.config import TimingConfig
    from jitexp.worker.timing import measure_rounds

    seen = []

    def loop(n: int):
        seen.append(gc.isenabled())
        return 1e-6, None

    policy = TimingConfig(warmup=0, min_samples=2, max_samples=2, min_sample_time_s=0.0)
    for quiet in (True, False):
        seen.clear()
        measure_rounds({"jit": loop}, policy, quiet_gc=quiet)
        assert seen[-1] is (not quiet)
