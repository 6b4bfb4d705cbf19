"""XLA's CPU client gets 2 x device.count threads for a job over several CPU devices (issue 42): fewer, and eager ops
over the devices can leave a collective's shares without a thread (the 40 s abort; docs/decisions.md)."""

from __future__ import annotations

import os

import pytest

from jitexp.worker import sharding


@pytest.fixture
def cores(monkeypatch):
    for name in ("PJRT_NPROC", "NPROC"):  # set, then removed: monkeypatch restores the session's value (or none)
        monkeypatch.setenv(name, "")
        monkeypatch.delenv(name)

    def have(n: int) -> None:
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(n)), raising=False)

    return have


def test_fewer_cores_than_twice_the_devices_raise_pjrt_nproc(cores):
    cores(2)
    sharding.client_threads(4)
    assert os.environ["PJRT_NPROC"] == "8"


def test_enough_cores_leave_the_client_as_it_is(cores):
    cores(16)
    sharding.client_threads(4)
    assert "PJRT_NPROC" not in os.environ


@pytest.mark.parametrize(("given", "after"), [("16", "16"), ("3", "8"), ("zero", "8")])
def test_a_users_pjrt_nproc_stands_when_it_is_enough(cores, monkeypatch, given, after):
    cores(2)
    monkeypatch.setenv("PJRT_NPROC", given)
    sharding.client_threads(4)
    assert os.environ["PJRT_NPROC"] == after


def test_nproc_counts_as_the_cores(cores, monkeypatch):
    cores(2)
    monkeypatch.setenv("NPROC", "8")
    sharding.client_threads(4)
    assert "PJRT_NPROC" not in os.environ
