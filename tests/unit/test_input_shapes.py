"""Sizes that explain themselves (issue 50, item 4): every row carries the shapes and dtypes of the arguments its
worker built (`input_shapes`), the CSV reads them back as text, and the sweep's table and growth plot say what size
is where workloads differ."""

from __future__ import annotations

import dataclasses

import pandas as pd

from helpers import frame, measured, ok
from jitexp.analysis.rows import job_result
from jitexp.config import ExperimentConfig, ModeConfig, WorkloadConfig
from jitexp.labels import size_meaning
from jitexp.records import JobRaw, ProcessResult
from jitexp.report.run.views import rows_table
from jitexp.store.csvio import write_csv
from jitexp.store.folders import load_results


def config() -> ExperimentConfig:
    return ExperimentConfig(
        workload=WorkloadConfig(fn="pkg.fn"), mode=ModeConfig(eager=True, jit=True), size=64, roofline=False
    )


def test_every_row_has_the_shapes_its_worker_built_and_the_csv_keeps_them_as_text(tmp_path):
    shapes = {"": "f32[64,256]"}
    processes = [
        ProcessResult(p, {"eager": measured(2e-3), "jit": measured(1e-3)}, input_shapes=shapes if p else {})
        for p in range(2)
    ]  # process 0 recorded none (it failed before building): the next one's are the job's
    rows = job_result(config(), JobRaw(processes, "ci")).rows
    assert [r["input_shapes"] for r in rows] == ["f32[64,256]", "f32[64,256]"]
    write_csv(rows, tmp_path / "results.csv")
    assert load_results(tmp_path / "results.csv")["input_shapes"].tolist() == ["f32[64,256]", "f32[64,256]"]
    none = job_result(config(), JobRaw([dataclasses.replace(processes[1], input_shapes={})], "ci")).rows
    assert all(r["input_shapes"] is None for r in none)  # no worker built them: empty, not a guess


def test_size_meaning_names_the_dimensions_that_are_the_size():
    assert size_meaning(64, "f32[64,256]") == "f32[size,256]"
    assert size_meaning(64.0, "f32[64,64] f32[64,64]") == "f32[size,size] f32[size,size]"
    assert size_meaning(8, "bf16[8] +params") == "bf16[size] +params"
    assert size_meaning(64, "f32[128,32]") == ""  # size built none of them (a setup's own shapes)
    assert size_meaning(64, None) == "" and size_meaning(None, "f32[64]") == ""


def test_the_sweep_table_shows_the_shapes_where_workloads_differ():
    mixed = frame(
        [
            ok("chain", "jit", 64, 1e-3, 0.01, input_shapes="f32[64]"),
            ok("softmax", "jit", 64, 2e-3, 0.01, input_shapes="f32[64,256]"),
        ]
    )
    table = rows_table(mixed)
    assert table["input_shapes"].tolist() == ["f32[64]", "f32[64,256]"]
    assert table.columns.tolist().index("input_shapes") == table.columns.tolist().index("size") + 1
    one = frame([ok("chain", "jit", s, 1e-3, 0.01, input_shapes=f"f32[{s}]") for s in (64, 128)])
    assert "input_shapes" not in rows_table(one).columns  # one workload: size means one thing
    assert "input_shapes" not in rows_table(pd.concat([mixed.drop(columns="input_shapes")])).columns
