"""Six kinds of real JAX code (tests/e2e/code/realcode.py, written as a user writes them) run on the first try:
a flax TrainState train step, per-example gradients, scan against a Python loop, a frozen dataclass as a static
keyword, remat and bfloat16 as variants, and the train step through jitexp.measure (issue 23)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import jitexp
from helpers import read, run_cli
from jitexp.config import sizing
from jitexp.report.tables import caveat_summary
from jitexp.worker import entry

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
    return proc, read(out / "results.csv").set_index(["variant", "mode"] if "variants=" in " ".join(args) else "mode")


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


def test_per_example_gradients_with_vmap_grad(tmp_path):
    proc, rows = cli(["workload=per_example", "size=16"], tmp_path / "job")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (rows["status"] == "ok").all() and rows.loc["jit", "matches_eager"] == True  # noqa: E712


@pytest.mark.slow
def test_scan_against_a_python_loop_as_variants(tmp_path):
    variants = "variants={scan:{workload.fn:realcode.rnn_scan},loop:{workload.fn:realcode.rnn_loop}}"
    proc, rows = cli(["workload=rnn", "size=16", variants], tmp_path / "job")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (rows["status"] == "ok").all()
    assert list(rows.index.get_level_values("variant").unique()) == ["scan", "loop"]  # the baseline first
    loop = rows.loc[("loop", "jit")]
    for metric in ("steady", "first_call", "compile"):
        assert loop[f"ab_{metric}_ratio"] > 0 and loop["ab_baseline"] == "scan"
    assert rows.loc[("loop", "jit"), "matches_eager"] == True  # noqa: E712


def test_a_frozen_dataclass_as_a_static_keyword(tmp_path):
    proc, rows = cli(["workload=layer", "size=16"], tmp_path / "job")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert rows.loc["jit", "status"] == "ok" and rows.loc["jit", "static_argnames"] == "['cfg']"


@pytest.mark.slow
def test_remat_and_bfloat16_as_variants(tmp_path):
    remat = "variants={plain:{workload.fn:realcode.mlp_grad},remat:{workload.fn:realcode.mlp_grad_remat}}"
    proc, rows = cli(["workload=mlp_grad", "size=16", remat], tmp_path / "remat")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (rows["status"] == "ok").all() and rows.loc[("remat", "jit"), "matches_eager"] == True  # noqa: E712
    proc, rows = cli(
        ["workload=mlp_grad", "size=16", "variants={f32:{dtype:float32},bf16:{dtype:bfloat16}}"], tmp_path / "dt"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert list(rows["dtype"]) == ["float32", "float32", "bfloat16", "bfloat16"]
    assert rows.loc[("bf16", "jit"), "matches_eager"] == True  # noqa: E712


@pytest.mark.slow
def test_the_train_step_through_measure():
    import realcode

    state, x, y = realcode.init_cnn()
    measured = jitexp.measure(realcode.train_step, state, x, y, carry={0: 0}, timing="quick")
    assert measured.ok, measured.rows[["mode", "status", "error_type"]]
    assert measured.row("jit")["matches_eager"] is True


def test_a_real_mismatch_and_an_output_that_cannot_be_compared_each_say_so():
    import jax.numpy as jnp
    import realcode

    x = jnp.linspace(0.0, 1.0, 8)
    differs_all = jitexp.measure(realcode.jit_differs, x, timing="quick")
    differs = differs_all.row("jit")
    assert differs["matches_eager"] is False and differs["max_abs_err_vs_eager"] == pytest.approx(1.0)
    assert differs["check_vs_eager"].startswith("differs: relative error "), differs["check_vs_eager"]
    other_all = jitexp.measure(realcode.jit_other_tree, x, timing="quick")
    other = other_all.row("jit")
    assert other.get("matches_eager") is None and other.get("max_abs_err_vs_eager") is None
    assert other["check_vs_eager"].startswith("cannot compare: tree structures differ ("), other["check_vs_eager"]
    # the report's caveats keep the two apart
    said = caveat_summary(differs_all.rows) + caveat_summary(other_all.rows)
    assert [line.split(":")[0] for line in said if line.startswith("result")] == [
        "result differs from eager",
        "result not comparable with eager",
    ], said


def test_a_carry_a_users_loop_would_break_on_is_refused_with_a_hint():
    import jax.numpy as jnp

    def shrinks(w, x):
        return w[:-1] * x.sum(), x  # output 0 is one element shorter than argument 0 on every call

    row = jitexp.measure(shrinks, jnp.ones(4), jnp.ones(3), carry={0: 0}, modes="jit", timing="quick").row("jit")
    assert row["status"] == "error" and row["error_type"] == "jitexp.worker.modes.CarryError"
    assert "float32[3] returned, float32[4] taken" in row["error_message"], row["error_message"]
    assert row["hint"].startswith("a loop that feeds output 0 back as argument 0 changes argument 0's shape"), row


@pytest.mark.slow
def test_the_train_step_through_the_magic(capsys):
    IPython = pytest.importorskip("IPython")
    import realcode

    shell = IPython.core.interactiveshell.InteractiveShell.instance()
    try:
        shell.run_line_magic("load_ext", "jitexp")
        state, x, y = realcode.init_cnn()
        shell.user_ns.update(train_step=realcode.train_step, state=state, x=x, y=y)
        shell.run_cell("result = %jitexp -c 0:0 -t quick train_step(state, x, y)")
        result = shell.user_ns["result"]
        assert result.ok and result.row("jit")["matches_eager"] is True
        assert result.row("jit")["donation"].startswith("carried: output 0 -> argument 0")
        assert capsys.readouterr().out == ""  # assigned: kept, not shown
    finally:
        IPython.core.interactiveshell.InteractiveShell.clear_instance()


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


def test_the_setup_memory_check_counts_the_held_copy(monkeypatch):
    import realcode

    cfg = jitexp.compose(
        ["workload=custom", "workload.fn=realcode.mlp_grad", "workload.setup=realcode.init_mlp", "size=256"]
    )
    per_set = 4 * (3 * 256 * 256 + 4 * 256)  # three float32 256x256 weights and a 4x256 batch
    monkeypatch.setattr(sizing, "available_memory", lambda: int(3.5 * per_set))
    # two modes + the check = 3 sets fit in 3.5; with the copy held back to copy from, 4 do not
    with pytest.raises(jitexp.ConfigError, match=r"2 mode\(s\), a check and the copy they are copied from"):
        entry.check_setup_memory(realcode.init_mlp, cfg, 2)
    monkeypatch.setattr(sizing, "available_memory", lambda: int(4.5 * per_set))
    entry.check_setup_memory(realcode.init_mlp, cfg, 2)
