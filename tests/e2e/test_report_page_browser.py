"""report/index.html in headless Chromium: every image loads and the table has one row per case (the page's text is
checked in tests/unit/test_report_page.py, whose hand-made rows this page is built from); history/index.html: every
timeline drawn, one row per step."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import write_sweep
from jitexp.report.history import cli as history_cli
from jitexp.report.run import build
from unit.test_report_page import page_rows

CHECK = """<script>
window.addEventListener("load", () => {
  const images = [...document.images];
  const loaded = images.filter((i) => i.complete && i.naturalWidth > 0).length;
  const rows = document.querySelector("table tbody").rows.length;
  document.body.setAttribute("data-check", `images=${images.length} loaded=${loaded} rows=${rows}`);
});
</script>"""


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def headless(args: list[str], profile: Path) -> subprocess.CompletedProcess:
    browser = chromium()
    if browser is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install chromium; .ci/run installs it as root)")
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        "--virtual-time-budget=10000",
    ]
    try:
        proc = subprocess.run([browser, *flags, *args], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"chromium cannot start here: {exc}")
    if proc.returncode != 0 and not proc.stdout:
        pytest.skip(f"chromium cannot start here: {proc.stderr.strip().splitlines()[-1:]}")
    return proc


def test_index_html_in_headless_chromium_loads_every_image_and_one_row_per_case(tmp_path):
    sweep = write_sweep(tmp_path / "sweep", page_rows(), gather=False)
    out = build.make_report(sweep)
    page = out / "index.html"
    n_images = page.read_text().count("<img ")
    checked = tmp_path / "checked.html"  # the page plus a probe script; the page itself has none
    checked.write_text(page.read_text().replace("</body>", CHECK + "</body>"))
    dom = headless(["--dump-dom", checked.as_uri()], tmp_path / "profile").stdout
    match = re.search(r'data-check="images=(\d+) loaded=(\d+) rows=(\d+)"', dom)
    assert match, dom[-2000:]
    assert (int(match[1]), int(match[2]), int(match[3])) == (n_images, n_images, 3)
    shot = tmp_path / "page.png"
    headless([f"--screenshot={shot}", "--window-size=1280,2000", page.as_uri()], tmp_path / "profile")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


HISTORY_CHECK = """<script>
window.addEventListener("load", () => {
  const drawn = [...document.querySelectorAll(".js-plotly-plot")].filter((d) => d.querySelector("svg.main-svg"));
  const points = drawn.map((d) => d.querySelectorAll(".scatterlayer .point").length).join(",");
  const steps = document.querySelector("table.steps tbody").rows.length;
  document.body.setAttribute("data-check", `timelines=${drawn.length} points=${points} steps=${steps}`);
});
</script>"""


def test_the_history_page_draws_every_timeline_offline_and_one_row_per_step(tmp_path):
    saved = Path(__file__).parents[1] / "data" / "histories" / "twelve_commits"  # steady x1.5 at c7, compile x2 at c10
    assert history_cli.main([str(saved / "r*"), "--out", str(tmp_path / "history")]) == 0
    page = tmp_path / "history" / "index.html"
    assert "<script src=" not in page.read_text()  # nothing fetched: plotly.js is inlined
    checked = tmp_path / "checked.html"
    checked.write_text(page.read_text().replace("</body>", HISTORY_CHECK + "</body>"))
    dom = headless(["--dump-dom", checked.as_uri()], tmp_path / "profile").stdout
    match = re.search(r'data-check="timelines=(\d+) points=([\d,]*) steps=(\d+)"', dom)
    assert match, dom[-2000:]
    assert (int(match[1]), match[2], int(match[3])) == (4, "12,12,12,12", 2)  # steady, first call, compile, trace
