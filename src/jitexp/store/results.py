"""The results.csv row schema, atomic CSV writing, and reading/gathering job folders."""

from __future__ import annotations

import csv
import math
import os
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import pandas as pd

from jitexp.analysis.stats import CHANGE_METRICS
from jitexp.noise import PROBE_COLUMNS
from jitexp.records import COLD_FIELDS, NOISE_COLUMNS, JobResult

RESULTS_CSV = "results.csv"
SAMPLES_CSV = "samples.csv"
CALLS_CSV = "calls.csv"
PROCESSES_CSV = "processes.csv"
JOBS_CSV = "jobs.csv"
REPORT_DIR = "report"

IDENTITY = [
    "workload",
    "mode",
    "size",
    "inputs",
    "input_shapes",
    "dtype",
    "static_argnums",
    # param_<name> columns are inserted here, one per workload param
    "static_argnames",
    "jit_fn",
    "donate_argnums",
    "donate_argnames",
    "compiler_options",
    "seed",
    "platform",
    "device_kind",
    "job_num",
    "overrides",
    "config_hash",
]
OUTCOME = ["status", "error_phase", "error_type", "error_message", "hint"]
STEADY = [
    "n_samples",
    "number",
    "median_s",
    "mean_s",
    "std_s",
    "min_s",
    "max_s",
    "p10_s",
    "p90_s",
    "iqr_s",
    "ci95_low_s",
    "ci95_high_s",
    "cv",
    "n_outliers",
    "unstable",
    "unstable_reason",
    "stop_reason",
    "rel_ci_halfwidth",
    "ci_target_met",
    "within_process_rel_spread",
]
SPREAD = [
    "n_processes",
    "ci_scope",
    "process_rel_spread",
    "process_median_min_s",
    "process_median_max_s",
    "isolate",
    "modes",
    "measure_s",
]
NOISE = [
    "steal_median",
    "steal_max",
    "run_queue_wait_median",
    "n_steal_replaced",
    "kept_vs_all_processes",
    *PROBE_COLUMNS,
]
PAIRED = [
    "baseline_mode",
    "speedup",
    "speedup_ci_low",
    "speedup_ci_high",
    "verdict",
    "break_even_calls",
    "ahead_until_calls",
    "speedup_vs_numpy",
    "speedup_vs_numpy_ci_low",
    "speedup_vs_numpy_ci_high",
    "verdict_vs_numpy",
]
COMPILATION = [
    "setup_s",
    "first_call_s",
    "first_call_ci95_low_s",
    "first_call_ci95_high_s",
    "trace_s",
    "lower_s",
    "compile_s",
    "execute_s",
    "first_call_compiles",
    "compiles_during_timing",
    "dispatch_s",
]
ATTRIBUTION = [
    "explanation",
    "explanation_detail",
    "eager_ops",
    "xla_kernels",
    "xla_fusions",
    "jaxpr_eqns",
    "eager_bytes",
    "arithmetic_intensity",
    "op_dispatch_s",
    "attribution_error",
]
WORK = [
    "flops",
    "transcendentals",
    "bytes_accessed",
    "gflops_per_s",
    "gbytes_per_s",
    "argument_size_bytes",
    "output_size_bytes",
    "temp_size_bytes",
    "alias_size_bytes",
    "generated_code_size_bytes",
    "peak_memory_bytes",
    "peak_rss_growth_bytes",
    "device_peak_bytes",
]
DISK_CACHE = [
    "cache_hit",
    "cache_cold_first_call_s",
    "cache_warm_first_call_s",
    "cache_cold_compile_s",
    "cache_warm_compile_s",
    "cache_warm_trace_s",
    "cache_warm_lower_s",
]
CHECKS = [
    "donation",
    "finite_output",
    "max_abs_err_vs_eager",
    "max_rel_err_vs_eager",
    "matches_eager",
    "check_vs_eager",
    "max_abs_err_vs_numpy",
    "max_rel_err_vs_numpy",
    "matches_numpy",
    "check_vs_numpy",
]
ENVIRONMENT = [
    "jax_version",
    "jaxlib_version",
    "python_version",
    "hostname",
    "cpu_model",
    "cpu_count",
    "cpu_affinity",
    "blas_threads",
    "load_avg_start",
    "load_avg_end",
    "x64",
    "cpu_async_dispatch",
    "xla_flags",
    "timestamp",
]
COLUMNS = (
    IDENTITY
    + OUTCOME
    + STEADY
    + SPREAD
    + NOISE
    + PAIRED
    + COMPILATION
    + DISK_CACHE
    + ATTRIBUTION
    + WORK
    + CHECKS
    + ENVIRONMENT
)
# written only by a job with `variants` (like param_<name>): which variant a row is, after `mode`, and
# its paired change against the baseline variant's same mode, after the paired speedups
VARIANT = "variant"
ENV = "env"  # written only by a job with `envs`: the environment a row's processes ran in, after `variant`
AB = ["ab_baseline"] + [
    f"ab_{metric}_{part}"
    for metric in CHANGE_METRICS
    for part in ("ratio", "ratio_ci_low", "ratio_ci_high", "p_value", "verdict", "n_pairs")
]
OPTIONAL_COLUMNS = [VARIANT, ENV, *AB]

SAMPLE_COLUMNS = ["job_num", "workload", "mode", "size", "process", "round", "number", "per_call_s", "steal"]
PROCESS_COLUMNS = [
    "job_num",
    "workload",
    "mode",
    "size",
    "process",
    "cold_position",
    *COLD_FIELDS,
    "rounds",
    "number",
    "median_s",
    "compiles_during_timing",
    "stop_reason",
    "replaced",
    *NOISE_COLUMNS,
    *PROBE_COLUMNS,
]
JOB_LIST_COLUMNS = ["job_num", "overrides"]  # a sweep's jobs.csv
CALL_COLUMNS = [
    "job_num",
    "workload",
    "mode",
    "size",
    "probe",
    "call",
    "variant",
    "status",
    "call_s",
    "compiles",
    "compiled",
    "trace_s",
    "compile_s",
    "miss_reason",
    "hint",
    "error_phase",
    "error_type",
    "error_message",
]

INT_COLUMNS = [
    "size",
    "seed",
    "job_num",
    "n_samples",
    "number",
    "n_outliers",
    "n_processes",
    "first_call_compiles",
    "compiles_during_timing",
    "cpu_count",
    "process",
    "round",
    "cold_position",
    "rounds",
    "call",
    "compiles",
    "eager_ops",
    "xla_kernels",
    "xla_fusions",
    "jaxpr_eqns",
    "eager_bytes",
    "peak_rss_growth_bytes",
    "device_peak_bytes",
    "n_steal_replaced",
    "rounds_under_steal",
    "blas_threads",
    *(f"ab_{metric}_n_pairs" for metric in CHANGE_METRICS),
]
BOOL_COLUMNS = [
    "unstable",
    "replaced",
    "ci_target_met",
    "finite_output",
    "matches_eager",
    "matches_numpy",
    "compiled",
    "cache_hit",
    "x64",
    "cpu_async_dispatch",
]
TEXT_COLUMNS = [
    "workload",
    "mode",
    "dtype",
    "static_argnums",
    "static_argnames",
    "jit_fn",
    "env",
    "donate_argnums",
    "donate_argnames",
    "compiler_options",
    "donation",
    "attribution_error",
    "platform",
    "device_kind",
    "overrides",
    "status",
    "error_phase",
    "error_type",
    "error_message",
    "hint",
    "unstable_reason",
    "stop_reason",
    "ci_scope",
    "isolate",
    "modes",
    "baseline_mode",
    "verdict",
    "verdict_vs_numpy",
    "jax_version",
    "jaxlib_version",
    "python_version",
    "hostname",
    "cpu_model",
    "xla_flags",
    "timestamp",
    "cpu_affinity",
    "config_hash",
    "explanation",
    "explanation_detail",
    "probe",
    "variant",
    "miss_reason",
    "ab_baseline",
    *(f"ab_{metric}_verdict" for metric in CHANGE_METRICS),
]


KNOWN_NUMERIC = (
    (set(COLUMNS) | set(OPTIONAL_COLUMNS) | set(SAMPLE_COLUMNS) | set(CALL_COLUMNS) | set(PROCESS_COLUMNS))
    - set(TEXT_COLUMNS)
    - set(BOOL_COLUMNS)
)


def ordered_columns(names: Iterable[str]) -> list[str]:
    """The schema order for a set of column names; param_* after static_argnums, unknowns last."""
    names = list(dict.fromkeys(names))
    params = sorted(n for n in names if n.startswith("param_"))
    rest = COLUMNS[len(IDENTITY) :]
    after_paired = rest.index(PAIRED[-1]) + 1
    order = (
        IDENTITY[:2]
        + [VARIANT, ENV]
        + IDENTITY[2 : IDENTITY.index("static_argnums") + 1]
        + params
        + IDENTITY[IDENTITY.index("static_argnums") + 1 :]
        + rest[:after_paired]
        + AB
        + rest[after_paired:]
    )
    return [c for c in order if c in names] + [c for c in names if c not in order]


def to_frame(rows: Sequence[Mapping], columns: Sequence[str] | None = None) -> pd.DataFrame:
    """Rows as a DataFrame with the given columns, by default every results.csv column in schema order."""
    frame = pd.DataFrame(list(rows))
    if columns is not None:
        frame = frame.reindex(columns=list(columns))
    else:
        frame = frame.reindex(columns=ordered_columns([*COLUMNS, *frame.columns]))
    for col in INT_COLUMNS:  # an integer column with a missing cell must not become 20.0
        if (
            col in frame.columns
            and pd.api.types.is_numeric_dtype(frame[col])
            and not pd.api.types.is_bool_dtype(frame[col])
        ):
            values = frame[col].dropna()
            if len(values) and (values == values.round()).all():
                frame[col] = frame[col].astype("Int64")
    return frame


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
    return write_atomic(path, _csv_bytes(frame))


def _csv_bytes(frame: pd.DataFrame) -> bytes:
    # Text quoted (a lone carriage return in a message would otherwise split a row), "\n" line ends.
    return frame.to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n").encode("utf-8")


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


def read_text(path: str | os.PathLike) -> pd.DataFrame:
    """A CSV exactly as written: every cell a string, nothing turned into NA ("NA", "007" stay)."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)


def read_csv(path: str | os.PathLike) -> pd.DataFrame:
    """Read one results-style CSV with jitexp's column types."""
    return typed(read_text(path))


_INT = re.compile(r"^-?\d+$")


def typed(frame: pd.DataFrame) -> pd.DataFrame:
    """Types for a frame of CSV text; an empty cell is missing.

    Known text columns stay text, booleans become nullable booleans, known numeric columns
    numbers (nullable integers when every cell is an integer). Other columns (param_<name>)
    become numbers or booleans only when every cell reads back exactly as written, so a
    param "007" stays "007".
    """
    frame = frame.copy()
    for col in frame.columns:
        values = frame[col]
        if values.dtype != object and not pd.api.types.is_string_dtype(values):
            continue  # already typed (rows built in memory)
        text = values.astype("string").replace("", pd.NA)
        filled = text.dropna()
        if col in TEXT_COLUMNS:
            frame[col] = text
        elif col in BOOL_COLUMNS:
            frame[col] = text.map(_to_bool, na_action="ignore").astype("boolean")
        elif col in KNOWN_NUMERIC:
            frame[col] = _number(text, filled)
        elif len(filled) and filled.map(_int_round_trips).all():
            frame[col] = text.astype("Int64")
        elif len(filled) and filled.map(_float_round_trips).all():
            frame[col] = pd.to_numeric(text).astype(float)
        elif len(filled) and filled.isin(["True", "False"]).all():
            frame[col] = text.map(_to_bool, na_action="ignore").astype("boolean")
        else:
            frame[col] = text
    return frame


def _number(text: pd.Series, filled: pd.Series) -> pd.Series:
    if len(filled) and filled.str.match(_INT).all():
        return text.astype("Int64")
    return pd.to_numeric(text, errors="coerce").astype(float)


def _int_round_trips(value: str) -> bool:
    return bool(_INT.match(value)) and str(int(value)) == value  # "007" and "-0" stay text


def _float_round_trips(value: str) -> bool:
    try:
        number = float(value)
    except ValueError:
        return False
    return math.isfinite(number) and repr(number) == value  # jitexp writes NaN as an empty cell: "nan" is text


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


RUN_CONTROL = ("resume=", "fail_on_error=", "+resume=", "+fail_on_error=")


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


def _gathered(root: Path) -> tuple[pd.DataFrame, SweepState]:
    """Every job's rows below root as text, the job list's stale folders left out."""
    manifest = read_manifest(root)
    state = SweepState(n_jobs=len(manifest) if manifest is not None else None)
    frames = []
    for job in iter_jobs(root):
        frame = job.read(RESULTS_CSV, text=True)
        if manifest is not None:
            folder = job.path.relative_to(root).as_posix()
            num = int(folder) if folder.isdigit() else _job_num(frame)  # hydra.sweep.subdir may be any name
            if num not in manifest or not (frame.get("overrides", pd.Series([""])) == manifest[num]).all():
                state.stale.append(folder)
                continue
            state.finished.append(num)
        if not frame.empty:
            frames.append(frame)
    if manifest is not None:
        state.missing = [(n, o) for n, o in manifest.items() if n not in state.finished]
    if not frames:
        return pd.DataFrame(columns=COLUMNS, dtype=str), state
    frame = pd.concat(frames, ignore_index=True, sort=False).fillna("")
    return frame.reindex(columns=ordered_columns(frame.columns), fill_value=""), state


def _job_num(frame: pd.DataFrame) -> int | None:
    nums = set(frame.get("job_num", pd.Series(dtype=str)))
    return int(nums.pop()) if len(nums) == 1 and all(n.isdigit() for n in nums) else None


def gather(root: str | os.PathLike, *, write: bool = True) -> pd.DataFrame:
    """Every job's rows below root in one frame (and root/results.csv), cell for cell as the jobs wrote them."""
    frame, _ = gather_state(root, write=write)
    return frame


def gather_state(root: str | os.PathLike, *, write: bool = True) -> tuple[pd.DataFrame, SweepState]:
    """gather() and the sweep's state: how many jobs, which never finished, which folders were left out."""
    root = Path(root)
    frame, state = _gathered(root)
    if write and (not frame.empty or state.n_jobs is not None):
        data = _csv_bytes(frame)
        target = root / RESULTS_CSV
        if not target.is_file() or target.read_bytes() != data:
            write_atomic(target, data)
    return typed(frame), state


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
    jobs = job_result_files(path)
    if jobs and jobs != [path / RESULTS_CSV]:
        return gather(path)
    if (path / RESULTS_CSV).exists():
        return read_csv(path / RESULTS_CSV)
    raise FileNotFoundError(f"no {RESULTS_CSV} in {path} or below it")


JOB_FILES = (RESULTS_CSV, SAMPLES_CSV, PROCESSES_CSV, CALLS_CSV)


def clear_job(folder: str | os.PathLike) -> None:
    """Remove the CSVs an earlier run left in a job folder, so they cannot pass for this run's."""
    for name in JOB_FILES:
        (Path(folder) / name).unlink(missing_ok=True)


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
    if not ((frame.get("overrides") == overrides).all() and (frame.get("job_num") == str(job_num)).all()):
        frame["overrides"], frame["job_num"] = overrides, str(job_num)
        write_atomic(path, _csv_bytes(frame))
    return True


def with_variant(columns: Sequence[str], rows: Sequence[Mapping]) -> list[str]:
    """A long file's columns, with `variant` (a job with variants) or `env` (with envs) after `mode` when its rows carry one."""
    columns = list(columns)
    extra = [c for c in (VARIANT, ENV) if c not in columns and any(c in row for row in rows)]
    return [*columns[: columns.index("mode") + 1], *extra, *columns[columns.index("mode") + 1 :]]


def write_job(result: JobResult, folder: str | os.PathLike) -> None:
    """A job's files: results.csv always; samples.csv, processes.csv, calls.csv when they have rows."""
    folder = Path(folder)
    for rows, columns, name in (
        (result.samples, SAMPLE_COLUMNS, SAMPLES_CSV),
        (result.processes, PROCESS_COLUMNS, PROCESSES_CSV),
        (result.calls, CALL_COLUMNS, CALLS_CSV),
    ):
        if rows:
            write_csv(to_frame(rows, with_variant(columns, rows)), folder / name)
    write_csv(to_frame(result.rows), folder / RESULTS_CSV)  # last: its presence marks the job complete
