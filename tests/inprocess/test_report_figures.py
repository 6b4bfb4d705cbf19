"""jitexp-report's whole reports with their pictures drawn: every PNG a report writes, from the hand-made CSVs of
tests/unit/test_report.py and test_report_page.py (no JAX is needed, but drawing every figure of a report takes about
a second a test, so these run here, not in tests/unit). tests/unit checks the same reports' tables, summaries and
printed lines with --no-plots, and each plot's contents one plot at a time."""

from __future__ import annotations

import math
import re

import pandas as pd

from helpers import error, ok, sweep_rows, write_sweep
from jitexp.report.run import build
from jitexp.store.csvio import write_csv
from jitexp.store.folders import RESULTS_CSV
from jitexp.store.schema import CALL_COLUMNS
from unit.test_report import calls_rows, why_rows
from unit.test_report_page import page_rows

EXPECTED_PNGS = [
    "time_square_float32.png",
    "time_cond_float32.png",
    "time_loop_float32.png",
    "speedup_square_float32.png",
    "speedup_loop_float32.png",
    "coldstart_square_float32.png",
    "coldstart_loop_float32.png",
    "scaling_square_float32.png",
    "compile_square_float32.png",
]


def test_make_report_writes_tables_summary_and_plots(tmp_path):
    sweep = write_sweep(tmp_path / "sweep", sweep_rows())
    out = build.make_report(sweep)
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
    for text in [
        "## Speedup vs eager",
        "## Errors",
        "## Environment",
        "TestCPU",
        "testhost",
        "0.10.2",
        "| load_avg_end | 0.75 |",
        "(time_square_float32.png)",
        "| square |",
    ]:
        assert text in summary, text


def test_rerun_removes_plots_that_no_longer_apply(tmp_path):
    sweep = write_sweep(tmp_path / "sweep", [ok("w", "eager", 8, 0.004, 0.01), ok("w", "jit", 8, 0.001, 0.05)])
    out = build.make_report(sweep, plots=False)  # the folder of an earlier report; its plots are the files below
    (out / ".jitexp-written").unlink()  # written by a jitexp before store.owned's list: the default folder is its own
    stale = out / "time_gone_float32.png"
    stale.write_bytes(b"old")
    legacy = out / "bars_w_float32_8.png"  # the name earlier versions wrote
    legacy.write_bytes(b"old")
    keep = out / "notes.txt"
    keep.write_text("mine")
    (out / "attribution.csv").write_text("stale")
    build.make_report(sweep)
    assert not stale.exists() and not legacy.exists() and keep.exists()
    assert not (out / "attribution.csv").exists()  # these rows have no attribution columns
    assert sorted(p.name for p in out.glob("*.png")) == [
        "coldstart_w_float32.png",
        "speedup_w_float32.png",
        "time_w_float32.png",
    ]


def test_all_error_workload_and_nan_values_do_not_crash(tmp_path):
    rows = [
        error("bad", "eager", 4),
        error("bad", "jit", 4),
        ok("partial", "eager", 4, 0.001, float("nan")),
        ok("partial", "jit", 4, 0.0005, float("nan")),
        ok("partial", "eager", 8, float("nan"), 0.01),
    ]
    out = build.make_report(write_sweep(tmp_path / "s", rows))
    names = sorted(p.name for p in out.glob("*.png"))
    assert names == ["speedup_partial_float32.png", "time_partial_float32.png"]
    speedup = pd.read_csv(out / "speedup.csv")
    assert math.isnan(speedup["break_even_calls"].item())
    assert len(pd.read_csv(out / "errors.csv")) == 2


def test_report_writes_why_memory_cache_and_prints_them(tmp_path, capsys):
    run = tmp_path / "run"
    write_csv(pd.DataFrame(why_rows()), run / RESULTS_CSV)
    assert build.main([str(run)]) == 0
    printed = capsys.readouterr().out
    out = run / "report"
    for name in (
        "attribution.csv",
        "memory.csv",
        "cache.csv",
        "summary.md",
        "time_chain_float32.png",
        "speedup_chain_float32.png",
        "coldstart_chain_float32.png",
    ):
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
        "(coldstart_chain_float32.png)",
        "(attribution.csv)",
    ):
        assert text in summary, text
    assert "fusion-bound" in printed and "3.81 MiB" in printed and "persistent compilation cache" in printed
    # the terminal lists every file written (roofline.png: the jit and aot rows have flops and bytes_accessed)
    assert "wrote 13 files in" in printed
    assert "roofline: roofline.png" in printed
    for name in (
        "attribution.csv",
        "time_chain_float32.png",
        "coldstart_chain_float32.png",
        "summary.md",
        "index.html",
    ):
        assert name in printed, name


def test_sequence_table_and_calls_figure(tmp_path, capsys):
    sweep = tmp_path / "sweep"
    rows = [
        error("loop", "jit", 50, param_n=2, static_argnums="[]"),
        ok("loop", "jit", 50, 1e-4, 0.03, param_n=2, static_argnums="[1]"),
    ]
    write_sweep(sweep, rows, gather=False)
    for job, static in ((0, False), (1, True)):
        write_csv(pd.DataFrame(calls_rows(job, static)).reindex(columns=CALL_COLUMNS), sweep / str(job) / "calls.csv")
    assert build.main([str(sweep)]) == 0
    printed = capsys.readouterr().out
    out = sweep / "report"
    sequence = pd.read_csv(out / "sequence.csv")
    assert len(sequence) == 6  # the sequence probe only, not the cold calls
    static = sequence[sequence["job_num"] == 1]
    assert list(static["label"]) == ["n=2 (static)", "n=3 (static)", "n=2 (static)"]
    assert list(static["compiled"]) == [True, True, False]
    assert "different value of static argument n" in static["miss_reason"].iloc[1]
    assert list(sequence.loc[sequence["job_num"] == 0, "label"]) == ["n=2 (traced)", "n=3 (traced)", "n=2 (traced)"]
    assert (out / "calls_loop.png").exists()
    assert "retrace probe" in printed and "n=3 (static)" in printed
    assert "## Retrace probe" in (out / "summary.md").read_text()


def test_old_calls_csv_without_probe_columns_still_reports(tmp_path):
    run = tmp_path / "run"
    write_csv(
        pd.DataFrame([ok("w", "eager", 8, 0.004, 0.01, job_num=0), ok("w", "jit", 8, 0.001, 0.05, job_num=0)]),
        run / RESULTS_CSV,
    )
    old = pd.DataFrame(
        [
            dict(job_num=0, workload="w", mode="jit", size=8, call=c, call_s=s, compiles=k)
            for c, s, k in ((1, 0.05, 1), (2, 0.001, 0), (3, 0.001, 0))
        ]
    )
    write_csv(old, run / "calls.csv")
    out = build.make_report(run)
    assert (out / "calls_w.png").exists()  # the first calls from cold, as older jobs wrote them
    assert not (out / "sequence.csv").exists()


def test_minimal_old_csv_reports_everything_it_can(tmp_path):
    """A results.csv from before most columns existed: no status, CI, dtype, compile parts or attribution."""
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
    assert build.main([str(run), "-q"]) == 0
    out = run / "report"
    names = {p.name for p in out.iterdir()}
    assert {"time_w.png", "speedup_w.png", "coldstart_w.png", "scaling_w.png"} <= names
    assert not names & {"attribution.csv", "memory.csv", "cache.csv", "sequence.csv"}
    assert "## Why" not in (out / "summary.md").read_text()


def test_index_html_has_the_verdicts_first_every_picture_inline_and_the_environment(tmp_path, capsys):
    sweep = write_sweep(tmp_path / "sweep", page_rows(), gather=False)
    assert build.main([str(sweep), "-q"]) == 0
    page = sweep / "report" / "index.html"
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"page: {page}"
    text = page.read_text()
    assert text.index("<h2>Verdicts</h2>") < text.index("<h2>Pictures</h2>") < text.index("<h2>Environment</h2>")
    verdicts = text.split("<h2>Verdicts</h2>")[1].split("</table>")[0]
    assert verdicts.count("<tr><td>") == 3  # one row per case
    assert "2.5x faster (95% CI 2.2x-2.8x)" in verdicts and "pays off after 15 calls" in verdicts
    assert "<th>baseline median</th><th>mode median</th><th>mode compile</th>" in verdicts
    assert "<td>160 us</td>" in verdicts and "fusion-bound" in verdicts  # jit's median (each row its own job here)
    assert "jit failed: TracerBoolConversionError" in verdicts and "use jax.lax.cond" in verdicts
    pngs = sorted(p.name for p in page.parent.glob("*.png"))
    assert text.count('<img src="data:image/png;base64,') == len(pngs) > 0
    assert all(f"<figcaption>{name}: " in text for name in pngs)
    assert not re.search(r"(src|href)=\"(https?:|//)", text) and "<script" not in text  # nothing fetched, no JS
    assert "TestCPU" in text.split("<h2>Environment</h2>")[1]
