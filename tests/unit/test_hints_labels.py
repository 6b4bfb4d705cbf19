"""Issue 23, items 4 and 5, without JAX: a near miss's hint shows the form to type, and labels say what built the
inputs (a row's size, its shapes, a setup's params) everywhere a row is shown. From jobs: tests/inprocess/test_hints_labels.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jitexp import ConfigError
from jitexp.analysis.formatting.answer import job_summary
from jitexp.engine import preflight
from jitexp.labels import shapes_label, size_text
from jitexp.report.plots import grouping as plot_groups
from jitexp.report.run.caveats import caveats
from jitexp.report.run.views import rows_table


def test_a_near_miss_keeps_did_you_mean_and_shows_the_plus_form():
    with pytest.raises(ConfigError, match=r"did you mean workload\.params\.n\? \(a new param needs a leading \+: "):
        preflight.check(["workload=apply_n_times", "workload.params.nn=8"])


def test_shapes_label_names_other_arguments_and_counts_arrays_past_three():
    def f(a, b, c, d, lr):
        return a

    arrays = [np.zeros((2, 3), np.float32), np.zeros(5, "int32"), np.zeros((), np.uint8), np.zeros(1, np.complex64)]
    assert shapes_label(f, arrays[:4], {"lr": 0.1}) == "f32[2,3] i32[5] u8[] +1 arrays +lr"


SETUP_ROW = {
    "workload": "fn",
    "mode": "jit",
    "size": 1000,
    "inputs": "setup",
    "param_depth": 8,
    "dtype": "float32",
    "platform": "cpu",
    "device_kind": "cpu",
    "status": "ok",
    "median_s": 1e-5,
    "ci95_low_s": 0.9e-5,
    "ci95_high_s": 1.1e-5,
    "compiles_during_timing": 2,
}


def test_a_setup_without_size_is_labelled_by_its_params_everywhere():
    df = pd.DataFrame([SETUP_ROW])
    assert job_summary([SETUP_ROW]).startswith("fn depth=8 float32 cpu: jit ")
    assert rows_table(df)["size"].tolist() == ["setup"]
    (caveat,) = caveats(df)  # the label before the colon: no size=1000 the setup never saw
    assert caveat.startswith("fn (depth=8) jit: ") and "1000" not in caveat, caveat
    assert [label for label, _ in plot_groups.case_groups(df)] == ["depth=8"]


def test_given_inputs_show_their_shapes_and_older_rows_their_size():
    given = {**SETUP_ROW, "inputs": "given", "input_shapes": "f32[128,32] +params"}
    assert size_text(given) == "f32[128,32] +params" and job_summary([given]).startswith("fn depth=8 f32[128,32] +pa")
    assert rows_table(pd.DataFrame([given]))["size"].tolist() == ["f32[128,32] +params"]
    assert size_text({**SETUP_ROW, "inputs": "given"}) == "size=1000"  # shapes no one filled in: the size, as before
    old = {k: v for k, v in SETUP_ROW.items() if k != "inputs"}
    assert size_text(old) == "size=1000" and job_summary([old]).startswith("fn depth=8 size=1000 float32 cpu: jit")
    assert "size 1000" in plot_groups.case_groups(pd.DataFrame([old]))[0][0]


def test_the_header_shows_every_dtype_the_rows_have():
    rows = [{**SETUP_ROW, "variant": "f32"}, {**SETUP_ROW, "variant": "bf16", "dtype": "bfloat16"}]
    assert job_summary(rows).startswith("fn depth=8 float32/bfloat16 cpu: ")
