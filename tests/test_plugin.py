"""The pytest plugin, run for real with pytester in a fresh pytest process: save, compare, slowdown, disable, xdist."""

from __future__ import annotations

import json
import textwrap

import pandas as pd
import pytest

from helpers import command

pytest_plugins = ["pytester"]

# A regression test of the kind a user writes; WORK (from the environment, read when the module loads)
# sets how many matmuls the step does, so a later run can be made deliberately slower.
USER_TEST = textwrap.dedent("""
    import os

    import jax.numpy as jnp
    import numpy as np

    WORK = int(os.environ.get("WORK", "1"))
    TIMING = {TIMING}


    def step(x):
        y = x
        for _ in range(WORK):
            y = jnp.tanh(y @ x)
        return y


    def test_step(jitexp_measure):
        jitexp_measure(step, np.full((128, 128), 0.01, np.float32), timing=TIMING)
""")
# four processes a side: few enough to be quick, enough for a comparison to reach significance
FOUR = {
    "processes": 4,
    "max_processes": 4,
    "warmup": 1,
    "min_samples": 5,
    "max_samples": 20,
    "min_sample_time_s": 0.001,
    "max_time_s": 0.1,
    "dispatch_probes": 2,
}


@pytest.fixture
def user(pytester, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this suite may itself run under xdist

    def write(timing: object = "'quick'") -> None:
        pytester.makepyfile(
            test_user=USER_TEST.replace("{TIMING}", repr(timing) if isinstance(timing, dict) else timing)
        )

    return write


def stored(pytester, name: str) -> pd.DataFrame:
    return pd.read_csv(pytester.path / ".jitexp" / name / "test_user.py_test_step" / "results.csv")


@pytest.mark.serial
@pytest.mark.slow
def test_save_compare_unchanged_passes_and_a_slowdown_fails_naming_the_metric(pytester, user, monkeypatch):
    user(FOUR)
    saved = pytester.runpytest_subprocess("--jitexp-save=base")
    saved.assert_outcomes(passed=1)
    rows = stored(pytester, "base")
    assert set(rows["mode"]) == {"eager", "jit"} and (rows["n_processes"] == 4).all()
    assert (rows["overrides"] == "test_user.py::test_step").all()
    saved.stdout.fnmatch_lines(["*= jitexp =*", "*test_user.py::test_step*step f32[[]128,128[]] float32 cpu: eager*"])

    same = pytester.runpytest_subprocess("--jitexp-compare=base", "--jitexp-threshold=0.5")
    same.assert_outcomes(passed=1)
    # the summary cuts nothing, and below the test's line names the metric that decided: the steady state
    same.stdout.fnmatch_lines(
        ["test_user.py::test_step: step f32[[]128,128[]] float32 cpu: eager *", "  vs base (same machine): *steady *"]
    )
    assert "..." not in same.stdout.str().split("= jitexp =")[-1]

    monkeypatch.setenv("WORK", "10")  # ten matmuls instead of one: several times the steady-state time
    before = stored(pytester, "base").set_index("mode")["median_s"]
    # saving under the compared name: compared with the stored run first, then overwritten
    slower = pytester.runpytest_subprocess("--jitexp-save=base", "--jitexp-compare=base", "--jitexp-threshold=0.5")
    slower.assert_outcomes(failed=1)
    slower.stdout.re_match_lines(
        [
            r".*jitexp: test_user.py::test_step: (eager|jit) (steady|first_call|compile) \d[\d.]*x slower than the "
            r"baseline 'base' \(95% CI [\d.]+x-[\d.]+x, p=[<\d.e-]+, 4 vs 4 processes\): slower beyond the 50% threshold"
        ]
    )
    after = stored(pytester, "base").set_index("mode")["median_s"]
    assert (after > before).all()  # the new (slower) run is the baseline now

    report = pytester.run(command("jitexp-report"), str(pytester.path / ".jitexp" / "base"))
    assert report.ret == 0  # the saved folder is a sweep jitexp-report reads as it is


def test_no_baseline_skips_with_one_line(pytester, user):
    user()
    result = pytester.runpytest_subprocess("--jitexp-compare=nothing", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*jitexp: no baseline 'nothing' for test_user.py::test_step (no *); save one*"])


@pytest.mark.slow
def test_a_baseline_from_another_machine_is_compared_and_said_so(pytester, user):
    user()
    pytester.runpytest_subprocess("--jitexp-save=other", "-p", "no:cacheprovider").assert_outcomes(passed=1)
    path = pytester.path / ".jitexp" / "other" / "test_user.py_test_step" / "results.csv"
    rows = pd.read_csv(path)
    rows["hostname"], rows["cpu_model"] = "elsewhere", "another CPU"
    rows.to_csv(path, index=False)
    result = pytester.runpytest_subprocess(
        "--jitexp-compare=other", "--jitexp-allow-undetectable", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["test_user.py::test_step: *", "  vs other (different machine): *", "*from a different machine*"]
    )
    assert not (pytester.path / ".pytest_cache").exists()


def test_disable_calls_the_function_once_untimed(pytester, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
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
    result = pytester.runpytest_subprocess("--jitexp-disable")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_once.py::test_once*not timed (--jitexp-disable): called once*"])


def test_xdist_workers_refuse_to_time(pytester, user, monkeypatch):
    user()
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    skipped = pytester.runpytest_subprocess("-rs")
    skipped.assert_outcomes(skipped=1)
    skipped.stdout.fnmatch_lines(["*jitexp: not timing under pytest-xdist (worker gw1): parallel tests disturb*"])
    failed = pytester.runpytest_subprocess("--jitexp-save=x")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*jitexp: not timing under pytest-xdist (worker gw1)*--jitexp-disable*"])
    pytester.runpytest_subprocess("--jitexp-disable").assert_outcomes(passed=1)


def test_option_mistakes_are_usage_errors(pytester, user):
    user()
    result = pytester.runpytest_subprocess("--jitexp-fail-on=steady,speed")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--jitexp-fail-on='speed' is invalid; valid choices: steady, first_call, compile*"])
    result = pytester.runpytest_subprocess("--jitexp-timing=fast")
    result.stderr.fnmatch_lines(["*--jitexp-timing='fast' is invalid; valid choices: default, quick, rigorous*"])


# A test whose case can be changed from outside: SIZE sets the argument's shape, RAISE makes the function raise
# (both read when the module loads; the function travels to the worker by value with them).
CHANGING_TEST = textwrap.dedent("""
    import os

    import jax.numpy as jnp
    import numpy as np

    SIZE = int(os.environ.get("SIZE", "64"))
    BROKEN = bool(os.environ.get("RAISE"))


    def step(x):
        if BROKEN:
            raise ValueError("step is broken now")
        return jnp.tanh(x @ x)


    def test_step(jitexp_measure):
        jitexp_measure(step, np.full((SIZE, SIZE), 0.01, np.float32), timing="quick")
""")


@pytest.fixture
def changing(pytester, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv("RAISE", raising=False)
    monkeypatch.setenv("SIZE", "64")
    pytester.makepyfile(test_user=CHANGING_TEST)
    pytester.runpytest_subprocess("--jitexp-save=base").assert_outcomes(passed=1)
    return pytester


@pytest.mark.slow
def test_a_changed_case_fails_naming_what_changed_unless_allowed(changing, monkeypatch):
    folder = changing.path / ".jitexp" / "base" / "test_user.py_test_step"
    identity = json.loads((folder / "case.json").read_text())
    assert identity["size"] == "4096" and identity["args[0]"] == "float32[64,64]" and identity["modes"] == "eager,jit"
    assert identity["function"].endswith("test_user.step")
    monkeypatch.setenv("SIZE", "96")
    changed = changing.runpytest_subprocess("--jitexp-compare=base")
    changed.assert_outcomes(failed=1)
    assert (  # literally: fnmatch reads [64,64] as a character class
        "jitexp: test_user.py::test_step: the measured case changed against the baseline 'base': size: 4096 -> 9216; "
        "args[0]: float32[64,64] -> float32[96,96] (a different case cannot be compared: pass --jitexp-allow-changed"
    ) in changed.stdout.str()
    changed.stdout.fnmatch_lines(["test_user.py::test_step: not timed", "  vs base: case changed"])
    allowed = changing.runpytest_subprocess("--jitexp-compare=base", "--jitexp-allow-changed")
    allowed.assert_outcomes(passed=1)
    allowed.stdout.fnmatch_lines(["  vs base (same machine): case changed (allowed): size: 4096 -> 9216*"])
    # a baseline saved before case.json existed: its rows say what changed (after measuring)
    (folder / "case.json").unlink()
    old = changing.runpytest_subprocess("--jitexp-compare=base")
    old.assert_outcomes(failed=1)
    old.stdout.fnmatch_lines(["*the measured case changed against the baseline 'base': size: 4096 -> 9216*"])


@pytest.mark.slow
def test_a_function_that_now_raises_fails(changing, monkeypatch):
    monkeypatch.setenv("RAISE", "1")
    broken = changing.runpytest_subprocess("--jitexp-compare=base", "--jitexp-allow-undetectable")
    broken.assert_outcomes(failed=1)
    broken.stdout.fnmatch_lines(["*jitexp: test_user.py::test_step: *ValueError: step is broken now*"])
    broken.stdout.fnmatch_lines(["test_user.py::test_step: *", "  vs base: *broken*"])  # the summary says so too


def test_plugin_option_mistakes_for_the_new_flags(pytester, user):
    user()
    result = pytester.runpytest_subprocess("--jitexp-excuse-host-drift=cpu")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--jitexp-excuse-host-drift='cpu' is invalid; valid choices: auto, dispatch, copy, matmul*"]
    )
    help_text = pytester.runpytest_subprocess("--help")
    help_text.stdout.fnmatch_lines(["*--jitexp-allow-changed*", "*--jitexp-excuse-host-drift*"])
