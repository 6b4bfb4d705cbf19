"""CONTRIBUTING.md's "A results column, end to end", followed with a throwaway column: each step of the guide is
applied here as a contributor would (a record field, a row entry, the schema's group, the report's view, the docs
table), and the column must reach results.csv, the report's Results table and the docs check. If the code the guide
names moves, the first test fails and the guide follows."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from helpers import measured
from jitexp.analysis import rows
from jitexp.analysis.rows import job_result
from jitexp.config import ExperimentConfig, ModeConfig, WorkloadConfig
from jitexp.records import JobRaw, ModeResult, ProcessResult
from jitexp.report.run import build, views
from jitexp.store import csvio, schema
from jitexp.store.csvio import read_text
from jitexp.store.folders import RESULTS_CSV, write_job
from unit.test_docs import assert_exactly_once, table_rows, top_level_code

ROOT = Path(__file__).resolve().parents[2]
COLUMN = "throwaway_s"  # the guide's `warmup_s`, under a name no real column will take


def guide_section() -> str:
    text = (ROOT / "CONTRIBUTING.md").read_text()
    return text[text.index("**A results column, end to end**") : text.index("**A plot.**")]


def test_the_guide_names_each_step_where_the_code_is():
    section = guide_section()
    named = {
        "records.ModeResult": dataclasses.is_dataclass(ModeResult),
        "analysis/rows.py": (ROOT / "src/jitexp/analysis/rows.py").is_file(),
        "_steady": callable(rows._steady),
        "store/schema.py": (ROOT / "src/jitexp/store/schema.py").is_file(),
        "STEADY": "median_s" in schema.STEADY,
        "KNOWN_NUMERIC": "median_s" in schema.KNOWN_NUMERIC,
        "INT_COLUMNS": "n_samples" in schema.INT_COLUMNS,
        "ROW_COLUMNS": "median_s" in views.ROW_COLUMNS,
        "report/run/views.py": (ROOT / "src/jitexp/report/run/views.py").is_file(),
        "docs/results.md": (ROOT / "docs/results.md").is_file(),
    }
    assert [name for name in named if name not in section] == []  # the guide names it
    assert [name for name, there in named.items() if not there] == []  # and the code has it where it says


def record(seconds: float, value: float) -> ModeResult:
    """Steps 1 and 2: the worker's record of a mode, with the new field (`records.ModeResult` gains it)."""
    with_field = dataclasses.make_dataclass(
        "ModeResultWithColumn", [(COLUMN, "float | None", dataclasses.field(default=None))], bases=(ModeResult,)
    )
    base = measured(seconds)
    return with_field(**{f.name: getattr(base, f.name) for f in dataclasses.fields(ModeResult)}, **{COLUMN: value})


def in_the_row(monkeypatch) -> None:
    """Step 3: `_steady` puts the median over processes in the mode's row."""
    steady = rows._steady

    def with_column(results, mode, *args):
        row = steady(results, mode, *args)
        return {**row, COLUMN: float(np.median([getattr(r.modes[mode], COLUMN) for r in results]))}

    monkeypatch.setattr(rows, "_steady", with_column)


def in_the_schema(monkeypatch) -> None:
    """Step 4: its name in `STEADY`; COLUMNS and KNOWN_NUMERIC are made from the groups at import, so here by hand."""
    columns = list(schema.COLUMNS)
    columns.insert(columns.index(schema.STEADY[-1]) + 1, COLUMN)
    monkeypatch.setattr(schema, "STEADY", [*schema.STEADY, COLUMN])
    for module in (schema, csvio):
        monkeypatch.setattr(module, "COLUMNS", columns)
        monkeypatch.setattr(module, "KNOWN_NUMERIC", schema.KNOWN_NUMERIC | {COLUMN})


def test_a_throwaway_column_reaches_results_csv_and_the_report(tmp_path, monkeypatch, capsys):
    processes = [ProcessResult(p, {"eager": record(2e-3, 0.5 + p), "jit": record(1e-3, 0.25 + p)}) for p in range(3)]
    in_the_row(monkeypatch)
    in_the_schema(monkeypatch)
    monkeypatch.setattr(views, "ROW_COLUMNS", (*views.ROW_COLUMNS, COLUMN))  # step 5
    cfg = ExperimentConfig(workload=WorkloadConfig(fn="pkg.fn"), mode=ModeConfig(eager=True, jit=True), size=8)
    write_job(job_result(cfg, JobRaw(processes, "ci")), tmp_path / "run")

    written = read_text(tmp_path / "run" / RESULTS_CSV)
    assert written[COLUMN].tolist() == ["1.5", "1.25"]  # eager's and jit's median over the three processes
    assert list(written.columns).index(COLUMN) == list(written.columns).index(schema.STEADY[-2]) + 1  # in its group

    assert build.main([str(tmp_path / "run"), "--no-plots", "-q"]) == 0
    summary = (tmp_path / "run" / "report" / "summary.md").read_text()
    results = summary.split("## Results")[1].split("\n## ")[0]
    header, _, *cells = [line for line in results.splitlines() if line.startswith("|")]
    at = [c.strip() for c in header.strip("|").split("|")].index(COLUMN)
    assert [row.strip("|").split("|")[at].strip() for row in cells] == ["1.5 s", "1.25 s"]  # as times


def test_the_docs_check_wants_the_column_until_results_md_names_it(tmp_path, monkeypatch):
    """Step 6, on a copy of docs/results.md: the docs test names the column as missing, then passes."""
    in_the_schema(monkeypatch)
    expected = [*schema.COLUMNS, *schema.OPTIONAL_COLUMNS, "param_<name>"]
    text = (ROOT / "docs" / "results.md").read_text()

    def check(page: str) -> None:
        documented = [name for _, cells in table_rows(page, "| group | columns |") for name in top_level_code(cells)]
        assert_exactly_once(Counter(documented), expected, "results.csv")

    with pytest.raises(AssertionError, match=f"missing \\['{COLUMN}'\\]"):
        check(text)
    steady_row = re.search(r"^\| steady state \| .*$", text, re.M)
    assert steady_row is not None
    edited = text.replace(steady_row[0], steady_row[0][:-2] + f", `{COLUMN}` (the guide's throwaway) |")
    check(edited)
