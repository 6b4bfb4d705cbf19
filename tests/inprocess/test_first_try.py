"""Real JAX code (tests/e2e/code/realcode.py, written as a user writes them) runs on the first try, in this process
(isolate=none): per-example gradients, scan against a Python loop, a frozen dataclass as a static keyword, remat and
bfloat16 as variants, the train step through jitexp.measure and the magic, mismatches, a refused carry and the setup
memory check (issue 23). The worker process, the setup once per process and the pytest plugin: tests/e2e/
test_first_try.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

import jitexp
from jitexp.config import sizing
from jitexp.report.run.caveats import caveat_summary
from jitexp.worker import inputs

pytest.importorskip("flax")
CODE = Path(__file__).resolve().parents[1] / "e2e" / "code"


@pytest.fixture(autouse=True)
def realcode(monkeypatch):
    monkeypatch.syspath_prepend(str(CODE))
    sys.modules.pop("realcode", None)


def job(*overrides: str) -> pd.DataFrame:
    """One job of tests/e2e/code/conf's workloads in this process, its rows by mode (and variant)."""
    cfg = jitexp.compose(["timing=quick", "isolate=none", *overrides], str(CODE / "conf"))
    rows = pd.DataFrame(jitexp.run(cfg).rows)
    return rows.set_index(["variant", "mode"] if any(o.startswith("variants=") for o in overrides) else "mode")


def test_per_example_gradients_with_vmap_grad():
    rows = job("workload=per_example", "size=16")
    assert (rows["status"] == "ok").all() and rows.loc["jit", "matches_eager"] == True  # noqa: E712


def test_scan_against_a_python_loop_as_variants():
    rows = job(
        "workload=rnn",
        "size=16",
        "variants={scan:{workload.fn:realcode.rnn_scan},loop:{workload.fn:realcode.rnn_loop}}",
    )
    assert (rows["status"] == "ok").all()
    assert list(rows.index.get_level_values("variant").unique()) == ["scan", "loop"]  # the baseline first
    loop = rows.loc[("loop", "jit")]
    for metric in ("steady", "first_call", "compile"):
        assert loop[f"ab_{metric}_ratio"] > 0 and loop["ab_baseline"] == "scan"
    assert rows.loc[("loop", "jit"), "matches_eager"] == True  # noqa: E712


def test_a_frozen_dataclass_as_a_static_keyword():
    rows = job("workload=layer", "size=16")
    assert rows.loc["jit", "status"] == "ok" and rows.loc["jit", "static_argnames"] == "['cfg']"


def test_remat_and_bfloat16_as_variants():
    # one job, the plain float32 gradient the baseline of both
    variants = (
        "variants={plain:{workload.fn:realcode.mlp_grad},remat:{workload.fn:realcode.mlp_grad_remat},"
        "bf16:{dtype:bfloat16}}"
    )
    rows = job("workload=mlp_grad", "size=16", variants)
    assert (rows["status"] == "ok").all() and rows.loc[("remat", "jit"), "matches_eager"] == True  # noqa: E712
    assert list(rows["dtype"]) == ["float32"] * 4 + ["bfloat16"] * 2
    assert rows.loc[("bf16", "jit"), "matches_eager"] == True  # noqa: E712


def test_the_train_step_through_measure():
    import realcode

    state, x, y = realcode.init_cnn()
    measured = jitexp.measure(realcode.train_step, state, x, y, carry={0: 0}, timing="quick", isolate="none")
    assert measured.ok, measured.rows[["mode", "status", "error_type"]]
    assert measured.row("jit")["matches_eager"] is True


def test_a_real_mismatch_and_an_output_that_cannot_be_compared_each_say_so():
    import jax.numpy as jnp
    import realcode

    x = jnp.linspace(0.0, 1.0, 8)
    differs_all = jitexp.measure(realcode.jit_differs, x, timing="quick", isolate="none")
    differs = differs_all.row("jit")
    assert differs["matches_eager"] is False and differs["max_abs_err_vs_eager"] == pytest.approx(1.0)
    assert differs["check_vs_eager"].startswith("differs: relative error "), differs["check_vs_eager"]
    other_all = jitexp.measure(realcode.jit_other_tree, x, timing="quick", isolate="none")
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

    measured = jitexp.measure(
        shrinks, jnp.ones(4), jnp.ones(3), carry={0: 0}, modes="jit", timing="quick", isolate="none"
    )
    row = measured.row("jit")
    assert row["status"] == "error" and row["error_type"] == "jitexp.worker.modes.CarryError"
    assert "float32[3] returned, float32[4] taken" in row["error_message"], row["error_message"]
    assert row["hint"].startswith("a loop that feeds output 0 back as argument 0 changes argument 0's shape"), row


def test_the_train_step_through_the_magic(capsys):
    IPython = pytest.importorskip("IPython")
    import realcode

    shell = IPython.core.interactiveshell.InteractiveShell.instance()
    try:
        shell.run_line_magic("load_ext", "jitexp")
        state, x, y = realcode.init_cnn()
        shell.user_ns.update(train_step=realcode.train_step, state=state, x=x, y=y)
        shell.run_cell("result = %jitexp -c 0:0 -t quick -i none train_step(state, x, y)")
        result = shell.user_ns["result"]
        assert result.ok and result.row("jit")["matches_eager"] is True
        assert result.row("jit")["donation"].startswith("carried: output 0 -> argument 0")
        assert capsys.readouterr().out == ""  # assigned: kept, not shown
    finally:
        IPython.core.interactiveshell.InteractiveShell.clear_instance()


def test_the_setup_memory_check_counts_the_held_copy(monkeypatch):
    import realcode

    cfg = jitexp.compose(
        ["workload=custom", "workload.fn=realcode.mlp_grad", "workload.setup=realcode.init_mlp", "size=256"]
    )
    per_set = 4 * (3 * 256 * 256 + 4 * 256)  # three float32 256x256 weights and a 4x256 batch
    monkeypatch.setattr(sizing, "available_memory", lambda: int(3.5 * per_set))
    # two modes + the check = 3 sets fit in 3.5; with the copy held back to copy from, 4 do not
    with pytest.raises(jitexp.ConfigError, match=r"2 mode\(s\), a check and the copy they are copied from"):
        inputs.check_setup_memory(realcode.init_mlp, cfg, 2)
    monkeypatch.setattr(sizing, "available_memory", lambda: int(4.5 * per_set))
    inputs.check_setup_memory(realcode.init_mlp, cfg, 2)
