"""The docs name every column a job writes and every config key, each exactly once (issue 19).

"Documented" means: in docs/results.md, a column name in backticks in the columns cell of its
table row, outside parentheses (text in parentheses explains, and may mention other columns);
in docs/configuration.md, a key in backticks as the first cell of a row of the key table
(`workload.params.*` for a mapping whose entries are the user's own).
"""

from __future__ import annotations

import dataclasses
import re
import typing
from collections import Counter
from pathlib import Path

import pytest

from jitexp.config import ExperimentConfig
from jitexp.store import schema

DOCS = Path(__file__).resolve().parents[2] / "docs"
STARRED = {"workload.params", "workload.checks"}  # mappings whose entries each workload declares: documented as KEY.*
GROUPS_NOT_IN_SCHEMA = {"experiment"}  # a group of presets, not a key of ExperimentConfig


def table_rows(text: str, header: str) -> list[list[str]]:
    """The cells of each row of the markdown table whose header line is `header`."""
    lines = text.splitlines()
    assert lines.count(header) == 1, f"one table headed {header!r}"
    rows = []
    for line in lines[lines.index(header) + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def top_level_code(cell: str) -> list[str]:
    """The backticked names of a cell outside parentheses (a parenthesis inside backticks does not count)."""
    names, depth, i = [], 0, 0
    while i < len(cell):
        if cell[i] == "`":
            end = cell.index("`", i + 1)
            if depth == 0:
                names.append(cell[i + 1 : end])
            i = end + 1
            continue
        depth += {"(": 1, ")": -1}.get(cell[i], 0)
        i += 1
    return names


def assert_exactly_once(documented: Counter, expected: list[str], where: str) -> None:
    missing = [name for name in expected if not documented[name]]
    doubled = sorted(name for name, n in documented.items() if n > 1)
    stale = sorted(set(documented) - set(expected))
    assert not (missing or doubled or stale), f"{where}: missing {missing}, twice {doubled}, not written {stale}"


def test_top_level_code_skips_parenthesised_mentions():
    assert top_level_code("`a` (see `b`, `(c)`), `d` (`e` (`f`))") == ["a", "d"]


def test_every_results_csv_column_is_documented_once():
    rows = table_rows((DOCS / "results.md").read_text(), "| group | columns |")
    documented = Counter(name for _, columns in rows for name in top_level_code(columns))
    assert_exactly_once(documented, [*schema.COLUMNS, *schema.OPTIONAL_COLUMNS, "param_<name>"], "results.csv")


@pytest.mark.parametrize(
    "name, columns",
    [
        ("samples.csv", schema.SAMPLE_COLUMNS),
        ("processes.csv", schema.PROCESS_COLUMNS),
        ("calls.csv", schema.CALL_COLUMNS),
        ("jobs.csv", schema.JOB_LIST_COLUMNS),
    ],
)
def test_every_column_of_the_other_csvs_is_documented_once(name, columns):
    rows = table_rows((DOCS / "results.md").read_text(), "| file | columns |")
    [cells] = [cells for cells in rows if top_level_code(cells[0]) == [name]]
    optional = [schema.VARIANT] if name in ("samples.csv", "processes.csv") else []  # a job with variants
    optional += [schema.ENV] if name != "jobs.csv" else []  # a job with envs
    assert_exactly_once(Counter(top_level_code(cells[1])), [*columns, *optional], name)


def schema_keys(schema: type = ExperimentConfig, prefix: str = "") -> list[str]:
    """Every key of the schema, dotted: a nested config's own name and each of its keys."""
    keys = []
    for f in dataclasses.fields(schema):
        key = prefix + f.name
        hint = typing.get_type_hints(schema)[f.name]
        keys.append(f"{key}.*" if key in STARRED else key)
        if dataclasses.is_dataclass(hint):
            keys.extend(schema_keys(hint, key + "."))
    return keys


def test_every_config_key_is_documented_once():
    rows = table_rows((DOCS / "configuration.md").read_text(), "| key | default | meaning |")
    documented = Counter(name for cells in rows for name in top_level_code(cells[0])[:1])
    assert all(len(top_level_code(cells[0])) == 1 for cells in rows), "one key per row"
    assert_exactly_once(documented, [*schema_keys(), *GROUPS_NOT_IN_SCHEMA], "docs/configuration.md")


def test_ci_runs_the_readmes_test_command():
    """.ci/run ends with the README's test command (in its `<!-- setup-commands -->` block), so CI's exit code is
    that command's."""
    root = DOCS.parent
    ci_last = (root / ".ci" / "run").read_text().strip().splitlines()[-1]
    text = (root / "README.md").read_text()
    block = re.search(r"<!-- setup-commands -->\n```bash\n(.*?)```", text, re.S)
    assert block, "README.md has a `<!-- setup-commands -->` bash block"
    [readme] = [
        line for line in block.group(1).splitlines() if line.startswith("python3 -m venv .venv") and "[test" in line
    ]
    assert readme.endswith(" && " + ci_last), (readme, ci_last)
    assert "-m serial" in ci_last and '-m "not serial"' in ci_last
