"""Where a run's code came from: the git commit of the user's code, so that runs can be put on one timeline.

Read by the driver, once per job, without importing the user's module: the module's file is looked up on the
search path, and git is asked about the repository that holds it (or the working directory when the module is
not in one). Outside git, or without git installed, the columns stay empty.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

CODE_COLUMNS = ["code_commit", "code_commit_date", "code_subject", "code_dirty", "code_repo"]


def module_file(module: str, search: Iterable[str]) -> Path | None:
    """The file of the dotted module, imported already or found on `search`; nothing is imported or run."""
    loaded = getattr(sys.modules.get(module), "__file__", None)
    if loaded:
        return Path(loaded)
    parts = module.split(".")
    for base in search:
        candidate = Path(base or ".").joinpath(*parts)
        for path in (candidate.with_suffix(".py"), candidate / "__init__.py"):
            if path.is_file():
                return path
    return None


def git_commit(directory: str | os.PathLike) -> dict:
    """The commit checked out in the repository holding `directory`: hash, committer date (ISO 8601), subject,
    whether tracked files differ from it, and the repository's folder; {} outside a repository with commits.

    Untracked files do not make it dirty: a run's own outputs/ in the repository would otherwise mark every
    later run.
    """

    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["git", "-C", str(directory), *args], capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL
        )

    try:
        log = git("log", "-1", "--format=%H%x00%cI%x00%s")
        if log.returncode or "\x00" not in log.stdout:
            return {}
        status = git("status", "--porcelain", "--untracked-files=no")
        top = git("rev-parse", "--show-toplevel")
    except (OSError, subprocess.SubprocessError):
        return {}
    commit, date, subject = log.stdout.rstrip("\n").split("\x00", 2)
    return {
        "code_commit": commit,
        "code_commit_date": date,
        "code_subject": subject,
        "code_dirty": bool(status.stdout.strip()) if status.returncode == 0 else None,
        "code_repo": top.stdout.strip() if top.returncode == 0 else None,
    }


def jitexp_version() -> str:
    """jitexp's own version (the package is loaded whenever one of its modules is)."""
    return str(sys.modules["jitexp"].__version__)


def code_provenance(functions: Sequence[str | None], cwd: str | os.PathLike | None = None) -> dict:
    """jitexp's version and the commit of the first of `functions` (import paths, `module.function`) whose
    module lives in a git repository, else of the working directory's repository (no code_ columns when neither
    is in one)."""
    return {"jitexp_version": jitexp_version(), **_code_commit(functions, Path(cwd or os.getcwd()))}


def _code_commit(functions: Sequence[str | None], cwd: Path) -> dict:
    search = [str(cwd), *sys.path]
    for path in functions:
        module = (path or "").rpartition(".")[0]
        found = module_file(module, search) if module else None
        info = git_commit(found.parent) if found is not None else {}
        if info:
            return info
    return git_commit(cwd)
