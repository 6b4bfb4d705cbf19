"""The documentation site builds with warnings as errors, as .ci/run builds it (issue 56): every page in a toctree,
every link between pages and to a heading resolved (docs/conf.py). Its landing page leads to the four sections a user
reads (tutorial, how-to guides, reference, explanation) and, last and apart, to Development, the lab notebook.
Skipped where the docs extra is not installed (pip install ".[docs]")."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("myst_parser")
pytest.importorskip("furo")

DOCS = Path(__file__).resolve().parents[2] / "docs"
SECTIONS = ["tutorial", "howto", "reference", "explanation", "development"]
CAPTIONS = ["Tutorial", "How-to guides", "Reference", "Explanation", "Development"]


def test_the_site_builds_without_warnings_and_its_landing_page_leads_to_each_section(tmp_path):
    out = tmp_path / "html"  # its .doctrees cache too: nothing is written under docs/
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-W", "-b", "html", str(DOCS), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    page = (out / "index.html").read_text()
    article = page[page.index("<article") : page.index("</article>")]
    links = set(re.findall(r'href="([^"#]+)', article))
    assert {f"{section}/index.html" for section in SECTIONS} <= links, sorted(links)
    # the sidebar: the user's four sections in order, then Development, captioned on its own
    sidebar = page[page.index('class="sidebar-tree"') : page.index('class="main"')]
    captions = re.findall(r'<span class="caption-text">([^<]+)</span>', sidebar)
    assert captions == CAPTIONS, captions
