"""The order of an `envs` job's processes: each round alternates the envs, old new new old, so that neither always
goes first (the envs jobs themselves: tests/e2e/test_envs.py)."""

from __future__ import annotations

from jitexp.engine import pyenvs


def test_processes_alternate_old_new_new_old_in_rounds():
    assert [pyenvs.env_of(k, ["old", "new"]) for k in range(8)] == ["old", "new", "new", "old"] * 2
    assert [pyenvs.env_of(k, "abc") for k in range(6)] == list("abccba")
    assert pyenvs.split(list(range(6)), ["old", "new"]) == {"old": [0, 3, 4], "new": [1, 2, 5]}
