"""Real JAX code (tests/e2e/code/realcode.py, written as a user writes it) through the worker process and the pytest
plugin on the first try (issue 23): a flax TrainState carried from step to step, set up once per process, and the
train step in a user's own test. The other kinds of real code run in this process: tests/inprocess/test_first_try.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers import read, run_cli

pytest.importorskip("flax")
pytest_plugins = ["pytester"]
CODE = Path(__file__).resolve().parent / "code"
QUICK = ["--config-dir", "conf", "timing=quick"]


@pytest.fixture(autouse=True)
def realcode(monkeypatch):
    monkeypatch.syspath_prepend(str(CODE))
    sys.modules.pop("realcode", None)


def cli(args: list[str], out: Path, env: dict[str, str] | None = None):
    proc = run_cli([*QUICK, *args, f"hydra.run.dir={out}"], cwd=CODE, env=env)
    return proc, read(out / "results.csv").set_index("mode")


@pytest.mark.slow
def test_a_flax_train_state_carries_matches_eager_and_is_set_up_once(tmp_path):
    log = tmp_path / "setup.log"
    proc, rows = cli(["workload=cnn_step", "mode=[eager,jit,aot]"], tmp_path / "job", env={"SETUP_LOG": str(log)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    # TrainState.create leaves step a Python int; the jitted step returns int32[]: a user's loop feeds it back
    assert (rows["status"] == "ok").all(), rows[["status", "error_type", "hint"]]
    for mode in ("jit", "aot"):
        # apply_fn and tx are static fields: one setup per process gives every mode the same ones, and the
        # check matches leaves by path, so the carried state compares leaf for leaf with eager's
        assert rows.loc[mode, "matches_eager"] == True, rows.loc[mode].filter(like="eager")  # noqa: E712
        assert rows.loc[mode, "max_abs_err_vs_eager"] < 1e-4
        assert rows.loc[mode, "donation"].startswith("carried: output 0 -> argument 0")
    # setup ran once for real in the one process (the other line is the memory check's jax.eval_shape)
    builds = [line.split() for line in log.read_text().splitlines()]
    assert sorted(kind for _, kind in builds) == ["abstract", "concrete"], builds
    assert len({pid for pid, _ in builds}) == 1


@pytest.mark.slow
def test_the_train_step_through_the_pytest_plugin(pytester, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this suite may itself run under xdist
    pytester.makepyfile(realcode=(CODE / "realcode.py").read_text())
    pytester.makepyfile(
        test_train="""
        import realcode


        def test_train_step(jitexp_measure):
            state, x, y = realcode.init_cnn()
            jitexp_measure(realcode.train_step, state, x, y, carry={0: 0}, timing="quick")
        """
    )
    saved = pytester.runpytest_subprocess("--jitexp-save=main", "-p", "no:cacheprovider")
    saved.assert_outcomes(passed=1)
    rows = read(pytester.path / ".jitexp" / "main" / "test_train.py_test_train_step" / "results.csv")
    assert (rows["status"] == "ok").all() and rows.set_index("mode").loc["jit", "matches_eager"] == True  # noqa: E712
