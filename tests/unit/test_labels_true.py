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


# ---- size only where size built the inputs -------------------------------------------------------------------------

FIXED = ["workload=custom", "workload.fn=mine.f", "workload.args=[{shape:[4096]},{value:10}]"]


@pytest.fixture
def no_arity(monkeypatch):
    """The preflight without importing the function (mine.f does not exist): these checks need no import."""
    from jitexp.engine import preflight

    monkeypatch.setattr(preflight, "check_arity", lambda exp: None)


def _rows(argv: list[str]) -> list[dict]:
    from jitexp.analysis.rows import identity_row
    from jitexp.engine import preflight

    return [
        {**identity_row(exp, 0, "", shapes="f32[4096] +y"), "mode": "jit", "status": "ok"}
        for exp in preflight.check(argv)
    ]


def test_a_fixed_shape_function_has_no_size_on_its_row_nor_in_its_label(no_arity):
    """The hunt's `workload.args=[{shape:[4096]},{value:10}]`, no size: labelled `size=1000`, results.csv size=1000."""
    from jitexp.analysis.formatting.answer import case_text

    (row,) = _rows(FIXED)
    assert row["size"] is None and row["inputs"] == "fixed"
    assert case_text([row]) == "f f32[4096] +y float32"


@pytest.mark.parametrize(
    "args",
    [
        ["workload.args=[{shape:[${size}]},{value:10}]"],
        ["+workload.params.n=${size}", "workload.args=[{shape:['${workload.params.n}']}]"],
    ],
    ids=["direct", "through-a-param"],
)
def test_size_that_reaches_an_argument_labels_it(no_arity, args):
    (row,) = _rows(["workload=custom", "workload.fn=mine.f", *args, "size=64"])
    assert row["size"] == 64 and row["inputs"] == "size"


def test_a_variants_fixed_args_label_no_size_and_its_own_sized_args_do(no_arity):
    """Each variant's config says whether size reached its own args (it was made by dataclasses.replace, which lost
    to_config's reading, so a fixed-shape job's variants were labelled size=1000)."""
    from jitexp.analysis.rows import identity_row
    from jitexp.config.variants import variant_configs
    from jitexp.engine import preflight

    (exp,) = preflight.check([*FIXED, "+variants={a:{},b:{seed:1},c:{workload.args:[{shape:['${size}']}]}}"])
    rows = {name: identity_row(own, 0, "") for name, own in variant_configs(exp).items()}
    assert [(rows[n]["size"], rows[n]["inputs"]) for n in "abc"] == [(None, "fixed"), (None, "fixed"), (1000, "size")]


@pytest.mark.parametrize(
    "workload, reaches",
    [
        ({"args": [{"shape": [4096]}, {"value": 10}]}, False),
        ({"args": [{"shape": ["${size}", 3]}]}, True),
        ({"args": [{"shape": ["${mul:${size},2}"]}]}, True),
        ({"args": [{"shape": ["${workload.params.n}"]}], "params": {"n": "${size}"}}, True),
        ({"args": [{"shape": ["${workload.params.size}"]}], "params": {"size": 4}}, False),
        ({"args": [], "kwargs": {}}, False),
        ({"args": None, "setup": "m.init"}, True),
    ],
)
def test_size_reaches(workload, reaches):
    from jitexp.labels import size_reaches

    assert size_reaches(workload) is reaches


# ---- the row's dtype is the arguments' dtype; a pre-jitted function is named -----------------------------------------


@pytest.mark.parametrize(
    "dtypes, label",
    [
        (["float32", "float32"], "float32"),
        (["float16", "float32", "int32"], "float16+float32"),  # mixed specs, and a literal's int
        (["int32", "bfloat16"], "bfloat16"),  # a setup's tokens and bfloat16 params
        (["int32", "key<fry>"], "int32"),
        (["key<fry>"], ""),
        ([], ""),
    ],
)
def test_args_dtype(dtypes, label):
    from jitexp.labels import args_dtype

    assert args_dtype(dtypes) == label


def test_the_rows_dtype_is_what_the_worker_built(no_arity):
    from jitexp.analysis.rows import identity_row
    from jitexp.engine import preflight

    (exp,) = preflight.check(["workload=custom", "workload.fn=mine.f", "workload.args=[{shape:['${size}']}]"])
    assert identity_row(exp, 0, "", None, "f16[1000] f32[1000]", "float16+float32")["dtype"] == "float16+float32"
    assert identity_row(exp, 0, "", None, "f32[1000]", "float32")["dtype"] == "float32"
    assert identity_row(exp, 0, "")["dtype"] == "float32"  # no worker built them: the job's


class PjitFunction:  # jaxlib's class name for what jax.jit returns
    def __call__(self, x):
        return x


class _JitWrapper:  # another wrapper with the jax.stages.Wrapped protocol
    __module__ = "equinox._jit"

    def __call__(self, x):
        return x

    def lower(self, *args):
        return None

    def __wrapped__(self, x):
        return x


def test_a_pre_jitted_function_is_named_and_its_eager_refused():
    from jitexp.labels import prejitted, prejitted_refusal

    assert prejitted(PjitFunction()) == "jax.jit"
    assert prejitted(_JitWrapper()) == "equinox.filter_jit"
    assert prejitted(lambda x: x) == ""
    assert prejitted_refusal(PjitFunction(), ["jit"], "-") is None
    assert prejitted_refusal(lambda x: x, ["eager", "jit"], "-") is None
    message = prejitted_refusal(PjitFunction(), ["eager", "jit"], "pass fn.__wrapped__")
    assert message == (
        "is already wrapped in jax.jit, so its eager row would time the compiled program (one cached call), not "
        "op-by-op dispatch; pass fn.__wrapped__"
    )


# ---- no verdict on a NumPy twin whose BLAS threads stalled ------------------------------------------------------------


def test_blas_stall_reads_the_twins_own_probe():
    from jitexp.analysis.instability import blas_stall, instability

    row = {"mode": "numpy", "median_s": 15.8e-3, "numpy_one_thread_s": 131e-6, "numpy_blas_threads": 2}
    assert blas_stall(row) == (
        "its BLAS threads stalled: 15.8 ms a call with 2 threads, 131 us with 1 (121x; limit 2x): no verdict against it"
    )
    assert blas_stall({**row, "numpy_one_thread_s": 10e-3}) == ""  # 1.6x: threads' own overhead, not a stall
    assert blas_stall({**row, "numpy_one_thread_s": None}) == ""  # not probed (one thread, a long call, old rows)
    # 2.5x, but 3 us a call: a busy moment, not a thread waiting for a wake-up; 30 us more a call is one
    assert blas_stall({**row, "median_s": 5e-6, "numpy_one_thread_s": 2e-6}) == ""
    assert blas_stall({**row, "median_s": 50e-6, "numpy_one_thread_s": 20e-6}).startswith("its BLAS threads stalled")
    assert blas_stall({**row, "mode": "jit"}) == ""
    flagged = instability({**row, "process_median_max_s": 15.8e-3, "process_median_min_s": 15.8e-3})
    assert flagged["unstable"] and flagged["unstable_reason"].startswith("its BLAS threads stalled")


def test_a_stalled_twins_verdict_is_said_without_a_figure():
    line = speedup_phrase("jit", "numpy", 190.0, 142.0, 203.0, "numpy's BLAS threads stalled")
    assert line == "jit vs numpy: no verdict (numpy's BLAS threads stalled)"


def test_jitexp_compare_prints_a_bound_near_1_with_enough_digits():
    from jitexp.report.compare.runs import new_over_base

    assert new_over_base(1.02, 1.0004, 1.03) == "1.02 (1.0004-1.03)"
    assert new_over_base(1.02, 1.0, 1.03) == "1.02 (1-1.03)"
