"""Job folders and sweeps: the file names, writing a job's files, resuming, the job list, gathering and loading."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd

from jitexp.records import INTERRUPTED, JobResult
from jitexp.store.csvio import (
    csv_bytes,
    read_cells,
    read_csv,
    read_text,
    text_frame,
    to_frame,
    typed,
    write_atomic,
    write_csv,
)
from jitexp.store.schema import (
    CALL_COLUMNS,
    COLUMNS,
    JOB_LIST_COLUMNS,
    PROCESS_COLUMNS,
    PROFILE_COLUMNS,
    SAMPLE_COLUMNS,
    ordered_columns,
    with_variant,
)

RESULTS_CSV = "results.csv"
SAMPLES_CSV = "samples.csv"
CALLS_CSV = "calls.csv"
PROFILE_CSV = "profile.csv"  # profile=true: per compiled mode, its profiled events; the traces under profile/<mode>/
PROCESSES_CSV = "processes.csv"
JOBS_CSV = "jobs.csv"
REPORT_DIR = "report"


def job_result_files(root: str | os.PathLike, name: str = RESULTS_CSV) -> list[Path]:
    """Every job-level results.csv (or other job file name) below root: not a gathered one (a folder with
    jobs below it), not in report/ or a hidden folder."""
    root = Path(root)
    found = [
        p
        for p in root.rglob(name)
        if not any(part == REPORT_DIR or part.startswith(".") for part in p.relative_to(root).parts)
    ]
    folders = {p.parent for p in found}
    jobs = [p for p in found if not any(f != p.parent and p.parent in f.parents for f in folders)]
    return sorted(jobs, key=_job_sort_key)


@dataclass
class JobFolder:
    """One job's folder; each of its CSVs is read when first asked for (typed; an empty frame when absent)."""

    path: Path

    def read(self, name: str, *, text: bool = False) -> pd.DataFrame:
        """The job's CSV called name, typed (or every cell as written with text=True); empty when absent."""
        file = self.path / name
        if not file.is_file():
            return pd.DataFrame()
        return read_text(file) if text else read_csv(file)

    @cached_property
    def results(self) -> pd.DataFrame:
        """results.csv: one row per case and mode."""
        return self.read(RESULTS_CSV)

    @cached_property
    def samples(self) -> pd.DataFrame:
        """samples.csv: every timed sample."""
        return self.read(SAMPLES_CSV)

    @cached_property
    def processes(self) -> pd.DataFrame:
        """processes.csv: one row per worker process and mode."""
        return self.read(PROCESSES_CSV)

    @cached_property
    def calls(self) -> pd.DataFrame:
        """calls.csv: per-call records of the call probes."""
        return self.read(CALLS_CSV)


def iter_jobs(root: str | os.PathLike, marker: str = RESULTS_CSV) -> Iterator[JobFolder]:
    """The job folders below root (or root itself when it is one), in job order: folders holding marker."""
    for path in job_result_files(root, marker):
        yield JobFolder(path.parent)


def _job_sort_key(path: Path) -> tuple:
    parts = path.parent.parts
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)


# ---- sweeps: the job list, what finished, the gathered file ---------------------------------


@dataclass
class SweepState:
    """What a sweep folder holds against its job list (jobs.csv, written when the sweep starts)."""

    n_jobs: int | None  # None: no job list (not a sweep, or another sweeper)
    finished: list[int] = field(default_factory=list)
    missing: list[tuple[int, str]] = field(default_factory=list)  # (job num, overrides) without rows
    stale: list[str] = field(default_factory=list)  # folders left out: not jobs of this sweep

    def describe(self, n_rows: int) -> str:
        """`12 jobs: 9 rows, 3 never finished: #5 workload.fn=faults.abort, ...`"""
        if self.n_jobs is None:
            return f"{n_rows} row(s)"
        text = f"{self.n_jobs} job{'s' if self.n_jobs != 1 else ''}: {n_rows} row{'s' if n_rows != 1 else ''}"
        if self.missing:
            shown = ", ".join(f"#{num} {ov}".rstrip() for num, ov in self.missing[:8])
            more = f", ... ({len(self.missing) - 8} more)" if len(self.missing) > 8 else ""
            text += f", {len(self.missing)} never finished: {shown}{more}"
        if self.stale:
            text += f"; left out (not jobs of this sweep): {', '.join(self.stale)}"
        return text


RUN_CONTROL = ("resume=", "fail_on_error=", "overwrite=", "+resume=", "+fail_on_error=", "+overwrite=")


def job_overrides(overrides: Sequence[str]) -> str:
    """A job's overrides as one string, without the keys that steer a run but do not change a job."""
    return " ".join(o for o in overrides if not o.startswith(RUN_CONTROL))


def write_manifest(root: str | os.PathLike, jobs: Sequence[Sequence[str]]) -> Path:
    """jobs.csv: every job of the sweep in order, with its overrides, before any job runs."""
    rows = [{"job_num": i, "overrides": job_overrides(job)} for i, job in enumerate(jobs)]
    return write_csv(pd.DataFrame(rows, columns=JOB_LIST_COLUMNS), Path(root) / JOBS_CSV)


def read_manifest(root: str | os.PathLike) -> dict[int, str] | None:
    path = Path(root) / JOBS_CSV
    if not path.is_file():
        return None
    frame = read_text(path)
    return {int(n): o for n, o in zip(frame["job_num"], frame["overrides"])}


def _gathered_cells(root: Path) -> tuple[list[str], list[list], SweepState]:
    """Every job's rows below root as text, the job list's stale folders left out: the header and each column's cells
    ("" where a job lacks the column; columns in schema order, as pandas' concat and reindex put them), and the
    sweep's state; no header when no job has a row. Cells, not a frame per job joined by concat: each of those cost
    ~1 ms per ~160 columns."""
    manifest = read_manifest(root)
    state = SweepState(n_jobs=len(manifest) if manifest is not None else None)
    jobs: list[tuple[dict[str, list], int]] = []
    for job in iter_jobs(root):
        file = job.path / RESULTS_CSV
        header, columns = read_cells(file) if file.is_file() else ([], [])  # gone since listed: no rows
        by_name = dict(zip(header, columns))
        n = len(columns[0]) if columns else 0
        if manifest is not None:
            folder = job.path.relative_to(root).as_posix()
            num = int(folder) if folder.isdigit() else _job_num(by_name.get("job_num", []))  # subdir: any name
            if num not in manifest or not all(o == manifest[num] for o in by_name.get("overrides", [""])):
                state.stale.append(folder)
                continue
            state.finished.append(num)
        if n and header:
            jobs.append((by_name, n))
    if manifest is not None:
        state.missing = [(n, o) for n, o in manifest.items() if n not in state.finished]
    names = ordered_columns(name for by_name, _ in jobs for name in by_name)
    return names, [[cell for by_name, n in jobs for cell in by_name.get(c, [""] * n)] for c in names], state


def _job_num(cells: Iterable[str]) -> int | None:
    """The job number a job folder's job_num cells (text) agree on, None where they do not or have none."""
    nums = set(cells)
    return int(nums.pop()) if len(nums) == 1 and all(n.isdigit() for n in nums) else None


def gather(root: str | os.PathLike, *, write: bool = True) -> pd.DataFrame:
    """Every job's rows below root in one frame (and root/results.csv), cell for cell as the jobs wrote them."""
    frame, _ = gather_state(root, write=write)
    return frame


def gather_state(root: str | os.PathLike, *, write: bool = True) -> tuple[pd.DataFrame, SweepState]:
    """gather() and the sweep's state: how many jobs, which never finished, which folders were left out."""
    root = Path(root)
    columns, cells, state = _gathered_cells(root)
    frame = text_frame(columns, cells) if columns else pd.DataFrame(columns=COLUMNS, dtype=str)
    if write and (not frame.empty or state.n_jobs is not None):
        data = csv_bytes(frame)
        target = root / RESULTS_CSV
        if not target.is_file() or target.read_bytes() != data:
            write_atomic(target, data)
    return (typed(frame, cells) if columns else typed(frame)), state


def load_results(path: str | os.PathLike) -> pd.DataFrame:
    """One row per case and mode from a job dir, a sweep dir, any folder of job dirs, or a results.csv.

    A folder with job folders below it is gathered afresh (and its results.csv rewritten when
    that changes it), so an interrupted sweep still loads what finished; rows of folders that
    are not jobs of the sweep's job list are left out.
    """
    path = Path(path)
    if path.is_file():
        return read_csv(path)
    if not path.is_dir():
        raise FileNotFoundError(f"no results at {path}: not a folder or a CSV file")
    if _has_jobs_below(path):
        return gather(path)
    if (path / RESULTS_CSV).exists():
        return read_csv(path / RESULTS_CSV)
    raise FileNotFoundError(f"no {RESULTS_CSV} in {path} or below it")


def load_results_state(path: str | os.PathLike) -> tuple[pd.DataFrame, SweepState | None]:
    """load_results(path) and the folder's SweepState (None for a file): a sweep's job CSVs are read once for both."""
    path = Path(path)
    if path.is_dir() and _has_jobs_below(path):
        return gather_state(path)
    # the state alone: the rows are not gathered into a frame nor typed again
    return load_results(path), _gathered_cells(path)[2] if path.is_dir() else None


def _has_jobs_below(path: Path) -> bool:
    """path holds job folders (a sweep, or any folder of jobs), not just a job's own results.csv."""
    jobs = job_result_files(path)
    return bool(jobs) and jobs != [path / RESULTS_CSV]


JOB_FILES = (RESULTS_CSV, SAMPLES_CSV, PROCESSES_CSV, CALLS_CSV, PROFILE_CSV)


def held_results(folder: str | os.PathLike) -> list[str]:
    """The result files an earlier run left in a job or sweep folder (its results.csv, jobs.csv, samples.csv, the
    other job files, and each job folder's results.csv directly below it), as names relative to the folder; empty when there are none."""
    root = Path(folder)
    if not root.is_dir():
        return []
    names = (RESULTS_CSV, JOBS_CSV, SAMPLES_CSV, PROCESSES_CSV, CALLS_CSV, PROFILE_CSV)
    held = [name for name in names if (root / name).is_file()]
    below = sorted((p for p in root.glob(f"*/{RESULTS_CSV}") if not p.parent.name.startswith(".")), key=_job_sort_key)
    return held + [str(p.relative_to(root)) for p in below]


def resume_conflict(
    folder: str | os.PathLike, digests: Sequence[str | None], points: Sequence[str], *, sweep: bool
) -> str:
    """What resume=true into folder would lose, as the reason of a refusal ("" when nothing): a job folder whose rows
    are of another config (config_hash) than the job of its number about to run (digests[num]; None: cannot tell
    before the job runs), or, in a sweep, rows of a job number the new sweep does not have. `points`: each new job's
    overrides, for the message."""
    root = Path(folder)
    if not root.is_dir():
        return ""
    files = job_result_files(root)
    if sweep:
        files = [p for p in files if p.parent != root]
    what = "hydra.sweep.dir" if sweep else "hydra.run.dir"
    for path in files:
        frame = read_text(path)
        if frame.empty:
            continue
        name = path.parent.relative_to(root).as_posix()
        num = 0 if not sweep else int(name) if name.isdigit() else _job_num(frame.get("job_num", []))
        if num is None:
            continue
        old = str(frame["overrides"].iloc[0]) if "overrides" in frame.columns else ""
        if num >= len(digests):
            return (
                f"resume=true, but it holds job #{num} ({old or 'no overrides'}), which this sweep of {len(digests)} "
                f"job{'s' if len(digests) != 1 else ''} does not have: its rows would be left out; resume the sweep "
                f"that made it, write overwrite=true to replace it, or another {what}"
            )
        digest = digests[num]
        hashes = set(frame["config_hash"]) if "config_hash" in frame.columns else {""}
        if digest is None or hashes == {digest}:
            continue
        there, here = _differing(old, job_overrides(points[num].split(" ")))
        if hashes == {""}:  # written by hand, or by a jitexp before config_hash: which config is not known
            there = f"{old or 'no overrides'}, with no config_hash to compare"
        if not sweep:
            return (
                f"resume=true, but it holds the rows of another config ({there}, where this run has {here}): this "
                f"run would replace them; resume with that config, write overwrite=true to replace them, or another "
                f"{what}"
            )
        return (
            f"resume=true, but its job #{num} is another config ({there}, where this sweep's #{num} has {here}): "
            f"resuming would replace its rows; resume the sweep that made it (more points may follow its last), "
            f"write overwrite=true to replace it, or another {what}"
        )
    return ""


def _differing(old: str, new: str) -> tuple[str, str]:
    """The overrides of two jobs that differ, as `size=64` and `size=256` (each side whole when none differ: a config
    file or a default changed between them)."""
    a, b = old.split(), new.split()
    there, here = [o for o in a if o not in b], [o for o in b if o not in a]
    if not there and not here:
        same = old or "no overrides"
        return f"{same}: the same overrides, so a config file or a default changed", "today's"
    return " ".join(there) or "no " + " ".join(here), " ".join(here) or "none of them"


def claim_folder(path: str | os.PathLike) -> Path:
    """A run's folder made now, by this process alone: path, or path_2, path_3, ... when another run made it first
    (two jitexp started in the same second share a clock-named folder). mkdir without exist_ok is the claim: of two
    processes making one folder, one gets FileExistsError."""
    base = Path(path)
    for n in range(1, 10_000):
        candidate = base if n == 1 else base.with_name(f"{base.name}_{n}")
        try:
            candidate.mkdir(parents=True)
            return candidate
        except FileExistsError:
            continue
    raise FileExistsError(f"{base} and 9,999 folders named after it exist already")


def clear_results(folder: str | os.PathLike) -> list[str]:
    """overwrite=true: remove the result files an earlier run left in a run or sweep folder (its own, the job list,
    each job folder's below it), so that no command reads them as this run's; the names removed, relative."""
    root = Path(folder)
    removed = held_results(root)
    if not root.is_dir():
        return []
    for job in {p.parent for p in job_result_files(root)} | {root}:
        clear_job(job)
    (root / JOBS_CSV).unlink(missing_ok=True)
    return removed


def clear_job(folder: str | os.PathLike) -> None:
    """Remove the CSVs (and traces) an earlier run left in a job folder, so they cannot pass for this run's."""
    for name in JOB_FILES:
        (Path(folder) / name).unlink(missing_ok=True)
    shutil.rmtree(Path(folder) / "profile", ignore_errors=True)


def is_complete(folder: str | os.PathLike, digest: str, job_num: int, overrides: str) -> bool:
    """Whether a job folder holds rows of a job with this config hash (resume skips it then).

    The rows are relabelled with this sweep's job number and overrides, which may be spelled
    differently for the same config (another order, a default written out).
    """
    path = Path(folder) / RESULTS_CSV
    if not path.is_file():
        return False
    frame = read_text(path)
    if not (len(frame) > 0 and "config_hash" in frame.columns and (frame["config_hash"] == digest).all()):
        return False
    if (frame.get("stop_reason", pd.Series(dtype=str)) == INTERRUPTED).any():
        return False  # Ctrl-C kept the processes that had finished: the job itself is not complete
    if not ((frame.get("overrides") == overrides).all() and (frame.get("job_num") == str(job_num)).all()):
        frame["overrides"], frame["job_num"] = overrides, str(job_num)
        write_atomic(path, csv_bytes(frame))
    return True


def write_job(result: JobResult, folder: str | os.PathLike) -> None:
    """A job's files: results.csv always; samples.csv, processes.csv, calls.csv, profile.csv when they have rows; the
    traces (profile/<mode>/...)."""
    folder = Path(folder)
    for rows, columns, name in (
        (result.samples, SAMPLE_COLUMNS, SAMPLES_CSV),
        (result.processes, PROCESS_COLUMNS, PROCESSES_CSV),
        (result.calls, CALL_COLUMNS, CALLS_CSV),
        (result.profile, PROFILE_COLUMNS, PROFILE_CSV),
    ):
        if rows:
            write_csv(to_frame(rows, with_variant(columns, rows)), folder / name)
    for name, data in result.files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / name, data)
    write_csv(to_frame(result.rows), folder / RESULTS_CSV)  # last: its presence marks the job complete
