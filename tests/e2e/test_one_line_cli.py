"""Issue 57, item 3 through the installed commands: each failure one line on stderr and its exit code, no traceback.
A standard module's name in the current folder, a generator function, a glob sweep (the callbacks' KeyError), a
truncated or edited results.csv in jitexp-compare and jitexp-history, an --ignore typo and an --out that cannot be
written. The preflight's own lines are tests/inprocess/test_one_line_failures.py; the CSV rules tests/unit/test_bad_csv.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import run_cli

RUNS = Path(__file__).resolve().parents[1] / "data" / "runs"


def one_line(proc, prefix: str) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert lines[0].startswith(prefix), lines[0]
    return lines[0].removeprefix(prefix)


@pytest.mark.parametrize("name", ["json.py", "random.py", "profile.py"])
def test_a_file_named_like_a_standard_module_is_named(tmp_path, name):
    (tmp_path / name).write_text("x = 1\n")
    proc = run_cli(["workload=add_one", "timing=quick"], cwd=tmp_path, timeout=120)
    assert proc.returncode == 2
    stem = name.removesuffix(".py")
    assert one_line(proc, "jitexp: error: ") == (
        f"./{name} is invalid; its name hides Python's standard module {stem}: the folder jitexp runs in comes first "
        f"on the import path, so Python, JAX and jitexp would import it instead; rename it (e.g. my_{name})"
    )
    assert not (tmp_path / "outputs").exists()


def test_a_generator_function_is_one_line_before_anything_runs(tmp_path):
    (tmp_path / "gens.py").write_text("def g(x):\n    yield x\n")
    args = ["workload=custom", "workload.fn=gens.g", "workload.args=[{shape:[8]}]", "timing=quick"]
    for extra in ([], ["isolate=none"]):
        proc = run_cli([*args, *extra], cwd=tmp_path, timeout=120)
        assert proc.returncode == 2
        assert one_line(proc, "jitexp: error: ").startswith(
            "workload.fn='gens.g' is invalid; is a generator function (it yields): jax.jit refuses it"
        )
    assert not (tmp_path / "outputs").exists()


def test_a_glob_sweep_runs_and_ends_without_a_traceback(tmp_path):
    out = tmp_path / "sweep"
    proc = run_cli(["-m", "workload=glob(add_on*)", "timing=quick", f"hydra.sweep.dir={out}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "UserWarning" not in proc.stderr
    assert (out / "jobs.csv").read_text().splitlines()[1] == '0,"workload=add_one timing=quick"'
    empty = run_cli(["-m", "workload=glob(zzz*)", "timing=quick"], cwd=tmp_path, timeout=120)
    assert empty.returncode == 2
    assert one_line(empty, "jitexp: error: ").startswith(
        "workload='glob(zzz*)' is invalid; selects no value, so the sweep would run no job; valid choices: add_one"
    )


@pytest.fixture
def sides(tmp_path):
    for side in ("base", "new"):
        shutil.copytree(RUNS / "main", tmp_path / side, ignore=shutil.ignore_patterns("report", "compare"))
    return tmp_path / "base", tmp_path / "new"


def test_a_truncated_results_csv_is_one_line_in_compare_and_history(tmp_path, sides):
    base, new = sides
    text = (new / "results.csv").read_text()
    (new / "results.csv").write_text(text[: len(text) * 2 // 3])
    expected = f"{new}/results.csv, row 1 (line 2), column "
    compare = run_cli([str(base), str(new), "--no-plot"], cwd=tmp_path, name="jitexp-compare", timeout=120)
    assert compare.returncode == 2
    assert one_line(compare, "jitexp-compare: error: ").startswith(expected)
    history = run_cli([str(base), str(new), "--out", "hist"], cwd=tmp_path, name="jitexp-history", timeout=120)
    assert history.returncode == 2
    assert one_line(history, "jitexp-history: error: ").startswith(expected)


def test_a_duplicated_row_is_refused_by_compare(tmp_path, sides):
    base, new = sides
    lines = (new / "results.csv").read_text().splitlines()
    (new / "results.csv").write_text("\n".join([*lines, lines[-1]]) + "\n")
    proc = run_cli([str(base), str(new), "--no-plot"], cwd=tmp_path, name="jitexp-compare", timeout=120)
    assert proc.returncode == 2
    assert one_line(proc, "jitexp-compare: error: ") == (
        f"{new}/results.csv, row {len(lines)} (line {len(lines) + 1}): repeats row {len(lines) - 1} exactly: its "
        "processes would count twice; remove the copy"
    )


def test_an_ignore_typo_and_an_unwritable_out_are_refused_before_the_table(tmp_path, sides):
    base, new = sides
    proc = run_cli([str(base), str(new), "--ignore", "worklaod"], cwd=tmp_path, name="jitexp-compare", timeout=120)
    assert proc.returncode == 2 and not proc.stdout
    assert one_line(proc, "jitexp-compare: error: ").startswith(
        "--ignore='worklaod' is invalid; no identity column of either run has that name; did you mean workload? "
    )
    (tmp_path / "afile").write_text("")
    proc = run_cli([str(base), str(new), "--out", "afile/sub"], cwd=tmp_path, name="jitexp-compare", timeout=120)
    assert proc.returncode == 2 and not proc.stdout
    assert one_line(proc, "jitexp-compare: error: ") == "--out afile/sub cannot be written: Not a directory"
    proc = run_cli([str(base), str(new), "--out", "afile/sub"], cwd=tmp_path, name="jitexp-history", timeout=120)
    assert proc.returncode == 2
    assert one_line(proc, "jitexp-history: error: ") == "afile/sub: Not a directory"


def test_history_refuses_a_hand_edited_median(tmp_path, sides):
    from jitexp.store.csvio import csv_bytes, read_text

    base, new = sides
    rows = read_text(new / "results.csv")
    rows.loc[0, "median_s"] = "fast"
    (new / "results.csv").write_bytes(csv_bytes(rows))
    proc = run_cli([str(base), str(new), "--out", "hist"], cwd=tmp_path, name="jitexp-history", timeout=120)
    assert proc.returncode == 2
    assert one_line(proc, "jitexp-history: error: ") == (
        f"{new}/results.csv, row 1 (line 2), column median_s: 'fast' is not a number"
    )
