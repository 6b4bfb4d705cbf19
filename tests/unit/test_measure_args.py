"""jitexp.measure's one-line mistakes and its memory guard: refused before anything is imported or measured (JAX
included). jitexp.measure itself measuring: tests/inprocess/test_measure_api.py and tests/e2e/test_measure_workers.py."""

from __future__ import annotations

import numpy as np
import pytest

import jitexp
from jitexp import ConfigError

QUICK = "quick"


def _two(x, n):
    return x * n


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: jitexp.measure(3), "fn=3 is invalid; a callable"),
        (
            lambda: jitexp.measure(abs, 1, modes=("eager", "jot")),
            "modes='jot' is invalid; valid choices: eager, jit, aot",
        ),
        (
            lambda: jitexp.measure(abs, 1, modes="eager,jot"),  # one string of names, as the magic's -m takes them
            "modes='jot' is invalid; valid choices: eager, jit, aot",
        ),
        (
            lambda: jitexp.measure(abs, 1, timing="fast"),
            "timing='fast' is invalid; valid choices: default, quick, rigorous",
        ),
        (
            lambda: jitexp.measure(abs, 1, timing={"warmpu": 2}),
            "timing.warmpu=2 is invalid; no such timing key; valid keys: warmup,",
        ),
        (lambda: jitexp.measure(abs, 1, timing={"processes": 0}), "timing.processes=0 is invalid; must be > 0"),
        (lambda: jitexp.measure(abs, 1, isolate="thread"), "isolate='thread' is invalid; valid choices: process, none"),
        (lambda: jitexp.measure(abs, 1, device="gpu:x"), "device='gpu:x' is invalid"),
        (lambda: jitexp.measure(abs, 1, static_argnames=["1x"]), "static_argnames='1x' is invalid"),
        # the arguments fn cannot take: every mode's workers ran to a TypeError each (benchmarks/hunt57.py)
        (
            lambda: jitexp.measure(_two, timing=QUICK),
            "args='0 arguments' is invalid; _two(x, n) cannot be called with them (missing a required argument: 'x')",
        ),
        (
            lambda: jitexp.measure(_two, 1, 2, kwargs={"m": 3}),
            "args='2 arguments and keywords m' is invalid; _two(x, n) cannot be called with them (got an unexpected "
            "keyword argument 'm')",
        ),
    ],
)
def test_mistakes_are_one_line_value_errors_naming_the_choices(call, message):
    with pytest.raises(ValueError) as caught:
        call()
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_modes_as_one_comma_separated_string_are_the_same_modes():
    """`modes="eager,jit"` was refused as one unknown mode, 'eager,jit', beside a list naming both as valid."""
    from jitexp.api import prepare

    as_string, _ = prepare(_two, np.ones(2), 2, modes="eager, jit", timing=QUICK)
    as_names, _ = prepare(_two, np.ones(2), 2, modes=("eager", "jit"), timing=QUICK)
    assert tuple(as_string.mode.names) == tuple(as_names.mode.names) == ("eager", "jit")


def test_the_memory_guard_counts_the_argument_bytes(monkeypatch):
    monkeypatch.setattr("jitexp.config.sizing.available_memory", lambda: 10 * 2**20)  # 10 MiB
    with pytest.raises(
        ConfigError,
        match=r"args is invalid; the arguments' arrays \(0.0 GiB, 2 mode\(s\) and a check\) need about 0.0 GiB",
    ):
        jitexp.measure(np.sum, np.ones(2**20, np.float32), timing=QUICK)  # 4 MiB a set, 3 sets


def test_measure_and_prepare_spell_out_one_signature():
    """measure is prepare and then a run: the two list the same keywords with the same defaults (kept as two spelled
    out signatures for help() and the docs: docs/decisions.md, "Issue 60: the twin pairs, one by one")."""
    import inspect

    from jitexp import api

    measure, prepare = inspect.signature(api.measure), inspect.signature(api.prepare)
    assert list(measure.parameters.values()) == list(prepare.parameters.values())


@pytest.mark.parametrize(
    ("cli", "python"),
    [
        (
            "make n static (mode.static_argnums=[1]), or use jax.lax.fori_loop",
            "make n static (static_argnums=1), or use",
        ),
        ("make it static: mode.static_argnames=[cfg]", 'make it static: static_argnames="cfg"'),
        (
            "mode.static_argnums=[<position of a>] (mode.static_argnames=[a] if",
            "static_argnums=<position of a> (static_",
        ),
        ("mode.jit_fn=equinox.filter_jit traces the arrays", 'jit_fn="equinox.filter_jit" traces the arrays'),
        ("use jax.lax.cond", "use jax.lax.cond"),
    ],
)
def test_a_hint_from_python_names_measures_keywords(cli, python):
    """A row measured by jitexp.measure gave the command line's `mode.static_argnums=[1]` where the keyword is
    `static_argnums=1` (a newcomer's walkthrough of the Python path, 2026-12-07)."""
    from jitexp.errors import python_hint

    assert python_hint(cli).startswith(python)
    assert "mode." not in python_hint(cli)
