"""jitexp-report on hand-made results CSVs: arithmetic, tables, files written, CLI behaviour."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd
import pytest

from helpers import error, frame, ok, sweep_rows, write_sweep
from jitexp.analysis import formatting
from jitexp.report.run import build, markdown, tables, terminal
from jitexp.report.run.caveats import caveat_summary, steal_caveats
from jitexp.report.run.detail_tables import attribution_table, cache_table, memory_table
from jitexp.report.run.views import ATTRIBUTION_VIEW, compact_view, rows_table, speedup_view
from jitexp.store.csvio import write_csv
from jitexp.store.folders import RESULTS_CSV

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
    paired = dict(
        baseline_mode="eager",
        speedup=1.5,
        speedup_ci_low=0.9,
        speedup_ci_high=2.2,
        verdict="no significant difference",
        break_even_calls=3.0,
        ahead_until_calls=float("nan"),
    )
    df = frame([ok("w", "eager", 8, 0.003, 0.010, job_num=0), ok("w", "jit", 8, 0.002, 0.030, job_num=0, **paired)])
    row = tables.speedup_table(df).iloc[0]
    assert row["pairing"] == "paired"
    assert (row["speedup"], row["speedup_ci_low"], row["speedup_ci_high"]) == (1.5, 0.9, 2.2)
    assert row["verdict"] == "no significant difference"  # from the paired CI, not the medians' CIs
    view = speedup_view(tables.speedup_table(df)).iloc[0]
    assert view["pays_off"] == "no steady-state gain; never pays off"
    assert row["break_even_calls"] == math.inf  # as the text says (an older row's 3.0 is settled too: issue 50)


def test_speedup_one_row_per_compiled_mode_and_only_with_eager():
    table = tables.speedup_table(frame(sweep_rows()))
    assert sorted(zip(table["workload"], table["size"], table["mode"])) == [
        ("loop", 10, "jit"),
        ("square", 100, "aot"),
        ("square", 100, "jit"),
        ("square", 200, "aot"),
        ("square", 200, "jit"),
    ]
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
    rows = [
        ok("w", "eager", 8, 0.004, 0.01),
        ok("w", "jit", 8, 0.001, 0.05, static_argnums="[1]"),
        ok("w", "jit", 8, 0.008, 0.02, static_argnums="[]"),
    ]
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


def test_the_terminal_report_gives_each_hint_whole_below_the_errors_table():
    """The errors table cuts its cells at 60 characters; the textbook page sends a reader to the hint there."""
    from jitexp.report.run.terminal import hint_lines
    from jitexp.report.run.text_parts import errors_view

    long_hint = "a traced value was used as a Python int (range(), indexing): make n static, or use jax.lax.fori_loop"
    errors = tables.errors_table(frame(sweep_rows())).assign(hint=long_hint)
    errors = pd.concat([errors, errors], ignore_index=True)  # the same error twice: its hint once
    lines = hint_lines(errors_view(errors), width=200)
    assert lines == ["hints:", f"  TracerBoolConversionError: {long_hint}"]
    assert hint_lines(errors_view(errors.assign(hint=None)), width=200) == []


def test_format_seconds():
    assert formatting.format_seconds(0.0123) == "12.3 ms"
    assert formatting.format_seconds(45e-6) == "45 us"
    assert formatting.format_seconds(1.5) == "1.5 s"
    assert formatting.format_seconds(0.99996) == "1 s"
    assert formatting.format_seconds(2e-9) == "2 ns"
    assert formatting.format_seconds(float("nan")) == "-"


def test_markdown_table_escapes_pipes_and_aligns_numbers():
    text = formatting.markdown_table(pd.DataFrame({"name": ["a|b"], "median_s": [0.002]}))
    assert text.splitlines() == ["| name | median_s |", "|---|---:|", "| a\\|b | 2 ms |"]


def test_format_sweep_summary_lists_rows_then_speedup():
    text = terminal.format_sweep_summary(frame([{**r, "job_num": i} for i, r in enumerate(sweep_rows())]))
    lines = text.splitlines()
    assert lines[0].startswith("jitexp: 10 rows (9 ok, 1 error) from 10 jobs")
    assert "TracerBoolConversionError" in text
    assert "speedup against the baseline" in text
    assert "n=3" in text
    eager_only = terminal.format_sweep_summary(frame([ok("w", "eager", 8, 0.004, 0.01)]))
    assert "speedup" not in eager_only


# ---- files -----------------------------------------------------------------------------


def test_make_report_writes_tables_and_summary(tmp_path):
    """The report's tables and summary (its pictures: tests/inprocess/test_report_figures.py)."""
    sweep = write_sweep(tmp_path / "sweep", sweep_rows())
    out = build.make_report(sweep, plots=False)
    assert out == sweep / "report"
    for name in ["summary.md", "speedup.csv", "scaling.csv", "scaling_points.csv", "errors.csv"]:
        assert (out / name).stat().st_size > 0, name
    speedup = pd.read_csv(out / "speedup.csv")
    assert len(speedup) == 5
    assert speedup["break_even_calls"].notna().all()
    summary = (out / "summary.md").read_text()
    for text in [
        "## Speedup vs eager",
        "## Errors",
        "## Environment",
        "TestCPU",
        "testhost",
        "0.10.2",
        "| load_avg_end | 0.75 |",
        "| square |",
    ]:
        assert text in summary, text


def test_make_report_without_plots_and_with_custom_out(tmp_path):
    sweep = write_sweep(tmp_path / "sweep", sweep_rows())
    out = build.make_report(sweep, out=tmp_path / "elsewhere", plots=False)
    assert out == tmp_path / "elsewhere"
    assert (out / "summary.md").exists() and not list(out.glob("*.png"))
    assert "![" not in (out / "summary.md").read_text()


def test_all_error_workload_and_nan_values_do_not_crash(tmp_path):
    """The tables (the pictures of these rows: tests/inprocess/test_report_figures.py)."""
    rows = [
        error("bad", "eager", 4),
        error("bad", "jit", 4),
        ok("partial", "eager", 4, 0.001, float("nan")),
        ok("partial", "jit", 4, 0.0005, float("nan")),
        ok("partial", "eager", 8, float("nan"), 0.01),
    ]
    out = build.make_report(write_sweep(tmp_path / "s", rows), plots=False)
    speedup = pd.read_csv(out / "speedup.csv")
    assert math.isnan(speedup["break_even_calls"].item())
    assert len(pd.read_csv(out / "errors.csv")) == 2


def test_single_run_dir(tmp_path):
    run = tmp_path / "run"
    write_csv(pd.DataFrame([ok("w", "eager", 8, 0.004, 0.01), ok("w", "jit", 8, 0.001, 0.05)]), run / RESULTS_CSV)
    out = build.make_report(run, plots=False)
    assert (out / "summary.md").exists() and out == run / "report"
    assert pd.read_csv(out / "speedup.csv")["speedup"].item() == pytest.approx(4.0)


def test_sweep_with_a_job_folder_deleted_still_reports(tmp_path):
    sweep = write_sweep(tmp_path / "sweep", sweep_rows(), gather=False)
    for path in (sweep / "1").iterdir():
        path.unlink()
    (sweep / "1").rmdir()
    out = build.make_report(sweep, plots=False)
    speedup = pd.read_csv(out / "speedup.csv")
    assert list(speedup.query("workload == 'square' and size == 100")["mode"]) == ["aot"]
    assert len(pd.read_csv(sweep / RESULTS_CSV)) == len(sweep_rows()) - 1


def test_sweep_with_a_job_folder_deleted_after_gathering_still_reports(tmp_path):
    sweep = write_sweep(tmp_path / "sweep", sweep_rows())
    for path in (sweep / "0").iterdir():
        path.unlink()
    (sweep / "0").rmdir()
    assert build.main([str(sweep), "--no-plots", "-q"]) == 0
    # the job folders are the truth: the stale gathered file is rebuilt without job 0
    assert len(pd.read_csv(sweep / RESULTS_CSV)) == len(sweep_rows()) - 1
    assert 0 not in set(pd.read_csv(sweep / RESULTS_CSV)["job_num"])
    assert len(pd.read_csv(sweep / "report" / "speedup.csv")) >= 3


def test_missing_gathered_csv_is_rebuilt(tmp_path):
    sweep = write_sweep(tmp_path / "sweep", sweep_rows())
    (sweep / RESULTS_CSV).unlink()
    build.make_report(sweep, plots=False)
    assert len(pd.read_csv(sweep / RESULTS_CSV)) == len(sweep_rows())


# ---- command line ----------------------------------------------------------------------


def test_main_missing_dir_is_one_line_exit_2(tmp_path, capsys):
    assert build.main([str(tmp_path / "nope")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jitexp-report: error:") and "nope" in lines[0]


def test_main_folder_without_results_is_exit_2(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert build.main([str(tmp_path / "empty")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_main_empty_results_is_exit_2(tmp_path, capsys):
    write_csv(pd.DataFrame(columns=["workload", "mode"]), tmp_path / "r" / RESULTS_CSV)
    assert build.main([str(tmp_path / "r")]) == 2
    assert "no result rows" in capsys.readouterr().err


def test_main_prints_tables_and_writes_report(tmp_path, capsys):
    sweep = write_sweep(tmp_path / "sweep", sweep_rows())
    assert build.main([str(sweep), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "speedup against the baseline" in out and "errors" in out and "scaling" in out
    assert out.strip().splitlines()[-2:] == [
        f"report: {sweep / 'report' / 'summary.md'}",
        f"page: {sweep / 'report' / 'index.html'}",
    ]
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
    assert build.find_latest() == Path("outputs/multirun/2025-01-02_10-00-00")
    assert build.main(["--no-plots", "-q"]) == 0
    assert (new / "report" / "summary.md").exists()
    assert not (old / "report").exists()


def test_a_folder_named_right_under_outputs_is_newest_when_its_jobs_are(tmp_path, monkeypatch):
    """A tutorial's `hydra.sweep.dir=outputs/static_args` written after the dated run is the one reported."""
    dated = tmp_path / "outputs" / "run" / "2025-01-01_10-00-00"
    write_csv(pd.DataFrame([ok("old", "eager", 8, 0.004, 0.01)]), dated / RESULTS_CSV)
    named = write_sweep(tmp_path / "outputs" / "static_args", sweep_rows())
    for job in named.rglob(RESULTS_CSV):
        os.utime(job, (2_000_000_000, 2_000_000_000))
    os.utime(dated / RESULTS_CSV, (1_000_000_000, 1_000_000_000))
    (tmp_path / "outputs" / "notes.txt").write_text("not a folder")
    monkeypatch.chdir(tmp_path)
    assert build.find_latest() == Path("outputs/static_args")
    os.utime(dated / RESULTS_CSV, (3_000_000_000, 3_000_000_000))
    assert build.find_latest() == dated.relative_to(tmp_path)


def test_main_without_dir_and_no_outputs_is_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert build.main([]) == 2
    assert "no DIR given" in capsys.readouterr().err


# ---- why, memory, cache, retrace probe, caveats, pictures ------------------------------

ATTR = dict(
    eager_ops=49,
    jaxpr_eqns=49,
    xla_kernels=1,
    xla_fusions=1,
    eager_bytes=4_000_000,
    bytes_accessed=80_000.0,
    flops=320_000.0,
    arithmetic_intensity=4.0,
    op_dispatch_s=1e-5,
    explanation="fusion-bound",
    explanation_detail="eager moves 3.81 MiB through memory in 49 ops; jit's 1 kernel (1 fused) move 78.1 KiB, 50x less",
)
PAIRED = dict(
    baseline_mode="eager",
    speedup=2.5,
    speedup_ci_low=2.2,
    speedup_ci_high=2.8,
    verdict="faster",
    break_even_calls=1.0,
    ahead_until_calls=float("nan"),
)


def why_rows() -> list[dict]:
    """One job: eager, jit and aot with attribution figures, numpy against them; memory and disk cache columns."""
    memory = dict(peak_rss_growth_bytes=20 * 2**20, argument_size_bytes=40_000.0, temp_size_bytes=0.0)
    return [
        ok(
            "chain",
            "eager",
            10000,
            0.002,
            0.2,
            job_num=0,
            eager_ops=49,
            eager_bytes=4_000_000,
            **memory,
            trace_s=0.004,
            lower_s=0.03,
            compile_s=0.15,
            execute_s=0.016,
        ),
        ok(
            "chain",
            "jit",
            10000,
            0.0008,
            0.05,
            job_num=0,
            **ATTR,
            **PAIRED,
            **memory,
            trace_s=0.004,
            lower_s=0.005,
            compile_s=0.035,
            execute_s=0.006,
            cache_hit=True,
            cache_cold_first_call_s=0.07,
            cache_warm_first_call_s=0.027,
            cache_cold_compile_s=0.05,
            cache_warm_compile_s=0.002,
            cache_warm_trace_s=0.004,
            cache_warm_lower_s=0.01,
        ),
        ok("chain", "aot", 10000, 0.0008, 0.09, job_num=0, **ATTR, **PAIRED, **memory),
        ok(
            "chain",
            "numpy",
            10000,
            0.003,
            0.003,
            job_num=0,
            compile_s=0.0,
            baseline_mode="eager",
            speedup=0.67,
            speedup_ci_low=0.6,
            speedup_ci_high=0.7,
            verdict="slower",
            break_even_calls=float("inf"),
            ahead_until_calls=0.0,
        ),
    ]


def test_attribution_table_columns_and_content():
    table = attribution_table(frame(why_rows()))
    assert list(table["mode"]) == ["jit", "aot"]  # compiled modes only: not eager, not numpy
    for col in (
        "eager_ops",
        "xla_kernels",
        "xla_fusions",
        "eager_bytes",
        "bytes_accessed",
        "traffic_cut",
        "explanation",
        "explanation_detail",
        "workload",
        "size",
    ):
        assert col in table.columns, col
    row = table.iloc[0]
    assert (row["eager_ops"], row["xla_kernels"]) == (49, 1)
    assert row["traffic_cut"] == pytest.approx(50.0)
    assert row["explanation"] == "fusion-bound"
    view = compact_view(table, ATTRIBUTION_VIEW)
    assert formatting.render(view)[1][0][view.columns.get_loc("eager_bytes")] == "3.81 MiB"
    # old CSVs: no attribution columns, an empty table with the same columns
    empty = attribution_table(frame([ok("w", "eager", 8, 0.004, 0.01), ok("w", "jit", 8, 0.001, 0.05)]))
    assert empty.empty and "explanation" in empty.columns


def test_memory_and_cache_tables():
    df = frame(why_rows())
    memory = memory_table(df)
    assert list(memory["mode"]) == ["eager", "jit", "aot"]  # the numpy row carries no memory figures
    assert (memory["peak_rss_growth_bytes"] == 20 * 2**20).all()
    cache = cache_table(df)
    assert list(cache["mode"]) == ["jit"]
    assert bool(cache["cache_hit"].iloc[0]) is True
    assert cache["first_call_saved_s"].iloc[0] == pytest.approx(0.043)
    assert cache_table(frame([ok("w", "jit", 8, 0.001, 0.05)])).empty


def test_report_writes_why_memory_cache_and_prints_them(tmp_path, capsys):
    """Tables, summary and terminal (with the pictures: tests/inprocess/test_report_figures.py)."""
    run = tmp_path / "run"
    write_csv(pd.DataFrame(why_rows()), run / RESULTS_CSV)
    assert build.main([str(run), "--no-plots"]) == 0
    printed = capsys.readouterr().out
    out = run / "report"
    for name in ("attribution.csv", "memory.csv", "cache.csv", "summary.md"):
        assert (out / name).exists(), name
    assert not (out / "sequence.csv").exists()
    attribution = pd.read_csv(out / "attribution.csv")
    assert list(attribution["explanation"]) == ["fusion-bound", "fusion-bound"]
    summary = (out / "summary.md").read_text()
    for text in (
        "## Why",
        "fusion-bound",
        "eager moves 3.81 MiB",
        "## Memory",
        "## Persistent compilation cache",
        "(attribution.csv)",
    ):
        assert text in summary, text
    assert "fusion-bound" in printed and "3.81 MiB" in printed and "persistent compilation cache" in printed
    for name in ("attribution.csv", "summary.md", "index.html"):
        assert name in printed, name


def test_caveats_are_counted_by_kind():
    rows = [
        ok(
            "w",
            "eager",
            s,
            0.004,
            0.01,
            unstable=True,
            unstable_reason=f"samples within a process spread {10 + s}% (robust cv; limit 10%); load average 3.{s} above 2 CPU(s)",
        )
        for s in (1, 2, 3)
    ]
    rows += [
        ok("w", "jit", 1, 0.001, 0.05, unstable=True, unstable_reason="load average 3.1 above 2 CPU(s)"),
        ok("w", "jit", 2, 0.001, 0.05, unstable=False, compiles_during_timing=2, matches_eager=False),
        ok("w", "jit", 3, 0.001, 0.05, unstable=False),
    ]
    lines = caveat_summary(frame(rows))
    assert lines[0].startswith(
        "unstable: 4 of 6 rows (load average above CPU(s): 4 rows, samples within a process spread: 3 rows)"
    )
    assert lines[1].startswith("compiled while timed: 1 of 6 rows (2 compile(s))")
    assert lines[2].startswith("result differs from eager: 1 of 6 rows: w jit size 2")
    assert len(lines) == 3
    summary = markdown.summary_markdown(frame(rows), build.report_tables(frame(rows)), [])
    caveats = summary.split("## Caveats", 1)[1].split("##", 1)[0]
    assert caveats.count("\n- ") == 3  # three kinds, not one line per row
    assert caveat_summary(frame([ok("w", "jit", 1, 0.001, 0.05)])) == []


def test_a_mesh_sweeps_rows_and_caveats_say_which_mesh():
    rows = [
        ok("w", "jit", 256, 0.001 * d, 0.05, mesh=f"data={d}", unstable=d > 1, unstable_reason="waited to run 9%")
        for d in (1, 2, 4)
    ]
    assert rows_table(frame(rows))["mesh"].tolist() == ["data=1", "data=2", "data=4"]
    assert caveat_summary(frame(rows))[0].endswith(": w jit size 256 mesh data=2; w jit size 256 mesh data=4")
    alike = [{**r, "mesh": "data=2"} for r in rows]  # a knob no row differs in names no row
    assert "mesh" not in rows_table(frame(alike)).columns
    assert caveat_summary(frame(alike))[0].endswith(": w jit size 256; w jit size 256")


def test_static_labels():
    assert formatting.variant_label("n=2", "[1]", {"n"}) == "n=2 (static)"
    assert formatting.variant_label("n=2", "[]", {"n"}) == "n=2 (traced)"
    assert formatting.variant_label("size=100", "[1]", {"n"}) == "size=100"
    assert formatting.params_text({"param_n": 3, "static_argnums": "[1]"}, static_mark=True) == "n=3 (static)"
    rows = frame(
        [ok("loop", "jit", 50, 1e-4, 0.03, param_n=n, static_argnums="[1]") for n in (2, 3)]
        + [error("loop", "jit", 50, param_n=n, static_argnums="[]") for n in (2, 3)]
    )
    from jitexp.report.plots import grouping as plot_groups

    labels = [label for label, _ in plot_groups.case_groups(rows)]
    assert labels == [
        "n=2 (traced)\nsize 50",
        "n=2 (static)\nsize 50",
        "n=3 (traced)\nsize 50",
        "n=3 (static)\nsize 50",
    ]


def test_plot_labels_name_what_differs_and_the_title_what_every_group_shares():
    from jitexp.report.plots import grouping as plot_groups

    rows = frame(
        [ok("dp", "jit", 256, 1e-3 * d, 0.4, mesh=f"data={d}", param_batch=256, param_depth=2) for d in (1, 2, 4)]
    )
    assert [label for label, _ in plot_groups.case_groups(rows)] == [
        "mesh data=1\nsize 256",
        "mesh data=2\nsize 256",
        "mesh data=4\nsize 256",
    ]
    assert plot_groups.shared_params(rows) == {"param_batch": 256, "param_depth": 2}
    assert plot_groups.shared_text(rows).startswith("batch=256, depth=2")
    one = rows.iloc[:1]  # one group: its label names the params, the title adds none
    assert plot_groups.shared_params(one) == {} and "batch=256" in plot_groups.case_groups(one)[0][0]


def calls_rows(job: int, static: bool) -> list[dict]:
    cold = [
        dict(job_num=job, workload="loop", mode="jit", size=50, probe="cold", call=c, call_s=s, compiles=k)
        for c, s, k in ((1, 0.03, 1), (2, 1e-4, 0), (3, 8e-5, 0))
    ]
    if not static:
        return [
            dict(
                job_num=job,
                workload="loop",
                mode="jit",
                size=50,
                probe="sequence",
                call=c,
                variant=v,
                status="error",
                call_s=0.002,
                error_type="jax.errors.TracerIntegerConversionError",
            )
            for c, v in ((1, "n=2"), (2, "n=3"), (3, "n=2"))
        ]
    seq = [
        dict(
            job_num=job,
            workload="loop",
            mode="jit",
            size=50,
            probe="sequence",
            call=c,
            variant=v,
            status="ok",
            call_s=s,
            compiles=int(comp),
            compiled=comp,
            trace_s=0.005 * comp,
            compile_s=0.02 * comp,
            miss_reason=why,
        )
        for c, v, s, comp, why in (
            (1, "n=2", 0.04, True, "first call"),
            (2, "n=3", 0.04, True, "different value of static argument n (3, before 2)"),
            (3, "n=2", 1e-4, False, ""),
        )
    ]
    return cold + seq


def test_sequence_table(tmp_path, capsys):
    """The retrace probe's table (its figure, calls_<workload>.png: tests/inprocess/test_report_figures.py)."""
    sweep = tmp_path / "sweep"
    rows = [
        error("loop", "jit", 50, param_n=2, static_argnums="[]"),
        ok("loop", "jit", 50, 1e-4, 0.03, param_n=2, static_argnums="[1]"),
    ]
    write_sweep(sweep, rows, gather=False)
    from jitexp.store.schema import CALL_COLUMNS

    for job, static in ((0, False), (1, True)):
        write_csv(pd.DataFrame(calls_rows(job, static)).reindex(columns=CALL_COLUMNS), sweep / str(job) / "calls.csv")
    assert build.main([str(sweep), "--no-plots"]) == 0
    printed = capsys.readouterr().out
    out = sweep / "report"
    sequence = pd.read_csv(out / "sequence.csv")
    assert len(sequence) == 6  # the sequence probe only, not the cold calls
    static = sequence[sequence["job_num"] == 1]
    assert list(static["label"]) == ["n=2 (static)", "n=3 (static)", "n=2 (static)"]
    assert list(static["compiled"]) == [True, True, False]
    assert "different value of static argument n" in static["miss_reason"].iloc[1]
    assert list(sequence.loc[sequence["job_num"] == 0, "label"]) == ["n=2 (traced)", "n=3 (traced)", "n=2 (traced)"]
    assert "retrace probe" in printed and "n=3 (static)" in printed
    assert "## Retrace probe" in (out / "summary.md").read_text()


def test_growth_exponent_written_on_the_scaling_plot(tmp_path, monkeypatch):
    from jitexp.report.plots import growth as plot_growth
    from jitexp.report.plots import style as plot_style

    rows = [ok("w", "jit", n, 2e-9 * n**1.5, 0.01) for n in (16, 64, 256, 1024)]
    rows += [ok("w", "eager", n, 1e-9 * n**2, 0.02) for n in (16, 64, 256, 1024)]
    figures = []
    real_save = plot_style.save
    monkeypatch.setattr(plot_style, "save", lambda fig, *a, **k: figures.append(fig) or real_save(fig, *a, **k))
    paths = plot_growth.scaling_charts(frame(rows), tmp_path)
    assert [p.name for p in paths] == ["scaling_w_float32.png"]
    legend = figures[0].legends[0]  # below the axes, not beside them
    assert [t.get_text() for t in legend.get_texts()] == ["eager: time ~ size^2.00", "jit: time ~ size^1.50"]
    assert legend.get_title().get_text() == "band: 95% CI; dashed: least-squares fit"
    assert sum(line.get_linestyle() == "--" for line in figures[0].axes[0].get_lines()) == 2
    assert formatting.growth_text(float("nan")) == "-"


def test_two_sizes_give_no_growth_exponent_and_the_legend_says_why(tmp_path, monkeypatch):
    from jitexp.report.plots import growth as plot_growth
    from jitexp.report.plots import style as plot_style

    rows = [ok("w", "jit", n, 2e-9 * n**1.5, 0.01) for n in (16, 64)]
    figures = []
    real_save = plot_style.save
    monkeypatch.setattr(plot_style, "save", lambda fig, *a, **k: figures.append(fig) or real_save(fig, *a, **k))
    plot_growth.scaling_charts(frame(rows), tmp_path)
    legend = figures[0].legends[0]
    assert [t.get_text() for t in legend.get_texts()] == ["jit: no exponent from 2 sizes (needs 3)"]
    assert legend.get_title().get_text() == "band: 95% CI"
    assert not any(line.get_linestyle() == "--" for line in figures[0].axes[0].get_lines())
    assert math.isnan(tables.scaling_table(frame(rows))["growth_exponent"].item())


def test_time_chart_hollow_only_where_the_ci_missed_its_target(tmp_path, monkeypatch):
    from jitexp.report.plots import style as plot_style
    from jitexp.report.plots import times as plot_time

    rows = [
        ok("w", "eager", 8, 0.004, 0.01, unstable=True, ci_target_met=False),
        ok("w", "jit", 8, 0.001, 0.05, unstable=True, ci_target_met=True),
        ok("w", "aot", 8, 0.001, 0.05, unstable=False, ci_target_met=True),
    ]
    figures = []
    real_save = plot_style.save
    monkeypatch.setattr(plot_style, "save", lambda fig, *a, **k: figures.append(fig) or real_save(fig, *a, **k))
    plot_time.time_charts(frame(rows), tmp_path)
    markers = {line.get_color(): line for line in figures[0].axes[0].get_lines() if line.get_marker() in ("o", "D")}
    eager, jit, aot = (markers[plot_style.mode_colour(m)] for m in ("eager", "jit", "aot"))
    assert eager.get_markerfacecolor() == "white" and eager.get_marker() == plot_time.UNSTABLE_MARKER
    assert jit.get_markerfacecolor() != "white" and jit.get_marker() == plot_time.UNSTABLE_MARKER
    assert aot.get_markerfacecolor() != "white" and aot.get_marker() == "o"
    labels = [t.get_text() for t in figures[0].legends[0].get_texts()]
    assert "hollow: CI wider than timing.target_rel_ci" in labels and "diamond: unstable (see Caveats)" in labels


def test_speedup_axis_has_readable_ticks(tmp_path, monkeypatch):
    from jitexp.report.plots import speedup as plot_speedup
    from jitexp.report.plots import style as plot_style

    rows = [
        ok("w", "eager", 8, 0.00157, 0.01, job_num=0),
        ok(
            "w",
            "jit",
            8,
            0.001,
            0.05,
            job_num=0,
            **{**PAIRED, "speedup": 1.57, "speedup_ci_low": 1.5, "speedup_ci_high": 1.65},
        ),
        ok(
            "w",
            "aot",
            8,
            0.001,
            0.05,
            job_num=0,
            **{**PAIRED, "speedup": 1.55, "speedup_ci_low": 1.45, "speedup_ci_high": 1.66},
        ),
    ]
    df = frame(rows)
    figures = []
    real_save = plot_style.save
    monkeypatch.setattr(plot_style, "save", lambda fig, *a, **k: figures.append(fig) or real_save(fig, *a, **k))
    plot_speedup.speedup_charts(df, tables.speedup_table(df), tmp_path)
    ax = figures[0].axes[0]
    ticks = [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
    assert 1.5 in [round(t, 6) for t in ticks] or 1.6 in [round(t, 6) for t in ticks]
    assert len(ticks) >= 4
    texts = [t.get_text() for t in ax.texts]
    assert any(t.startswith("1.57x faster\nCI 1.5-1.65x") for t in texts)
    assert any(t.startswith("1.55x faster") for t in texts)


def test_donation_variants_stay_apart():
    rows = [
        ok("w", "eager", 8, 0.004, 0.01, job_num=0, donate_argnums="[]"),
        ok("w", "jit", 8, 0.001, 0.05, job_num=0, donate_argnums="[]", **PAIRED),
        ok("w", "eager", 8, 0.004, 0.01, job_num=1, donate_argnums="[0]"),
        ok("w", "jit", 8, 0.002, 0.05, job_num=1, donate_argnums="[0]", **{**PAIRED, "speedup": 2.0}),
    ]
    table = tables.speedup_table(frame(rows)).set_index("donate_argnums")
    assert table.loc["[]", "speedup"] == pytest.approx(2.5)
    assert table.loc["[0]", "speedup"] == pytest.approx(2.0)
    assert "donate_argnums" in speedup_view(tables.speedup_table(frame(rows))).columns


def test_job_summary_numpy_has_no_compile_and_jit_says_why():
    line = formatting.job_summary(why_rows())
    numpy_part = line.split("numpy", 2)[-1]
    assert "compile 0 s" not in line and "compile" not in numpy_part.split(";")[0]
    assert "jit 2.5x faster than eager (95% CI 2.2x-2.8x), fusion-bound, compile 35 ms" in line


def test_job_summary_says_when_the_compile_came_from_the_disk_cache():
    rows = why_rows()
    jit = next(i for i, r in enumerate(rows) if r["mode"] == "jit")
    rows[jit] = {**rows[jit], "cache_cold_compile_s": 0.12}  # with compilation_cache_dir: the probe's cold compile
    assert "fusion-bound, compile 35 ms with the disk cache (120 ms without)," in formatting.job_summary(rows)


def test_job_summary_names_the_donation_and_compiler_options_a_job_set():
    rows = [{**r, "donate_argnums": "[0]", "compiler_options": "xla_cpu_enable_fast_math=True"} for r in why_rows()]
    head = formatting.job_summary(rows).split(": ", 1)[0]
    assert head.endswith(" donate_argnums=[0] xla_cpu_enable_fast_math=True"), head
    plain = [{**r, "donate_argnums": "[]", "compiler_options": ""} for r in why_rows()]
    assert "donate" not in formatting.job_summary(plain).split(": ", 1)[0]


def test_job_summary_counts_instability_reasons_instead_of_listing_them():
    rows = why_rows()[:2]
    rows[0] = {
        **rows[0],
        "unstable": True,
        "unstable_reason": "load average 2.6 above 2 CPU(s); "
        "samples within a process spread 33% (robust cv; limit 10%)",
    }
    rows[1] = {
        **rows[1],
        "unstable": True,
        "unstable_reason": "samples within a process spread 14% (robust cv; limit 10%)",
    }
    line = formatting.job_summary(rows)
    assert line.endswith("[unstable (eager, jit): 3 reasons, see results.csv unstable_reason]")
    assert "load average" not in line
    assert "unstable" not in formatting.job_summary(why_rows()[:2])


def test_display_path_is_relative_under_the_cwd(tmp_path):
    assert formatting.display_path(tmp_path / "outputs" / "run" / "x", cwd=tmp_path) == "outputs/run/x"
    assert formatting.display_path("/elsewhere/run", cwd=tmp_path) == "/elsewhere/run"


def test_minimal_old_csv_reports_everything_it_can(tmp_path):
    """A results.csv from before most columns existed: no status, CI, dtype, compile parts or attribution (its
    pictures: tests/inprocess/test_report_figures.py)."""
    run = tmp_path / "run"
    pd.DataFrame(
        {
            "workload": ["w", "w", "w", "w"],
            "mode": ["eager", "jit", "eager", "jit"],
            "size": [8, 8, 16, 16],
            "median_s": [0.004, 0.001, 0.016, 0.004],
            "first_call_s": [0.01, 0.05, 0.02, 0.06],
        }
    ).to_csv(run.mkdir() or run / RESULTS_CSV, index=False)
    assert build.main([str(run), "-q", "--no-plots"]) == 0
    out = run / "report"
    names = {p.name for p in out.iterdir()}
    assert {"summary.md", "speedup.csv", "scaling.csv"} <= names
    assert not names & {"attribution.csv", "memory.csv", "cache.csv", "sequence.csv"}
    assert "## Why" not in (out / "summary.md").read_text()


def test_steal_and_the_host_probe_spread_are_caveats():
    stolen = {  # one job (both its rows) measured under steal, two processes replaced
        "steal_median": 0.14,
        "steal_max": 0.3,
        "n_steal_replaced": 2,
        "host_probe_matmul_s": 8e-4,
        "unstable": True,
        "unstable_reason": "CPU steal 14% of the time (median process; limit 5%)",
        "job_num": 1,
    }
    rows = [
        ok("w", "jit", 1, 0.001, 0.05, steal_median=0.01, steal_max=0.02, n_steal_replaced=0, host_probe_matmul_s=4e-4),
        ok("w", "jit", 2, 0.001, 0.05, **stolen),
        ok("w", "eager", 2, 0.001, 0.05, **stolen),
    ]
    rows[0]["job_num"] = 0
    lines = steal_caveats(frame(rows))
    assert lines[0].startswith("CPU steal (hypervisor): median process 1.0%..14.0% over 3 rows, worst process 30.0%")
    assert "2 row(s) above timing.max_steal" in lines[0]
    assert "2 process(es) replaced under steal" in lines[0]  # once per job, not per row
    assert lines[1].startswith("the host moved between jobs: the same small kernels, timed in each of 2 jobs")
    assert "matmul 400 us..800 us (2.00x); figures from different jobs" in lines[1]
    assert steal_caveats(frame([ok("w", "jit", 1, 0.001, 0.05)])) == []  # not recorded: no line
    notes = rows_table(frame(rows))["notes"].tolist()
    assert notes == ["", "unstable; CPU steal 14%", "unstable; CPU steal 14%"]  # beside the figures it moved


def test_job_summary_names_the_mesh_and_the_processes_it_spans():
    rows = [{**r, "mesh": "data=2", "distributed_processes": 2} for r in why_rows()]
    assert " cpu mesh data=2 over 2 processes: " in formatting.job_summary(rows)
    one = [{**r, "mesh": "data=4", "distributed_processes": 1} for r in why_rows()]
    assert " cpu mesh data=4: " in formatting.job_summary(one)
    assert " mesh " not in formatting.job_summary(why_rows())
