"""jitexp-report and jitexp-compare on the saved runs in tests/data/runs (README.md there says how each was made):
a variants job, a sweep, an envs job, a job whose jit raised, and a sweep in an older schema. Each test copies its
run into tmp_path, since both commands write next to the run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from jitexp.report.compare import cli as compare_cli
from jitexp.report.run import build

RUNS = Path(__file__).parents[1] / "data" / "runs"


def saved(name: str, tmp_path: Path) -> Path:
    """A copy of the saved run `name` under tmp_path."""
    return Path(shutil.copytree(RUNS / name, tmp_path / name))


def test_report_and_compare_know_variants(tmp_path, capsys):
    out = saved("variants", tmp_path)
    rows = pd.read_csv(out / "results.csv")
    assert build.main([str(out), "--no-plots"]) == 0  # its pictures are test_report's; this is about the text
    assert "variants (or envs) against the first" in capsys.readouterr().out
    ab = pd.read_csv(out / "report" / "ab.csv")
    assert set(ab["metric"]) == {"steady", "first_call", "compile"} and set(ab["variant"]) == {"after"}
    assert "Variants against the baseline" in (out / "report" / "index.html").read_text()
    assert "## Variants against the baseline" in (out / "report" / "summary.md").read_text()

    # The run against itself: each variant matched with itself (ratio exactly 1), not pooled, and one process a
    # side can never be significant, so the gate fails on 'cannot tell' unless it is allowed.
    assert compare_cli.main([str(out), str(out), "--no-plot"]) == 1
    assert "12 comparison(s) cannot tell" in capsys.readouterr().out
    table = pd.read_csv(out / "compare" / "compare.csv")
    assert set(zip(table["variant"], table["mode"])) == set(zip(rows["variant"], rows["mode"]))
    assert len(table) == 4 * 3 and (table["ratio"] == 1).all()  # each variant matched with itself, not pooled
    assert table["verdict"].eq("cannot tell (1 process per side)").all(), table["verdict"]
    assert compare_cli.main([str(out), str(out), "--no-plot", "--allow-undetectable"]) == 0


@pytest.mark.parametrize("name", ["sweep", "envs", "errored", "old_schema"])
def test_each_saved_run_reports_its_cases(name, tmp_path, capsys):
    out = saved(name, tmp_path)
    rows = pd.read_csv(out / "results.csv")
    assert build.main([str(out), "--no-plots"]) == 0
    text = capsys.readouterr().out
    for workload in set(rows["workload"]):
        assert workload in text, (workload, text[-2000:])
    summary = (out / "report" / "summary.md").read_text()
    if name == "errored":
        assert "TracerBoolConversionError" in summary, summary[-2000:]


def test_an_old_schema_run_compares_with_a_new_one(tmp_path, capsys):
    old, new = saved("old_schema", tmp_path), saved("sweep", tmp_path)
    assert "steal_median" not in pd.read_csv(old / "results.csv").columns  # the older jitexp's columns
    assert compare_cli.main([str(old), str(new), "--no-plot", "--allow-undetectable"]) == 0
    table = pd.read_csv(new / "compare" / "compare.csv")
    cases = {(w, m) for w in ("matmul", "add_one") for m in ("eager", "jit")}
    assert set(zip(table["workload"], table["mode"])) == cases
    assert set(table["metric"]) == {"steady", "first_call", "compile"}
    assert table["verdict"].eq("cannot tell (1 process per side)").all(), table["verdict"]
