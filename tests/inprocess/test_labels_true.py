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
