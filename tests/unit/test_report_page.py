"""report/index.html: one self-contained page, checked as text (in headless Chromium: tests/e2e/test_report_page_browser.py)."""

from __future__ import annotations

import re

from helpers import error, frame, ok, write_sweep
from jitexp.report.run import build

PAIRED = dict(
    baseline_mode="eager",
    speedup_ci_low=2.2,
    speedup_ci_high=2.8,
    verdict="faster",
    break_even_calls=15.0,
    ahead_until_calls=float("inf"),
)


def page_rows() -> list[dict]:
    """Three cases: two paired jit-vs-eager jobs at two sizes (one explained), one whose jit failed."""
    rows = []
    for size, job in ((100, 0), (200, 1)):
        rows += [
            ok("square", "eager", size, 4e-4, 4e-2, job_num=job),
            ok("square", "jit", size, 1.6e-4, 3e-2, job_num=job, speedup=2.5, explanation="fusion-bound", **PAIRED),
        ]
    rows += [ok("cond", "eager", 10, 2e-5, 1e-3, job_num=2), error("cond", "jit", 10, job_num=2)]
    return rows


def test_index_html_has_the_verdicts_first_and_the_environment(tmp_path, capsys):
    """The page's text (with every picture inline: tests/inprocess/test_report_figures.py)."""
    sweep = write_sweep(tmp_path / "sweep", page_rows(), gather=False)
    assert build.main([str(sweep), "-q", "--no-plots"]) == 0
    page = sweep / "report" / "index.html"
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"page: {page}"
    text = page.read_text()
    assert text.index("<h2>Verdicts</h2>") < text.index("<h2>Environment</h2>")
    verdicts = text.split("<h2>Verdicts</h2>")[1].split("</table>")[0]
    assert verdicts.count("<tr><td>") == 3  # one row per case
    assert "2.5x faster (95% CI 2.2x-2.8x)" in verdicts and "pays off after 15 calls" in verdicts
    assert "<th>baseline median</th><th>mode median</th><th>mode compile</th>" in verdicts
    assert "<td>160 us</td>" in verdicts and "fusion-bound" in verdicts  # jit's median (each row its own job here)
    assert "jit failed: TracerBoolConversionError" in verdicts and "use jax.lax.cond" in verdicts
    assert not re.search(r"(src|href)=\"(https?:|//)", text) and "<script" not in text  # nothing fetched, no JS
    assert "TestCPU" in text.split("<h2>Environment</h2>")[1]


def test_index_html_without_plots_is_the_tables(tmp_path):
    run = tmp_path / "run"
    build.write_report(frame(page_rows()[:2]), run, plots=False)
    text = (run / "index.html").read_text()
    assert "<h2>Pictures</h2>" not in text and text.count("<tr><td>") >= 2
