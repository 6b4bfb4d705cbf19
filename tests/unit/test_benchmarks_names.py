"""benchmarks/ never hides a standard module (issue 57, item 7), and a failed process says why in one line.

Each script in benchmarks/ puts that folder on sys.path (Python does so for the script's own folder), and the workers
it starts inherit it: benchmarks/profile.py hid the standard library's `profile`, which cProfile imports, so importing
flax in a worker failed ("module 'profile' has no attribute 'run'") and accuracy.py printed "jitexp process 0: None".
"""

from __future__ import annotations

import sys
from pathlib import Path

from jitexp.errors import Failure
from jitexp.records import ConfigProblem, ProcessResult

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def module_name(path: Path) -> str | None:
    """The module name an import would find `path` under from its folder: a .py file's stem, a package's folder."""
    if path.is_file() and path.suffix == ".py":
        return path.stem
    if path.is_dir() and (path / "__init__.py").exists():
        return path.name
    return None


def shadowing(folder: Path) -> list[str]:
    """The files and packages in `folder` named like a standard-library module."""
    return sorted(
        p.name for p in folder.iterdir() if (name := module_name(p)) is not None and name in sys.stdlib_module_names
    )


def test_no_benchmark_is_named_like_a_standard_module():
    assert BENCHMARKS.is_dir()
    assert shadowing(BENCHMARKS) == [], "rename these (git mv): they hide the standard module of their name"


def test_the_check_finds_a_standard_name(tmp_path):
    (tmp_path / "profile.py").write_text("")
    (tmp_path / "profile_job.py").write_text("")
    (tmp_path / "json").mkdir()
    (tmp_path / "json" / "__init__.py").write_text("")
    (tmp_path / "random.txt").write_text("")  # not importable: no hiding
    assert shadowing(tmp_path) == ["json", "profile.py"]


def test_failure_line_of_a_config_error():
    problem = ConfigProblem(
        "workload.fn",
        "jitexp.workloads.models",
        "importing 'jitexp.workloads.models' failed: AttributeError: module 'profile' has no attribute 'run'",
    )
    result = ProcessResult(0, config_error=problem)
    assert result.failed
    assert result.failure_line() == (
        "workload.fn='jitexp.workloads.models' is invalid; importing 'jitexp.workloads.models' failed: "
        "AttributeError: module 'profile' has no attribute 'run'"
    )


def test_failure_line_of_a_failure_and_of_none():
    failure = Failure("open", "RuntimeError", "The TPU is already in use by process with pid 7", "wait for it")
    assert ProcessResult(0, error=failure).failure_line() == (
        "open: RuntimeError: The TPU is already in use by process with pid 7 (hint: wait for it)"
    )
    assert ProcessResult(0, error=Failure("execute", "ValueError", "bad", "")).failure_line() == (
        "execute: ValueError: bad"
    )
    assert ProcessResult(0).failure_line() is None
