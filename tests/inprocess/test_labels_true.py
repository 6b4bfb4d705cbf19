"""Issue 57, item 2, "every label true", from jobs run in this process (isolate=none): the row's dtype is the
arguments' dtype, a pre-jitted function is named as such, and size labels only what it built. The pure rules:
tests/unit/test_labels_true.py."""

from __future__ import annotations

import sys
import textwrap

import numpy as np
import pytest

import jitexp
from jitexp import compose, run
from jitexp.analysis.formatting.answer import case_text

CODE = textwrap.dedent("""
    import jax
    import jax.numpy as jnp


    def add(x, y):
        return x.astype(jnp.float32) + y


    def scale(x, n):
        return jnp.sin(x) * n


    jitted = jax.jit(scale)


    def tokens_and_params(size, dtype, seed):
        return jnp.zeros((size,), jnp.int32), jnp.ones((size,), jnp.bfloat16)
""")
QUICK = ["timing=quick", "isolate=none", "workload=custom", "mode=jit", "check=false", "device_time=false"]


@pytest.fixture(autouse=True)
def user_module(tmp_path, monkeypatch):
    (tmp_path / "ltcode.py").write_text(CODE)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("ltcode", None)


# ---- the row's dtype is the arguments' dtype ------------------------------------------------------------------------


def test_mixed_dtypes_label_the_row_with_both():
    """A float16 spec beside one that follows the job's float32: the row said float32."""
    args = "workload.args=[{shape:['${size}'],dtype:float16},{shape:['${size}']}]"
    row = run(compose([*QUICK, "workload.fn=ltcode.add", args, "size=8"])).row
    assert row["status"] == "ok", row
    assert row["dtype"] == "float16+float32"
    assert case_text([row]).startswith("add size=8 float16+float32 ")


def test_a_setup_returning_other_dtypes_labels_the_row_with_them():
    """A setup that ignores dtype (int tokens, bfloat16 params) in a float32 job: the row said float32."""
    row = run(compose([*QUICK, "workload.fn=ltcode.add", "workload.setup=ltcode.tokens_and_params", "size=8"])).row
    assert row["status"] == "ok", row
    assert row["dtype"] == "bfloat16"


def test_measure_with_mixed_arguments_says_both():
    import jax.numpy as jnp
    from ltcode import add

    result = jitexp.measure(
        add, jnp.ones(8, jnp.float16), np.ones(8, np.float32), modes="jit", timing="quick", isolate="none"
    )
    assert result.rows["dtype"].tolist() == ["float16+float32"]


# ---- the noise columns' blank says why ------------------------------------------------------------------------------


def test_a_quick_jobs_blank_noise_is_too_short_not_the_hosts_lack():
    """On a host whose /proc/stat has the counters, a quick job's few ticks are not "not available on this host"."""
    from jitexp import noise

    row = run(compose([*QUICK, "workload.fn=ltcode.scale", "workload.args=[{shape:[8]},{value:2}]"])).row
    assert row["status"] == "ok", row
    if noise.cpu_times() is None:
        pytest.skip("this host's /proc/stat has no per-CPU steal")
    note = str(row["unavailable"])
    assert "not available on this host" not in note
    assert "noise" not in note or "noise: not measured (the rounds lasted under 10" in note, note


# ---- size only where it built the inputs ----------------------------------------------------------------------------


def test_a_fixed_shape_job_has_no_size_and_is_labelled_by_its_shapes():
    args = "workload.args=[{shape:[16]},{value:10}]"
    row = run(compose([*QUICK, "workload.fn=ltcode.scale", args])).row
    assert row["status"] == "ok", row
    assert row["inputs"] == "fixed" and row["size"] is None
    assert case_text([row]).startswith("scale f32[16] i32[] float32 ")


# ---- a pre-jitted function is named as such -------------------------------------------------------------------------


def test_a_pre_jitted_function_timed_as_jit_is_named_so():
    row = run(
        compose([*QUICK, "workload.fn=ltcode.jitted", "workload.args=[{shape:['${size}']},{value:10}]", "size=8"])
    ).row
    assert row["status"] == "ok", row
    assert row["prejitted"] == "jax.jit"
    assert case_text([row]).endswith("prejitted=jax.jit")


# ---- no verdict stands on a NumPy twin whose BLAS threads stalled ---------------------------------------------------


def test_a_stalled_blas_twin_gets_no_verdict(monkeypatch):
    """The hunt's `jit 190x faster than numpy` where 40 us was true: the probe found one BLAS thread 100x faster."""
    from jitexp.analysis.formatting.block import block_lines
    from jitexp.worker import measure

    def stalled(call, per_call_s):
        return {"numpy_blas_threads": 2, "numpy_one_thread_s": per_call_s / 100}

    monkeypatch.setattr(measure, "blas_probe", stalled)
    # 128: the twin's call is tens of microseconds, so the planted stall is over BLAS_STALL_MIN_S too (at 16 it is ~1 us)
    result = run(compose(["timing=quick", "isolate=none", "workload=matmul", "size=128", "mode=[jit,numpy]"]))
    jit, numpy = (next(r for r in result.rows if r["mode"] == mode) for mode in ("jit", "numpy"))
    assert jit["verdict_vs_numpy"] == "numpy's BLAS threads stalled"
    assert numpy["verdict"] == "numpy's BLAS threads stalled"
    assert "its BLAS threads stalled: " in numpy["unstable_reason"]
    text = "\n".join(line.text for line in block_lines(result.rows))
    assert "jit vs numpy: no verdict (numpy's BLAS threads stalled)" in text
    assert "faster than numpy" not in text and "slower than jit" not in text


def test_a_twin_whose_one_thread_is_no_faster_keeps_its_verdict(monkeypatch):
    from jitexp.worker import measure

    monkeypatch.setattr(measure, "blas_probe", lambda call, s: {"numpy_blas_threads": 2, "numpy_one_thread_s": s})
    result = run(compose(["timing=quick", "isolate=none", "workload=matmul", "size=16", "mode=[jit,numpy]"]))
    jit = next(r for r in result.rows if r["mode"] == "jit")
    assert jit["verdict_vs_numpy"] in ("faster", "slower", "no significant difference")


def test_a_pre_jitted_functions_eager_is_refused_in_one_line_before_anything_runs():
    """The hunt's `jit 1.13x faster than eager ... one big kernel either way` for a jax.jit-wrapped workload.fn."""
    from jitexp import ConfigError
    from jitexp.engine import preflight

    args = "workload.args=[{shape:['${size}']},{value:10}]"
    with pytest.raises(ConfigError) as caught:
        preflight.check(["workload=custom", "workload.fn=ltcode.jitted", args, "mode=[eager,jit]", "isolate=none"])
    assert str(caught.value) == (
        "workload.fn='ltcode.jitted' is invalid; is already wrapped in jax.jit, so its eager row would time the "
        "compiled program (one cached call), not op-by-op dispatch; name the function it wraps (jitexp applies "
        "jax.jit itself; keep the jit decorator off it), or time the compiled call alone: mode=jit"
    )


def test_measure_refuses_a_jitted_functions_eager_and_times_it_as_jit():
    """`jitexp.measure(jax.jit(f), x)` read `jit 1.02x slower than eager`."""
    import jax
    import jax.numpy as jnp

    from jitexp import ConfigError

    f = jax.jit(lambda x: jnp.sin(x) * 2)
    with pytest.raises(ConfigError, match=r"^fn='.*<lambda>' is invalid; is already wrapped in jax.jit, so its eager"):
        jitexp.measure(f, jnp.ones(8), timing="quick", isolate="none")
    rows = jitexp.measure(f, jnp.ones(8), modes="jit", timing="quick", isolate="none").rows
    assert rows["prejitted"].tolist() == ["jax.jit"]
