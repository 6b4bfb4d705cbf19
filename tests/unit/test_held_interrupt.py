"""A Ctrl-C while Hydra composes the run's config is held, and raised at the next line of jitexp's own."""

from __future__ import annotations

import os
import signal

import pytest

from jitexp.engine.interrupts import HeldInterrupt


def test_a_ctrl_c_while_held_is_raised_at_release_and_the_default_comes_back():
    held = HeldInterrupt()
    held.hold()
    try:
        os.kill(os.getpid(), signal.SIGINT)  # inside OmegaConf's flag context, say: nothing raised there
        assert held.pending
    finally:
        with pytest.raises(KeyboardInterrupt):
            held.release()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler and not held.pending
    held.release()  # nothing pending: nothing raised


def test_without_a_hold_release_changes_nothing():
    held = HeldInterrupt()  # a job on a SLURM node: its process never held
    before = signal.getsignal(signal.SIGINT)
    held.release()
    assert signal.getsignal(signal.SIGINT) is before
