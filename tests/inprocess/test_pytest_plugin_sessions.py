"""The pytest plugin's sessions that measure nothing, run by pytester in this process: --jitexp-disable calls the
function once untimed, pytest-xdist workers refuse to time, option mistakes are usage errors. Sessions that measure
run in fresh pytest processes: tests/e2e/test_pytest_plugin.py."""

from __future__ import annotations

import hypothesis  # noqa: F401  # imported once here: the inner sessions load its pytest plugin
import pytest

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def not_under_xdist(monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this suite may itself run under xdist


def test_xdist_workers_refuse_to_time_and_disable_calls_the_function_once_untimed(pytester, monkeypatch):
    pytester.makepyfile(
        test_once="""
        calls = []

        def record(x):
            calls.append(x)
            return x + 1

        def test_once(jitexp_measure):
            assert jitexp_measure(record, 41) is None
            assert calls == [41]
        """
    )
    disabled = pytester.runpytest_inprocess("--jitexp-disable")
    disabled.assert_outcomes(passed=1)
    disabled.stdout.fnmatch_lines(["*test_once.py::test_once*not timed (--jitexp-disable): called once*"])
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    skipped = pytester.runpytest_inprocess("-rs")
    skipped.assert_outcomes(skipped=1)
    skipped.stdout.fnmatch_lines(["*jitexp: not timing under pytest-xdist (worker gw1): parallel tests disturb*"])
    failed = pytester.runpytest_inprocess("--jitexp-save=x")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*jitexp: not timing under pytest-xdist (worker gw1)*--jitexp-disable*"])
    pytester.runpytest_inprocess("--jitexp-disable").assert_outcomes(passed=1)


def test_option_mistakes_are_usage_errors_and_help_lists_the_flags(pytester, monkeypatch):
    pytester.makepyfile(test_user="def test_step(jitexp_measure):\n    jitexp_measure(abs, -1)\n")
    for option, expected in (
        (
            "--jitexp-fail-on=steady,speed",
            "--jitexp-fail-on='speed' is invalid; valid choices: steady, first_call, compile",
        ),
        ("--jitexp-timing=fast", "--jitexp-timing='fast' is invalid; valid choices: default, quick, rigorous"),
        (
            "--jitexp-excuse-host-drift=cpu",
            "--jitexp-excuse-host-drift='cpu' is invalid; valid choices: auto, dispatch, copy, matmul",
        ),
    ):
        result = pytester.runpytest_inprocess(option)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, option
        result.stderr.fnmatch_lines([f"*{expected}*"])
    # --jitexp-dir where --jitexp-save cannot store: each test failed with NotADirectoryError and the summary said
    # "saved" (benchmarks/hunt57.py)
    (pytester.path / "afile").write_text("")
    result = pytester.runpytest_inprocess("--jitexp-save=b", "--jitexp-dir=afile")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--jitexp-dir='afile' is invalid; */afile is a file, not a folder, so --jitexp-save*"]
    )
    help_text = pytester.runpytest_inprocess("--help")
    help_text.stdout.fnmatch_lines(["*--jitexp-allow-changed*", "*--jitexp-excuse-host-drift*"])


def test_a_function_jax_jit_refuses_fails_the_test_in_one_line(pytester):
    """Issue 57, item 3: a generator function (or a static position jax.jit refuses) is jitexp.measure's one line,
    before any worker starts, not a traceback."""
    pytester.makepyfile(
        test_gen="""
        import jax.numpy as jnp

        def rows(x):
            yield x

        def test_rows(jitexp_measure):
            jitexp_measure(rows, jnp.ones(4))
        """
    )
    result = pytester.runpytest_inprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*jitexp: test_gen.py::test_rows: fn='rows' is invalid; is a generator function (it yields): jax.jit refuses*"]
    )
    result.stdout.no_fnmatch_line("*Traceback*")
