"""The tutorial's textbook sweeps (docs/tutorial/textbook.md), `jitexp experiment=seed_control_flow` and
`experiment=seed_static_args`: each of the four jobs the command line would run (preflight.check expands the preset's
sweep) measured in this process (isolate=none). The command's own sweep, gathering and exit: tests/e2e/test_cli_runs.py."""

from __future__ import annotations

import pandas as pd

from jitexp import run
from jitexp.engine import preflight


def sweep(experiment: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every job of the preset's sweep: (results rows, calls rows with a `job` column)."""
    jobs = preflight.check([f"experiment={experiment}", "timing=quick", "isolate=none"])
    assert len(jobs) == 4
    results = [run(cfg, job_num=n) for n, cfg in enumerate(jobs)]
    rows = pd.DataFrame([row for result in results for row in result.rows])
    calls = pd.DataFrame([{**call, "job": n} for n, result in enumerate(results) for call in result.calls])
    return rows, calls


def test_textbook_control_flow():
    df, _ = sweep("seed_control_flow")
    assert len(df) == 8 and df["job_num"].nunique() == 4  # eager and jit measured together in each job
    python_if = df[(df["workload"] == "conditional") & (df["mode"] == "jit")]
    assert len(python_if) == 2 and (python_if["status"] == "error").all()
    assert python_if["error_type"].str.endswith("TracerBoolConversionError").all()
    assert python_if["hint"].str.contains("lax.cond").all()
    lax_ok = df[(df["workload"] == "conditional_lax") & (df["mode"] == "jit")]
    assert sorted(lax_ok["param_threshold"]) == [5.0, 10.0] and (lax_ok["status"] == "ok").all()
    assert (df[df["mode"] == "eager"]["status"] == "ok").all()


def test_textbook_static_args():
    df, calls = sweep("seed_static_args")
    traced = df[df["static_argnums"] == "[]"]
    static = df[df["static_argnums"] == "[1]"]
    assert len(traced) == 2 and (traced["status"] == "error").all()
    assert traced["error_type"].str.endswith("TracerIntegerConversionError").all()
    assert sorted(static["param_n"]) == [2, 3] and (static["status"] == "ok").all()
    cold = calls[calls["probe"] == "cold"]
    assert set(cold[cold["call"] == 1]["compiles"]) == {1}  # one compile per static value...
    assert set(cold[cold["call"] > 1]["compiles"]) == {0}  # ...then cached
    probe = calls[(calls["probe"] == "sequence") & (calls["status"] == "ok")]  # n = 2, 3, 2
    assert probe.groupby("job")["compiled"].apply(list).tolist() == [[True, True, False]] * 2
    assert (
        calls[(calls["probe"] == "sequence") & (calls["status"] == "error")]["error_type"]
        .str.endswith("TracerIntegerConversionError")
        .sum()
        == 6
    )  # traced n: every call fails
