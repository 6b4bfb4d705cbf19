"""The files a jitexp command wrote into an output folder (jitexp-report's, jitexp-compare's, jitexp-history's), so
that it replaces its own files there on the next run and never a user's file of the same name without a word.

The folder's `.jitexp-written` lists, one a line, each file a jitexp command wrote in it. A file about to be written
or removed that exists and is not listed is refused (`foreign`), except in a folder that has no list yet and is the
command's own default place (a run's report/, NEW/compare/, ./history/): jitexp wrote those before the list existed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from jitexp.store.csvio import write_atomic

MARK = ".jitexp-written"


class NotOurs(FileExistsError):
    """Files in an output folder that no jitexp command wrote: the command refuses to replace them."""


def written(folder: str | os.PathLike) -> set[str] | None:
    """The names jitexp commands wrote in folder (None: no list there)."""
    path = Path(folder) / MARK
    if not path.is_file():
        return None
    return {line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}


def foreign(folder: str | os.PathLike, names: Iterable[str], *, default: bool = False) -> list[str]:
    """Of the files names (relative to folder) a command is about to write or remove, those that exist there and that
    no jitexp command wrote. default: the command's own default folder, whose files without a list are jitexp's."""
    ours = written(folder)
    if ours is None and default:
        return []
    ours = ours or set()
    return sorted(n for n in set(names) if (Path(folder) / n).is_file() and n not in ours)


def refuse_foreign(folder: str | os.PathLike, names: Iterable[str], command: str, *, default: bool = False) -> None:
    """Raise NotOurs naming the files of `foreign` (one line, what to do), if any."""
    found = foreign(folder, names, default=default)
    if found:
        shown = ", ".join(found[:4]) + (f", ... ({len(found) - 4} more)" if len(found) > 4 else "")
        raise NotOurs(
            f"{folder} holds {shown}, which {command} did not write and would replace; choose another --out, or move "
            "them away"
        )


def record(folder: str | os.PathLike, names: Iterable[str]) -> None:
    """Add names (relative to folder) to the folder's list of files jitexp wrote."""
    known = written(folder) or set()
    new = known | {str(n) for n in names}
    if new != known:
        write_atomic(Path(folder) / MARK, ("\n".join(sorted(new)) + "\n").encode("utf-8"))
