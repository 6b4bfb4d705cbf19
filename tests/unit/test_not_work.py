"""Issue 51, item 2: a time that is not the function's work is no speedup. A compiled mode (or the NumPy twin) whose
result differs from the baseline's, cannot be compared with it, or ran no work at all (XLA removed a computation whose
result is not returned; the function computes nothing from its inputs) gets no faster/slower verdict: the verdict
column says why not, the job's line says so first, and the report's caveats agree."""

from __future__ import annotations

import functools
import math

import pandas as pd
import pytest

from helpers import measured as measured_in
from jitexp.analysis import formatting as f
from jitexp.analysis.rows import mode_rows
from jitexp.analysis.speedups import DIFFERS, NO_WORK, NOT_COMPARABLE, not_work
from jitexp.config import ExperimentConfig, ModeConfig, WorkloadConfig
from jitexp.records import ProcessResult
from jitexp.report.run.caveats import caveat_summary, row_notes

NAN = math.nan
BASE = {"job_num": 0, "workload": "f", "size": 1000}
measured = functools.partial(measured_in, rounds=8)


def rows_of(*modes: str, **per_mode: dict) -> list[dict]:
    """mode_rows of 6 processes where eager takes 20 ms, jit 20 us and numpy 1 ms per call, each mode's extras as
    given (the worker's columns: matches_eager, xla_kernels, ...)."""
    times = {"eager": 2e-2, "jit": 2e-5, "aot": 2e-5, "numpy": 1e-3}
    cfg = ExperimentConfig(
        workload=WorkloadConfig(fn="pkg.f", numpy_fn="pkg.np_f"), mode=ModeConfig(**{m: True for m in modes})
    )
    results = [ProcessResult(p, {m: measured(times[m], **per_mode.get(m, {})) for m in modes}) for p in range(6)]
    return mode_rows(cfg, results, "ci", BASE)


WORK = dict(eager_ops=2, jaxpr_eqns=2, xla_kernels=1, matches_eager=True, max_rel_err_vs_eager=0.0)


def test_the_function_s_own_work_keeps_its_speedup():
    _, jit = rows_of("eager", "jit", eager=dict(eager_ops=2), jit=WORK)
    assert jit["verdict"] == "faster" and not_work(jit) == ("", "")
    assert "jit 1000x faster than eager" in f.job_summary([_, jit])


def test_a_result_that_differs_from_eager_s_is_no_speedup():
    # a function adding a Python random float: under jit the number is baked in
    differs = {**WORK, "matches_eager": False, "max_rel_err_vs_eager": 0.2251}
    differs["check_vs_eager"] = "differs: relative error 0.225 above the float32 tolerance 0.0001"
    rows = rows_of("eager", "jit", eager=dict(eager_ops=2), jit=differs)
    assert rows[1]["verdict"] == DIFFERS
    assert rows[1]["speedup"] == pytest.approx(1000)  # the ratio stays in the CSV; the verdict is not faster
    line = f.job_summary(rows)
    assert line.startswith("jit differs from eager: relative error 0.225; f size=1000: eager 20 ms")
    assert "faster" not in line and "slower" not in line
    assert "-> jit vs eager: no verdict (result differs)" in line


def test_xla_removing_unreturned_work_is_no_work():
    # jnp.sin(x @ x) computed and None returned: the jit program has no kernel
    none = {**WORK, "xla_kernels": 0}
    rows = rows_of("eager", "jit", eager=dict(eager_ops=2), jit=none)
    assert rows[1]["verdict"] == NO_WORK
    line = f.job_summary(rows)
    assert line.startswith(
        "jit measured no work: XLA removed the computation whose result is not returned (0 kernels); f size=1000"
    )
    assert "1000x" not in line and "faster" not in line and "pays off" not in line


def test_a_function_that_returns_a_constant_is_no_work():
    const = {**WORK, "eager_ops": 0, "jaxpr_eqns": 0, "xla_kernels": 1}
    rows = rows_of("eager", "aot", eager=dict(eager_ops=0), aot=const)
    assert rows[1]["verdict"] == NO_WORK
    assert f.job_summary(rows).startswith(
        "aot measured no work: the function computes nothing from its inputs (0 ops: it returns a constant or an "
        "argument); "
    )


def test_a_numpy_twin_that_computes_something_else_is_no_speedup_either_way():
    # the twin computes cos instead of sin: it differs from eager, and jit differs from it
    numpy = dict(matches_eager=False, max_rel_err_vs_eager=1.31)
    jit = {**WORK, "matches_numpy": False, "max_rel_err_vs_numpy": 1.31}
    eager, rjit, rnumpy = rows_of(
        "eager", "jit", "numpy", eager=dict(eager_ops=2, matches_numpy=False), jit=jit, numpy=numpy
    )
    assert rjit["verdict"] == "faster"  # jit against eager is the function's own work
    assert (rjit["verdict_vs_numpy"], rnumpy["verdict"]) == (DIFFERS, DIFFERS)
    line = f.job_summary([eager, rjit, rnumpy])
    assert line.startswith(
        "jit differs from numpy: relative error 1.31; numpy differs from eager: relative error 1.31; "
    )
    assert "jit vs numpy: no verdict (result differs)" in line and "numpy vs eager: no verdict (result differs)" in line
    assert "numpy 20x faster" not in line and "than numpy" not in line


def test_a_numpy_twin_that_returns_none_cannot_be_compared():
    numpy = dict(check_vs_eager="cannot compare: tree structures differ (eager's output is missing)")
    eager, jit, rnumpy = rows_of(
        "eager",
        "jit",
        "numpy",
        eager=dict(eager_ops=2),
        jit={**WORK, "check_vs_numpy": "cannot compare: tree structures differ (output is not in numpy's)"},
        numpy=numpy,
    )
    assert (rnumpy["verdict"], jit["verdict_vs_numpy"], jit["verdict"]) == (NOT_COMPARABLE, NOT_COMPARABLE, "faster")
    line = f.job_summary([eager, jit, rnumpy])
    assert line.startswith("jit's result cannot be compared with numpy's (tree structures differ")
    assert "numpy's result cannot be compared with eager's (tree structures differ (eager's output is missing))" in line


def test_not_work_reads_rows_from_a_csv_where_missing_values_are_nan():
    row = {"mode": "jit", "matches_eager": NAN, "check_vs_eager": NAN, "eager_ops": NAN, "xla_kernels": NAN}
    assert not_work(row) == ("", "")
    assert not_work({**row, "mode": "eager", "eager_ops": 0}) == ("", "")  # the baseline has no verdict
    assert not_work({**row, "mode": "numpy", "xla_kernels": 0.0}) == ("", "")  # numpy compiles no program
    assert not_work({**row, "xla_kernels": 0.0})[0] == NO_WORK
    assert not_work({**row, "matches_eager": pd.NA}) == ("", "")


def test_speedup_phrase_gives_no_verdict_for_a_time_that_is_not_work():
    assert f.speedup_phrase("jit", "eager", 945.0, 510.0, 1116.0, NO_WORK) == "jit vs eager: no verdict (no work)"


def test_the_caveats_agree_with_the_line():
    df = pd.DataFrame(
        [
            {"workload": "f", "mode": "jit", "size": 1000, "verdict": NO_WORK, "xla_kernels": 0, "eager_ops": 2},
            {"workload": "f", "mode": "jit", "size": 2000, "verdict": "faster", "xla_kernels": 3, "eager_ops": 2},
        ]
    )
    assert (
        row_notes(df.iloc[0])
        == "jit measured no work: XLA removed the computation whose result is not returned (0 kernels)"
    )
    assert row_notes(df.iloc[1]) == ""
    assert any(line.startswith("no work measured: 1 of 2 rows") for line in caveat_summary(df))


def test_the_report_s_speedup_table_keeps_the_row_s_no_verdict():
    from jitexp.report.run.tables import speedup_table

    eager, jit = rows_of("eager", "jit", eager=dict(eager_ops=2), jit={**WORK, "xla_kernels": 0})
    table = speedup_table(pd.DataFrame([eager, jit]))
    assert table["verdict"].tolist() == [NO_WORK]
