"""Issue 57, item 2, "every label true": each case the hunt found, as the line or the rows it printed.

Pure logic: the phrases, the explanation, the labels and the rows' identity from hand-made inputs (no JAX)."""

from __future__ import annotations

import pytest

from jitexp.analysis.explain import explain
from jitexp.analysis.formatting.phrases import bound_digits, speedup_phrase

# ---- a CI beside a verdict never reads as touching 1 ---------------------------------------


def test_a_ci_that_excludes_1_never_prints_1():
    """The hunt's `1x - 1.03x faster`: a lower bound of 1.0004 printed at three digits read 1."""
    line = speedup_phrase("jit", "eager", 1.015, 1.0004, 1.03, "faster")
    assert line == "jit 1.01x faster than eager (95% CI 1.0004x-1.03x)"
    slower = speedup_phrase("jit", "eager", 1 / 1.02, 1 / 1.04, 1 / 1.00002, "slower")
    assert "(95% CI 1.00002x-1.04x)" in slower and slower.startswith("jit 1.02x slower")


@pytest.mark.parametrize(
    "value, text",
    [(1.0, "1"), (1.0004, "1.0004"), (0.99996, "0.99996"), (1.04, "1.04"), (0.9994, "0.999"), (12.34, "12.3")],
)
def test_bound_digits(value, text):
    assert bound_digits(value) == text


def test_a_ci_that_reaches_below_1_says_so():
    line = speedup_phrase("jit", "eager", 1.015, 0.99996, 1.03, "no significant difference")
    assert "(95% CI 0.99996x-1.03x)" in line


# ---- the explanation's words agree with its own counts -------------------------------------

ROW = {
    "mode": "jit",
    "median_s": 1e-4,
    "op_dispatch_s": 5e-6,
    "xla_fusions": 1,
    "eager_bytes": 8_000,
    "bytes_accessed": 8_000,
    "arithmetic_intensity": 5.0,
    "flops": 40_000,
}


def test_one_eager_op_running_four_kernels_is_not_one_big_kernel():
    """The hunt's `one big kernel either way` next to `(1 eager op, 4 kernels)` (a nested jit runs 4 kernels)."""
    out = explain({"median_s": 1.1e-4}, {**ROW, "eager_ops": 1, "xla_kernels": 4})
    assert out["explanation"] == "same kernels either way"
    assert out["explanation_detail"].startswith("eager's 1 op runs jit's 4 kernels too")
    assert "big kernel" not in out["explanation_detail"]


@pytest.mark.parametrize("ops, kernels", [(1, 1), (1, 2), (2, 2), (6, 3)])
def test_one_big_kernel_where_the_counts_say_so(ops, kernels):
    out = explain({"median_s": 1.1e-4}, {**ROW, "eager_ops": ops, "xla_kernels": kernels, "arithmetic_intensity": 80})
    assert out["explanation"] == "one big kernel either way"
    assert f"({ops} eager op{'s' if ops > 1 else ''}, {kernels} kernel" in out["explanation_detail"]
