"""The results.csv row schema, atomic CSV writing, and reading/gathering job folders."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import pandas as pd

RESULTS_CSV = "results.csv"
SAMPLES_CSV = "samples.csv"
CALLS_CSV = "calls.csv"
PROCESSES_CSV = "processes.csv"
REPORT_DIR = "report"

IDENTITY = [
    "workload", "mode", "size", "dtype", "static_argnums",
    # param_<name> columns are inserted here, one per workload param
    "seed", "platform", "device_kind", "job_num", "overrides",
]
OUTCOME = ["status", "error_phase", "error_type", "error_message", "hint"]
STEADY = [
    "n_samples", "number", "median_s", "mean_s", "std_s", "min_s", "max_s",
    "p10_s", "p90_s", "iqr_s", "ci95_low_s", "ci95_high_s", "cv",
    "n_outliers", "unstable", "unstable_reason", "stop_reason", "rel_ci_halfwidth", "ci_target_met",
    "within_process_rel_spread",
]
SPREAD = [
    "n_processes", "ci_scope", "process_rel_spread", "process_median_min_s", "process_median_max_s",
    "isolate", "modes",
]
PAIRED = [
    "baseline_mode", "speedup", "speedup_ci_low", "speedup_ci_high", "verdict",
    "break_even_calls", "ahead_until_calls",
]
COMPILATION = [
    "first_call_s", "first_call_ci95_low_s", "first_call_ci95_high_s", "trace_s", "lower_s", "compile_s",
    "execute_s", "first_call_compiles", "compiles_during_timing", "dispatch_s",
]
WORK = [
    "flops", "transcendentals", "bytes_accessed", "gflops_per_s", "gbytes_per_s",
    "argument_size_bytes", "output_size_bytes", "temp_size_bytes",
    "alias_size_bytes", "generated_code_size_bytes", "peak_memory_bytes",
]
CHECKS = ["finite_output", "max_abs_err_vs_eager", "max_rel_err_vs_eager", "matches_eager"]
ENVIRONMENT = [
    "jax_version", "jaxlib_version", "python_version", "hostname", "cpu_model",
    "cpu_count", "load_avg_start", "load_avg_end", "x64", "cpu_async_dispatch",
    "xla_flags", "timestamp",
]
COLUMNS = IDENTITY + OUTCOME + STEADY + SPREAD + PAIRED + COMPILATION + WORK + CHECKS + ENVIRONMENT

SAMPLE_COLUMNS = ["job_num", "workload", "mode", "size", "process", "round", "number", "per_call_s"]
PROCESS_COLUMNS = [
    "job_num", "workload", "mode", "size", "process", "cold_position", "first_call_s", "trace_s", "lower_s",
    "compile_s", "execute_s", "first_call_compiles", "rounds", "number", "median_s",
    "compiles_during_timing", "stop_reason",
]
CALL_COLUMNS = ["job_num", "workload", "mode", "size", "call", "call_s", "compiles"]

BOOL_COLUMNS = ["unstable", "ci_target_met", "finite_output", "matches_eager", "x64", "cpu_async_dispatch"]
TEXT_COLUMNS = [
    "workload", "mode", "dtype", "static_argnums", "platform", "device_kind",
    "overrides", "status", "error_phase", "error_type", "error_message", "hint",
    "unstable_reason", "stop_reason", "ci_scope", "isolate", "modes", "baseline_mode", "verdict", "jax_version", "jaxlib_version", "python_version",
    "hostname", "cpu_model", "xla_flags", "timestamp",
]


def ordered_columns(names: Iterable[str]) -> list[str]:
    """The schema order for a set of column names; param_* after static_argnums, unknowns last."""
    names = list(dict.fromkeys(names))
    params = sorted(n for n in names if n.startswith("param_"))
    order = IDENTITY[:5] + params + IDENTITY[5:] + COLUMNS[len(IDENTITY):]
    return [c for c in order if c in names] + [c for c in names if c not in order]


def to_frame(rows: Sequence[Mapping], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Rows as a DataFrame with the given columns, by default every results.csv column in schema order."""
    frame = pd.DataFrame(list(rows))
    if columns is not None:
        return frame.reindex(columns=list(columns))
    return frame.reindex(columns=ordered_columns([*COLUMNS, *frame.columns]))


def write_atomic(path: str | os.PathLike, data: bytes) -> Path:
    """Write bytes via a temp file in the same folder and a rename, so a killed run leaves no half file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; results are meant to be shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_csv(data: pd.DataFrame | Sequence[Mapping], path: str | os.PathLike) -> Path:
    """Write a CSV atomically (see write_atomic)."""
    frame = data if isinstance(data, pd.DataFrame) else to_frame(data)
    return write_atomic(path, frame.to_csv(index=False).encode("utf-8"))


def job_result_files(root: str | os.PathLike) -> list[Path]:
    """Every job-level results.csv below root: not a gathered one (a folder with jobs below it), not report/."""
    root = Path(root)
    found = [p for p in root.rglob(RESULTS_CSV)
             if not any(part == REPORT_DIR or part.startswith(".") for part in p.relative_to(root).parts)]
    folders = {p.parent for p in found}
    jobs = [p for p in found if not any(f != p.parent and p.parent in f.parents for f in folders)]
    return sorted(jobs, key=_job_sort_key)


def _job_sort_key(path: Path) -> tuple:
    parts = path.parent.parts
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)


def read_csv(path: str | os.PathLike) -> pd.DataFrame:
    """Read one results-style CSV with jitexp's column types."""
    return typed(pd.read_csv(path, keep_default_na=True))


def typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Cast known columns: text as str (missing as NA), booleans as nullable bool, the rest numeric."""
    frame = frame.copy()
    for col in frame.columns:
        if col in TEXT_COLUMNS:
            frame[col] = frame[col].astype("string")
        elif col in BOOL_COLUMNS:
            frame[col] = frame[col].map(_to_bool).astype("boolean")
        elif col in COLUMNS or col in SAMPLE_COLUMNS or col in CALL_COLUMNS or col in PROCESS_COLUMNS:
            frame[col] = pd.to_numeric(frame[col], errors="coerce")
    return frame


def _to_bool(value):
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
        return pd.NA
    if value is None or (isinstance(value, float) and value != value):
        return pd.NA
    return bool(value)


def is_stale(root: str | os.PathLike) -> bool:
    """True when root has job folders and its gathered results.csv is missing, older than one of
    them, or holds a different number of rows (a job folder was added or deleted)."""
    root = Path(root)
    gathered = root / RESULTS_CSV
    jobs = job_result_files(root)
    if not jobs or gathered in jobs:
        return False
    if not gathered.exists():
        return True
    if gathered.stat().st_mtime_ns < max(p.stat().st_mtime_ns for p in jobs):
        return True
    return len(pd.read_csv(gathered)) != sum(len(pd.read_csv(p)) for p in jobs)


def gather(root: str | os.PathLike, *, write: bool = True) -> pd.DataFrame:
    """Concatenate every job's results.csv below root into one frame (and root/results.csv)."""
    root = Path(root)
    frames = [pd.read_csv(p) for p in job_result_files(root)]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return typed(pd.DataFrame(columns=COLUMNS))
    frame = pd.concat(frames, ignore_index=True, sort=False)
    frame = frame.reindex(columns=ordered_columns(frame.columns))
    if write:
        write_csv(frame, root / RESULTS_CSV)
    return typed(frame)


def load_results(path: str | os.PathLike) -> pd.DataFrame:
    """One row per case from a job dir, a sweep dir, any folder of job dirs, or a results.csv.

    A folder's gathered results.csv is rebuilt from the job folders below it when missing or
    stale, so an interrupted sweep still loads what finished.
    """
    path = Path(path)
    if path.is_file():
        return read_csv(path)
    if not path.is_dir():
        raise FileNotFoundError(f"no results at {path}: not a folder or a CSV file")
    if is_stale(path):
        return gather(path)
    if (path / RESULTS_CSV).exists():
        return read_csv(path / RESULTS_CSV)
    raise FileNotFoundError(f"no {RESULTS_CSV} in {path} or below it")


def write_job(result, folder: str | os.PathLike) -> None:
    """A job's files: results.csv always; samples.csv, processes.csv, calls.csv when they have rows."""
    folder = Path(folder)
    write_csv(to_frame(result.rows), folder / RESULTS_CSV)
    for rows, columns, name in ((result.samples, SAMPLE_COLUMNS, SAMPLES_CSV),
                                (result.processes, PROCESS_COLUMNS, PROCESSES_CSV),
                                (result.calls, CALL_COLUMNS, CALLS_CSV)):
        if rows:
            write_csv(to_frame(rows, columns), folder / name)
