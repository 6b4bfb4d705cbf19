"""A Ctrl-C while Hydra composes a job's config is held, and raised at the next line of jitexp's own (cli)."""

from __future__ import annotations

import os
import signal

import pytest

from jitexp.cli import _HeldInterrupt


def test_a_ctrl_c_while_held_is_raised_at_release_and_the_default_comes_back():
    held = _HeldInterrupt()
    held.driver = True
    held.hold()
    try:
        os.kill(os.getpid(), signal.SIGINT)  # inside OmegaConf's flag context, say: nothing raised there
        assert held.pending
    finally:
        with pytest.raises(KeyboardInterrupt):
            held.release()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler and not held.pending
    held.release()  # nothing pending: nothing raised


def test_only_the_driver_holds():
    held = _HeldInterrupt()  # a job run elsewhere (a SLURM node's process) keeps Python's own Ctrl-C
    held.hold()
    assert not held.held and signal.getsignal(signal.SIGINT) is signal.default_int_handler
