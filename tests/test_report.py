"""jitexp-report on hand-made results CSVs: arithmetic, tables, files written, CLI behaviour."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from jitexp import report, tables
from jitexp.results import RESULTS_CSV, load_results, write_csv

ENV = dict(
    dtype="float32", seed=0, platform="cpu", device_kind="cpu", jax_version="0.10.2",
    jaxlib_version="0.10.2", python_version="3.11.9", hostname="testhost", cpu_model="TestCPU",
    cpu_count=8, load_avg_start=0.25, load_avg_end=0.75, x64=False, xla_flags="",
)


def ok(workload, mode, size, median, first, *, compile_s=None, ci=0.1, **extra) -> dict:
    """A successful row with a symmetric CI of +-ci*median."""
    return {**ENV, "workload": workload, "mode": mode, "size": size, "status": "ok",
            "median_s": median, "ci95_low_s": median * (1 - ci), "ci95_high_s": median * (1 + ci),
            "first_call_s": first, "compile_s": compile_s, "n_samples": 20, "number": 1,
            "timestamp": f"2025-03-0{1 + size % 5}T12:00:00", **extra}


def error(workload, mode, size, **extra) -> dict:
    """A failed row: trace error under jit."""
    return {**ENV, "workload": workload, "mode": mode, "size": size, "status": "error",
            "error_phase": "trace", "error_type": "jax.errors.TracerBoolConversionError",
            "error_message": "Attempted boolean conversion of traced array",
            "hint": "use jax.lax.cond", "timestamp": "2025-03-01T12:00:00", **extra}


def write_sweep(root: Path, rows: list[dict], *, gather: bool = True) -> Path:
    """One job folder per row, like a Hydra multirun, plus the gathered CSV."""
    for num, row in enumerate(rows):
        write_csv(pd.DataFrame([{**row, "job_num": num}]), root / str(num) / RESULTS_CSV)
    if gather:
        load_results(root)
    return root


def sweep_rows() -> list[dict]:
    """Two sizes of a quadratic workload in three modes, one failing workload, one param workload."""
    rows = []
    for size in (100, 200):
        e = 1e-8 * size**2
        rows += [ok("square", "eager", size, 4 * e, 40 * e),
                 ok("square", "jit", size, e, 0.02 + e, compile_s=0.015),
                 ok("square", "aot", size, e, 0.021 + e, compile_s=0.016)]
    rows += [ok("cond", "eager", 10, 2e-5, 1e-3), error("cond", "jit", 10)]
    rows += [ok("loop", "eager", 10, 1e-4, 1e-3, param_n=3), ok("loop", "jit", 10, 2e-5, 0.01, param_n=3)]
    return rows


def frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows)


# ---- arithmetic ------------------------------------------------------------------------

def test_speedup_values_ci_and_overhead():
    df = frame([ok("w", "eager", 8, 0.004, 0.010, ci=0.25), ok("w", "jit", 8, 0.001, 0.050, ci=0.5)])
    row = tables.speedup_table(df).iloc[0]
    assert row["mode"] == "jit"
    assert row["speedup"] == pytest.approx(4.0)
    assert row["speedup_ci_low"] == pytest.approx(0.003 / 0.0015)
    assert row["speedup_ci_high"] == pytest.approx(0.005 / 0.0005)
    assert row["compile_overhead_s"] == pytest.approx(0.049)
    assert row["break_even_calls"] == 15
    assert row["eager_median_s"] == pytest.approx(0.004)
    assert row["pairing"] == "unpaired" and row["verdict"] == "faster"  # CI 2x-10x excludes 1


def test_paired_rows_keep_their_own_figures():
    paired = dict(baseline_mode="eager", speedup=1.5, speedup_ci_low=0.9, speedup_ci_high=2.2,
                  verdict="no significant difference", break_even_calls=3.0, ahead_until_calls=float("nan"))
    df = frame([ok("w", "eager", 8, 0.003, 0.010, job_num=0), ok("w", "jit", 8, 0.002, 0.030, job_num=0, **paired)])
    row = tables.speedup_table(df).iloc[0]
    assert row["pairing"] == "paired"
    assert (row["speedup"], row["speedup_ci_low"], row["speedup_ci_high"]) == (1.5, 0.9, 2.2)
    assert row["verdict"] == "no significant difference"  # from the paired CI, not the medians' CIs
    view = tables.speedup_view(tables.speedup_table(df)).iloc[0]
    assert view["pays_off"] == "no steady-state gain; never pays off"


def test_speedup_one_row_per_compiled_mode_and_only_with_eager():
    table = tables.speedup_table(frame(sweep_rows()))
    assert sorted(zip(table["workload"], table["size"], table["mode"])) == [
        ("loop", 10, "jit"), ("square", 100, "aot"), ("square", 100, "jit"),
        ("square", 200, "aot"), ("square", 200, "jit")]
    assert list(table.query("workload == 'square' and size == 100")["mode"]) == ["jit", "aot"]
    assert table.loc[table["workload"] == "loop", "param_n"].item() == 3


def test_speedup_aggregates_seeds():
    rows = [ok("w", "eager", 8, m, 0.01, seed=s) for s, m in enumerate([0.004, 0.006, 0.005])]
    rows += [ok("w", "jit", 8, m, 0.05, seed=s) for s, m in enumerate([0.001, 0.003])]
    row = tables.speedup_table(frame(rows)).iloc[0]
    assert row["eager_median_s"] == pytest.approx(0.005)
    assert row["median_s"] == pytest.approx(0.002)
    assert row["eager_ci95_low_s"] == pytest.approx(0.004 * 0.9)
    assert row["ci95_high_s"] == pytest.approx(0.003 * 1.1)
    assert (row["n_eager_rows"], row["n_rows"]) == (3, 2)


def test_speedup_keeps_static_argnums_variants_apart():
    rows = [ok("w", "eager", 8, 0.004, 0.01),
            ok("w", "jit", 8, 0.001, 0.05, static_argnums="[1]"),
            ok("w", "jit", 8, 0.008, 0.02, static_argnums="[]")]
    table = tables.speedup_table(frame(rows)).set_index("static_argnums")
    assert table.loc["[1]", "speedup"] == pytest.approx(4.0)
    assert table.loc["[]", "speedup"] == pytest.approx(0.5)
    assert table.loc["[]", "break_even_calls"] == math.inf


def test_scaling_exponent_on_power_law():
    rows = [ok("w", "jit", n, 3e-9 * n**2, 0.01 + 1e-9 * n**3) for n in (16, 32, 64, 128)]
    rows.append(ok("w", "eager", 16, 1e-3, 1e-2))
    table = tables.scaling_table(frame(rows))
    assert list(table["mode"]) == ["jit"]
    row = table.iloc[0]
    assert row["growth_exponent"] == pytest.approx(2.0)
    assert (row["n_sizes"], row["size_min"], row["size_max"]) == (4, 16, 128)
    assert 0 < row["first_call_growth_exponent"] < 3


def test_errors_table_content():
    table = tables.errors_table(frame(sweep_rows()))
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["workload"], row["mode"], row["size"], row["error_phase"]) == ("cond", "jit", 10, "trace")
    assert row["error_type"] == "jax.errors.TracerBoolConversionError"
    assert row["hint"] == "use jax.lax.cond"


def test_format_seconds():
    assert tables.format_seconds(0.0123) == "12.3 ms"
    assert tables.format_seconds(45e-6) == "45 us"
    assert tables.format_seconds(1.5) == "1.5 s"
    assert tables.format_seconds(0.99996) == "1 s"
    assert tables.format_seconds(2e-9) == "2 ns"
    assert tables.format_seconds(float("nan")) == "-"


def test_markdown_table_escapes_pipes_and_aligns_numbers():
    text = tables.markdown_table(pd.DataFrame({"name": ["a|b"], "median_s": [0.002]}))
    assert text.splitlines() == ["| name | median_s |", "|---|---:|", "| a\\|b | 2 ms |"]


def test_format_sweep_summary_lists_rows_then_speedup():
    text = report.format_sweep_summary(frame([{**r, "job_num": i} for i, r in enumerate(sweep_rows())]))
    lines = text.splitlines()
    assert lines[0].startswith("jitexp: 10 rows (9 ok, 1 error) from 10 jobs")
    assert "TracerBoolConversionError" in text
    assert "speedup against the baseline" in text
    assert "n=3" in text
    eager_only = report.format_sweep_summary(frame([ok("w", "eager", 8, 0.004, 0.01)]))
    assert "speedup" not in eager_only


def test_report_modules_import_without_matplotlib_or_jax():
    code = ("import sys, jitexp.report, jitexp.tables, jitexp.plots; "
            "print(sorted(m for m in ('matplotlib', 'jax') if m in sys.modules))")
    src = str(Path(report.__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


# ---- files -----------------------------------------------------------------------------

EXPECTED_PNGS = [
    "bars_square_float32_100.png", "bars_square_float32_200.png", "bars_cond_float32_10.png",
    "bars_loop_n-3_float32_10.png", "scaling_square_float32.png", "compile_square_float32.png",
    "speedup_square_float32.png",
]


def test_make_report_writes_tables_summary_and_plots(tmp_path):
    sweep = write_sweep(tmp_path / "sweep", sweep_rows())
    out = report.make_report(sweep)
    assert out == sweep / "report"
    for name in ["summary.md", "speedup.csv", "scaling.csv", "scaling_points.csv", "errors.csv", *EXPECTED_PNGS]:
        assert (out / name).stat().st_size > 0, name
    assert sorted(p.name for p in out.glob("*.png")) == sorted(EXPECTED_PNGS)
    for png in out.glob("*.png"):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    speedup = pd.read_csv(out / "speedup.csv")
    assert len(speedup) == 5
    assert speedup["break_even_calls"].notna().all()
    summary = (out / "summary.md").read_text()
    for text in ["## Speedup vs eager", "## Errors", "## Environment", "TestCPU", "testhost",
                 "0.10.2", "| load_avg_end | 0.75 |", "(bars_square_float32_100.png)", "| square |"]:
        assert text in summary, text


def test_make_report_without_plots_and_with_custom_out(tmp_path):
    sweep = write_sweep(tmp_path / "sweep", sweep_rows())
    out = report.make_report(sweep, out=tmp_path / "elsewhere", plots=False)
    assert out == tmp_path / "elsewhere"
    assert (out / "summary.md").exists() and not list(out.glob("*.png"))
    assert "![" not in (out / "summary.md").read_text()


def test_rerun_removes_plots_that_no_longer_apply(tmp_path):
    sweep = write_sweep(tmp_path / "sweep", [ok("w", "eager", 8, 0.004, 0.01), ok("w", "jit", 8, 0.001, 0.05)])
    out = report.make_report(sweep)
    stale = out / "bars_gone_float32_1.png"
    stale.write_bytes(b"old")
    keep = out / "notes.txt"
    keep.write_text("mine")
    report.make_report(sweep)
    assert not stale.exists() and keep.exists()
    assert [p.name for p in out.glob("*.png")] == ["bars_w_float32_8.png"]


def test_all_error_workload_and_nan_values_do_not_crash(tmp_path):
    rows = [error("bad", "eager", 4), error("bad", "jit", 4),
            ok("partial", "eager", 4, 0.001, float("nan")), ok("partial", "jit", 4, 0.0005, float("nan")),
            ok("partial", "eager", 8, float("nan"), 0.01)]
    out = report.make_report(write_sweep(tmp_path / "s", rows))
    names = sorted(p.name for p in out.glob("*.png"))
    assert names == ["bars_partial_float32_4.png"]
    speedup = pd.read_csv(out / "speedup.csv")
    assert math.isnan(speedup["break_even_calls"].item())
    assert len(pd.read_csv(out / "errors.csv")) == 2


def test_single_run_dir(tmp_path):
    run = tmp_path / "run"
    write_csv(pd.DataFrame([ok("w", "eager", 8, 0.004, 0.01), ok("w", "jit", 8, 0.001, 0.05)]), run / RESULTS_CSV)
    out = report.make_report(run, plots=False)
    assert (out / "summary.md").exists() and out == run / "report"
    assert pd.read_csv(out / "speedup.csv")["speedup"].item() == pytest.approx(4.0)


def test_sweep_with_a_job_folder_deleted_still_reports(tmp_path):
    sweep = write_sweep(tmp_path / "sweep", sweep_rows(), gather=False)
    for path in (sweep / "1").iterdir():
        path.unlink()
    (sweep / "1").rmdir()
    out = report.make_report(sweep, plots=False)
    speedup = pd.read_csv(out / "speedup.csv")
    assert list(speedup.query("workload == 'square' and size == 100")["mode"]) == ["aot"]
    assert len(pd.read_csv(sweep / RESULTS_CSV)) == len(sweep_rows()) - 1


def test_sweep_with_a_job_folder_deleted_after_gathering_still_reports(tmp_path):
    sweep = write_sweep(tmp_path / "sweep", sweep_rows())
    for path in (sweep / "0").iterdir():
        path.unlink()
    (sweep / "0").rmdir()
    assert report.main([str(sweep), "--no-plots", "-q"]) == 0
    # the job folders are the truth: the stale gathered file is rebuilt without job 0
    assert len(pd.read_csv(sweep / RESULTS_CSV)) == len(sweep_rows()) - 1
    assert 0 not in set(pd.read_csv(sweep / RESULTS_CSV)["job_num"])
    assert len(pd.read_csv(sweep / "report" / "speedup.csv")) >= 3


def test_missing_gathered_csv_is_rebuilt(tmp_path):
    sweep = write_sweep(tmp_path / "sweep", sweep_rows())
    (sweep / RESULTS_CSV).unlink()
    report.make_report(sweep, plots=False)
    assert len(pd.read_csv(sweep / RESULTS_CSV)) == len(sweep_rows())


# ---- command line ----------------------------------------------------------------------

def test_main_missing_dir_is_one_line_exit_2(tmp_path, capsys):
    assert report.main([str(tmp_path / "nope")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jitexp-report: error:") and "nope" in lines[0]


def test_main_folder_without_results_is_exit_2(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert report.main([str(tmp_path / "empty")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_main_empty_results_is_exit_2(tmp_path, capsys):
    write_csv(pd.DataFrame(columns=["workload", "mode"]), tmp_path / "r" / RESULTS_CSV)
    assert report.main([str(tmp_path / "r")]) == 2
    assert "no result rows" in capsys.readouterr().err


def test_main_prints_tables_and_writes_report(tmp_path, capsys):
    sweep = write_sweep(tmp_path / "sweep", sweep_rows())
    assert report.main([str(sweep), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "speedup against the baseline" in out and "errors" in out and "scaling" in out
    assert out.strip().endswith(str(sweep / "report" / "summary.md"))
    assert not list((sweep / "report").glob("*.png"))


def test_main_without_dir_uses_newest_under_outputs(tmp_path, monkeypatch, capsys):
    old = tmp_path / "outputs" / "run" / "2025-01-01_10-00-00"
    write_csv(pd.DataFrame([ok("old", "eager", 8, 0.004, 0.01)]), old / RESULTS_CSV)
    new = write_sweep(tmp_path / "outputs" / "multirun" / "2025-01-02_10-00-00", sweep_rows())
    os.utime(old, (1_000_000_000, 1_000_000_000))
    os.utime(new, (2_000_000_000, 2_000_000_000))
    empty = tmp_path / "outputs" / "run" / "2025-01-03_10-00-00"
    empty.mkdir()
    monkeypatch.chdir(tmp_path)
    assert report.find_latest() == Path("outputs/multirun/2025-01-02_10-00-00")
    assert report.main(["--no-plots", "-q"]) == 0
    assert (new / "report" / "summary.md").exists()
    assert not (old / "report").exists()


def test_main_without_dir_and_no_outputs_is_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert report.main([]) == 2
    assert "no DIR given" in capsys.readouterr().err
