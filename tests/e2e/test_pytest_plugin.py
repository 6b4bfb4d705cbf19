"""The pytest plugin, run for real with pytester in fresh pytest processes: save, compare (unchanged, slower, changed,
broken, from another machine, no baseline); (disable, xdist and option mistakes: tests/inprocess/test_pytest_plugin_sessions.py).
Each inner session runs several user tests at once where one session can show several things."""

from __future__ import annotations

import json
import shutil
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

    # the host's drift excused, as a user on a shared machine would: in CI (12-08, the host's noisy phase) the
    # unchanged run read 1.65x slower with the host's own matmul probe 2.12x (1.1-3.22) slower between the two runs
    same = pytester.runpytest_subprocess(
        "--jitexp-compare=base", "--jitexp-threshold=0.5", "--jitexp-excuse-host-drift=auto"
    )
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


# A test whose case can be changed from outside: {SIZE} names the variable that sets the argument's shape, {RAISE}
# the one that makes the function raise (both read when the module loads; the function travels to the worker by
# value with them).
CHANGING_TEST = textwrap.dedent("""
    import os

    import jax.numpy as jnp
    import numpy as np

    SIZE = int(os.environ.get("{SIZE}", "64"))
    BROKEN = bool(os.environ.get("{RAISE}"))


    def step(x):
        if BROKEN:
            raise ValueError("step is broken now")
        return jnp.tanh(x @ x)


    def test_step(jitexp_measure):
        jitexp_measure(step, np.full((SIZE, SIZE), 0.01, np.float32), timing="quick")
""")


def changing(pytester, name: str, size: str = "SIZE", broken: str = "NEVER") -> None:
    pytester.makepyfile(**{name: CHANGING_TEST.replace("{SIZE}", size).replace("{RAISE}", broken)})


@pytest.mark.slow
def test_a_baseline_compared_changed_broken_from_another_machine_or_missing(pytester, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this suite may itself run under xdist
    for name in ("SIZE", "RAISE", "NEVER", "FIXED"):
        monkeypatch.delenv(name, raising=False)
    changing(pytester, "test_user")  # its shape changes
    changing(pytester, "test_old")  # its shape changes, against a baseline saved before case.json existed
    changing(pytester, "test_raises", size="FIXED", broken="RAISE")  # it raises
    quiet = ("-p", "no:cacheprovider")
    pytester.runpytest_subprocess("--jitexp-save=base", *quiet).assert_outcomes(passed=3)
    base = pytester.path / ".jitexp" / "base"
    identity = json.loads((base / "test_user.py_test_step" / "case.json").read_text())
    assert identity["size"] == "4096" and identity["args[0]"] == "float32[64,64]" and identity["modes"] == "eager,jit"
    assert identity["function"].endswith("test_user.step")
    (base / "test_old.py_test_step" / "case.json").unlink()

    monkeypatch.setenv("SIZE", "96")
    monkeypatch.setenv("RAISE", "1")
    failed = pytester.runpytest_subprocess("--jitexp-compare=base", "--jitexp-allow-undetectable", *quiet)
    failed.assert_outcomes(failed=3)
    out = failed.stdout.str()
    assert (  # literally: fnmatch reads [64,64] as a character class
        "jitexp: test_user.py::test_step: the measured case changed against the baseline 'base': size: 4096 -> 9216; "
        "args[0]: float32[64,64] -> float32[96,96] (a different case cannot be compared: pass --jitexp-allow-changed"
    ) in out
    failed.stdout.fnmatch_lines(["test_user.py::test_step: not timed", "  vs base: case changed"])
    # a baseline saved before case.json existed: its rows say what changed (after measuring)
    failed.stdout.fnmatch_lines(
        ["*jitexp: test_old.py::test_step: the measured case changed against the baseline 'base': size: 4096 -> 9216*"]
    )
    failed.stdout.fnmatch_lines(["*jitexp: test_raises.py::test_step: *ValueError: step is broken now*"])
    failed.stdout.fnmatch_lines(["test_raises.py::test_step: *", "  vs base: *broken*"])  # the summary says so too

    monkeypatch.delenv("RAISE")
    allowed = pytester.runpytest_subprocess("test_user.py", "--jitexp-compare=base", "--jitexp-allow-changed", *quiet)
    allowed.assert_outcomes(passed=1)
    allowed.stdout.fnmatch_lines(["  vs base (same machine): case changed (allowed): size: 4096 -> 9216*"])

    # the same baseline as if saved on another machine, and a test that has none
    monkeypatch.setenv("SIZE", "64")
    shutil.copytree(base, pytester.path / ".jitexp" / "other")
    path = pytester.path / ".jitexp" / "other" / "test_user.py_test_step" / "results.csv"
    rows = pd.read_csv(path)
    rows["hostname"], rows["cpu_model"] = "elsewhere", "another CPU"
    rows.to_csv(path, index=False)
    changing(pytester, "test_fresh")
    other = pytester.runpytest_subprocess(
        "test_user.py", "test_fresh.py", "--jitexp-compare=other", "--jitexp-allow-undetectable", "-rs", *quiet
    )
    other.assert_outcomes(passed=1, skipped=1)
    other.stdout.fnmatch_lines(
        ["test_user.py::test_step: *", "  vs other (different machine): *", "*from a different machine*"]
    )
    other.stdout.fnmatch_lines(["*jitexp: no baseline 'other' for test_fresh.py::test_step (no *); save one*"])
    assert not (pytester.path / ".pytest_cache").exists()
