"""The README's shape (issue 56, item 1): a newcomer reads it in two minutes, and nothing in it goes stale by date.

At most 150 lines; the first command within the first 15; no date, no "VM", no test counts and no figures in minutes
or seconds outside jitexp's own sample output; every relative link points at a file of the repository (the docs
site's pages included); the "I want to…" table links each task's page.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
DATE = re.compile(rf"\b20\d\d-\d\d-\d\d\b|\b(?:{MONTHS})[a-z]*\.?\s+(?:\d{{1,2}}(?:st|nd|rd|th)?,?\s+)?20\d\d\b")
HYDRA_FOLDER = re.compile(r"\b20\d\d-\d\d-\d\d_\d\d-\d\d-\d\d\b")  # a run folder's name, as jitexp prints it
TEST_COUNT = re.compile(
    r"\b\d[\d,]*\s+(?:unit\s+|in-process\s+|end-to-end\s+|e2e\s+|serial\s+)?tests?\b|\b\d+\s+passed\b"
)
DURATION = re.compile(r"\b\d+(?:[.,]\d+)?\s?(?:s|sec|secs|seconds?|min|mins|minutes?|h|hours?)\b")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
TASK_PAGES = [f"docs/howto/{name}.md" for name in "sweeps models before-after compare history pytest python".split()]
TASK_PAGES += [f"docs/howto/{name}.md" for name in ("devices", "mesh", "cluster")] + ["docs/tutorial/index.md"]


def readme_lines() -> list[str]:
    return README.read_text().splitlines()


def prose(lines: list[str]) -> str:
    """The README without the blocks of jitexp's own output (`<!-- output: NAME -->`): what the project writes."""
    kept, skipping, fence = [], False, ""
    for i, line in enumerate(lines):
        if skipping:
            skipping = not line.strip() == fence
            continue
        if line.lstrip().startswith("```") and i and lines[i - 1].strip().startswith("<!-- output:"):
            skipping, fence = True, line.strip()[: len(line.strip()) - len(line.strip().lstrip("`"))]
            continue
        kept.append(line)
    return "\n".join(kept)


def test_the_readme_is_at_most_150_lines():
    assert len(readme_lines()) <= 150, f"README.md has {len(readme_lines())} lines"


def test_the_first_command_is_within_the_first_15_lines():
    lines = readme_lines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "```bash")
    command = next(
        i for i in range(start + 1, len(lines)) if lines[i].strip() and not lines[i].lstrip().startswith("#")
    )
    assert lines[command].startswith("python3 -m venv"), lines[command]
    assert command + 1 <= 15, f"the first command is on line {command + 1}"


@pytest.mark.parametrize(
    "pattern, what",
    [(DATE, "a date"), (re.compile(r"\bVM\b"), "the VM"), (TEST_COUNT, "a test count"), (DURATION, "a duration")],
)
def test_nothing_dated_outside_the_sample_output(pattern, what):
    text = HYDRA_FOLDER.sub("<folder>", prose(readme_lines()))
    found = [m.group(0) for m in pattern.finditer(text)]
    assert not found, f"README.md names {what}: {found}"


@pytest.mark.parametrize(
    "text, pattern",
    [
        ("measured on 2026-12-06", DATE),
        ("as of December 2026", DATE),
        ("Dec 5, 2026", DATE),
        ("on the 2-core VM", re.compile(r"\bVM\b")),
        ("1,510 tests", TEST_COUNT),
        ("331 unit tests", TEST_COUNT),
        ("589 passed", TEST_COUNT),
        ("8.1 min from a fresh clone", DURATION),
        ("in about 28 s", DURATION),
        ("took 19 seconds", DURATION),
    ],
)
def test_the_checks_catch_what_the_old_readme_had(text, pattern):
    assert pattern.search(text)


def test_the_sample_output_is_left_to_its_own_test():
    lines = ["a", "<!-- output: x -->", "```text", "14.7 s on 2026-12-06", "```", "b"]
    assert prose(lines) == "a\n<!-- output: x -->\nb"
    assert not HYDRA_FOLDER.sub("", "outputs/run/2026-12-06_14-48-52/").count("2026")


def relative_links() -> list[str]:
    targets = [m.group(1) for m in LINK.finditer(README.read_text())]
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:|#", t)]


def test_every_relative_link_points_at_a_file():
    missing = [t for t in relative_links() if not (ROOT / t.split("#")[0]).exists()]
    assert relative_links() and not missing, f"README.md links to files that do not exist: {missing}"


def test_the_task_table_links_each_tasks_page():
    assert set(TASK_PAGES) <= set(relative_links()), set(TASK_PAGES) - set(relative_links())
