"""Two runs or sweeps side by side for jitexp-compare: each loaded (rows, per-process values, host probes),
their cases matched on the identity columns both have, what differs between them, and the comparison's columns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis.stats import CHANGE_METRICS
from jitexp.noise import PROBE_COLUMNS
from jitexp.report.shared.cases import MACHINE, case_columns
from jitexp.report.shared.memory import MEASURED
from jitexp.store.csvio import BadCsv
from jitexp.store.folders import PROCESSES_CSV, RESULTS_CSV, iter_jobs
from jitexp.store.schema import JIT_KNOBS, MESH_COLUMNS, SETUP_COLUMNS

RATIO = "NEW/BASE (95% CI)"  # jitexp-compare's one direction (issue 50): time NEW over BASE, above 1 slower
DIRECTION = "NEW/BASE: NEW's time over BASE's, above 1 NEW is slower"


def new_over_base(ratio: object, lo: object = None, hi: object = None) -> str:
    """NEW/BASE in jitexp-compare's one direction: ``1.79 (1.02-3.2)``, ``1.02 (1.0004-1.03)``, ``0.926`` where the CI is missing or open
    (0 to inf: too few processes for one); ``-`` without a ratio."""
    from jitexp.analysis.formatting.phrases import bound_digits
    from jitexp.analysis.formatting.values import is_missing, three_digits

    if is_missing(ratio) or not 0 < float(ratio) < float("inf"):  # type: ignore[arg-type]
        return "-"
    bounds = [float(v) for v in (lo, hi) if not is_missing(v)]  # type: ignore[arg-type]
    text = three_digits(float(ratio))  # type: ignore[arg-type]
    if len(bounds) == 2 and bounds[0] > 0 and bounds[1] < float("inf"):
        text += f" ({bound_digits(bounds[0])}-{bound_digits(bounds[1])})"  # a bound never reads 1 unless it is
    return text


COLUMNS = [
    "metric",
    "base_s",
    "new_s",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "p_value",
    "verdict",
    "n_base",
    "n_new",
]
BYTES = ["base_bytes", "new_bytes"]  # a memory metric's values (report/shared/memory.py); base_s, new_s are times
# steady-state rows: the host probe matching the case's work, its NEW/BASE over processes; every row: a note
HOST_COLUMNS = ["host_probe", "host_ratio", "host_ratio_ci_low", "host_ratio_ci_high"]
NOTE = "note"


@dataclass
class Side:
    """One run: its ok rows (with a `_job` folder key), per-process values per row, its error rows and host probes."""

    rows: pd.DataFrame
    values: dict[
        tuple[str, str, str, str], dict[str, list]
    ]  # (job folder, variant or "", env or "", mode) -> metric or probe column -> values per process (steady: arrays)
    errors: pd.DataFrame = field(default_factory=pd.DataFrame)  # rows whose status is not ok (with `_job`)
    probes: dict[str, list[float]] = field(default_factory=dict)  # probe column -> one value per process of the run

    @property
    def every_row(self) -> pd.DataFrame:
        """ok and error rows together (where the environment is read from)."""
        return pd.concat([self.rows, self.errors], ignore_index=True) if len(self.errors) else self.rows


def load_side(path: str | Path) -> Side:
    """Rows and per-process samples of a run or sweep folder (or a results.csv beside its job folders)."""
    path = Path(path)
    root = path.parent if path.is_file() else path
    if not root.is_dir():
        raise FileNotFoundError(f"no results at {path}")
    frames, failed, values = [], [], {}
    probes: dict[str, list[float]] = {}
    for job in iter_jobs(root):
        rows = job.results.assign(_job=str(job.path))
        if "mode" not in rows.columns:  # compare matches modes: another tool's file, or not a CSV at all
            raise BadCsv(
                job.path / RESULTS_CSV, "no mode column: jitexp-compare compares each mode's times", column="mode"
            )
        ok = rows["status"] == "ok" if "status" in rows.columns else pd.Series(True, index=rows.index)
        ok = ok.fillna(False).astype(bool)
        frames.append(rows[ok])
        failed.append(rows[~ok])
        # processes.csv as text: only a few of its columns are read, each turned into numbers here
        samples, procs = job.samples, job.read(PROCESSES_CSV, text=True)
        if "replaced" in procs.columns:  # processes replaced under steal are on record, not in the figures
            procs = procs[~procs["replaced"].astype(str).str.lower().eq("true")]
        # each processes.csv column read, as cells taken once per job (a Series per mode and column cost ~0.1 ms)
        cells = {name: procs[name].to_numpy(dtype=object) for name in PROCESS_NAMES.values() if name in procs.columns}
        for variant, env, mode in _variant_modes(rows[ok]):
            entry: dict[str, list] = {metric: [] for metric in CHANGE_METRICS}
            if not samples.empty:
                for _, group in samples[_of(samples, variant, env, mode)].groupby("process"):
                    entry["steady"].append(group["per_call_s"].to_numpy(float))
            if not procs.empty:
                mine = np.flatnonzero(_of(procs, variant, env, mode).to_numpy(dtype=bool))
                for col, name in PROCESS_NAMES.items():
                    if name in cells:
                        entry[col] = _numbers(cells[name][mine])
            values[(str(job.path), variant, env, mode)] = entry
        if not procs.empty and "process" in procs.columns:  # a process's probe is on each of its mode rows: once
            keys = zip(*(procs[c].tolist() for c in ("env", "process") if c in procs.columns))
            first: dict[tuple, int] = {}
            for i, key in enumerate(keys):
                first.setdefault(key, i)  # each (env, process) at its first row, as drop_duplicates keeps it
            once = np.fromiter(first.values(), dtype=np.intp, count=len(first))
            for col in PROBE_COLUMNS:
                if col in cells:
                    probes.setdefault(col, []).extend(_numbers(cells[col][once]))
    if not frames:
        raise FileNotFoundError(f"no {RESULTS_CSV} in {path} or below it")
    return Side(pd.concat(frames, ignore_index=True), values, pd.concat(failed, ignore_index=True), probes)


# per metric or probe, the processes.csv column its per-process values are read from
PROCESS_NAMES = {
    col: col if col in PROBE_COLUMNS or col in MEASURED else f"{col}_s"
    for col in ("first_call", "compile", *PROBE_COLUMNS, *MEASURED)
}


def _numbers(cells: np.ndarray) -> list:
    """Cells of text as numbers, those that are none left out: pd.to_numeric(errors="coerce").dropna().tolist()."""
    numbers = pd.to_numeric(cells, errors="coerce")
    return numbers[~pd.isna(numbers)].tolist()


def _variant_modes(rows: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The (variant, env, mode) of a job's rows; variant and env are "" in a job without variants or envs."""
    triples = zip(_text(rows, "variant"), _text(rows, "env"), rows["mode"])
    return list(dict.fromkeys((v, e, str(m)) for v, e, m in triples if not pd.isna(m)))


def _text(rows: pd.DataFrame, col: str) -> pd.Series:
    """A column as text, "" where missing or absent."""
    return rows[col].fillna("").astype(str) if col in rows.columns else pd.Series("", index=rows.index)


def _of(frame: pd.DataFrame, variant: str, env: str, mode: str) -> pd.Series:
    """Which rows of a samples or processes frame belong to this variant (or env) and mode."""
    mine = frame["mode"] == mode
    for col, value in (("variant", variant), ("env", env)):
        if value and col in frame.columns:
            mine &= frame[col] == value
    return mine


def matched_columns(base: Side, new: Side, ignore: Sequence[str] = ()) -> list[str]:
    """The identity columns both runs have (ok or error rows), minus ignored ones."""
    theirs = case_columns(new.every_row, ignore)
    return [k for k in case_columns(base.every_row, ignore) if k in theirs]


# ---- environment, matching ----------------------------------------------------------------------------------


def environment_diff(base: Side, new: Side) -> list[str]:
    """`jax_version: 0.10.2 -> 0.10.3` for every environment column that differs between the runs, read from
    every row (error rows too); a column one side does not record at all is unknown there, not a difference."""
    lines = []
    for col in SETUP_COLUMNS:
        a, b = _values(base.every_row, col), _values(new.every_row, col)
        if a and b and a != b:
            lines.append(f"{col}: {', '.join(a)} -> {', '.join(b)}")
    return lines


def across_machines(base: Side, new: Side) -> bool:
    """Whether the runs are known to come from different machines (a side that recorded none is not)."""
    return any(
        a and b and a != b for a, b in ((_values(base.every_row, c), _values(new.every_row, c)) for c in MACHINE)
    )


def machine_scope(base: Side, new: Side) -> str:
    """`across machines`, `on one machine`, or which side's machine is unknown (only error rows without it)."""
    if across_machines(base, new):
        return "across machines"
    unknown = [n for n, s in (("BASE", base), ("NEW", new)) if not _values(s.every_row, "hostname")]
    return f"machine of {' and '.join(unknown)} unknown" if unknown else "on one machine"


def _values(rows: pd.DataFrame, col: str) -> list[str]:
    if col not in rows.columns:
        return []
    return sorted({_cell(v) for v in rows[col].dropna()})


def unmatched(base: Side, new: Side, ignore: Sequence[str] = ()) -> list[str]:
    """Cases not compared, as text: NEW's cases that BASE lacks, and BASE's cases that were errors in BASE.
    (A case of BASE missing from NEW is a `missing` row of the table.)"""
    keys = matched_columns(base, new, ignore)
    label = lambda k: " ".join(f"{c}={v}" for c, v in zip(keys, k) if v != "")  # noqa: E731
    base_ok, base_err = set(case_groups(base.rows, keys)), set(case_groups(base.errors, keys))
    new_all = set(case_groups(new.every_row, keys))
    every_base = base_ok | base_err
    lines = [
        f"NEW only: {label(k)}"
        for k in sorted(new_all, key=str)
        if not any(key_matches(k, b) or key_matches(b, k) for b in every_base)
    ]
    for k in sorted(base_err - base_ok, key=str):
        fixed = k in set(case_groups(new.rows, keys))
        lines.append(f"error in BASE{', ok in NEW' if fixed else ''}: {label(k)} (not compared)")
    return lines


# what a case is, beyond the matched columns: a change in any of them is a different case, not a slower one
IDENTITY = [*JIT_KNOBS, "platform", "device_count", "distributed_processes", *MESH_COLUMNS]


def row_changes(base: Side, new: Side) -> list[str]:
    """`size: 16384 -> 65536` for each identity column whose values differ between the runs' rows (the modes
    as one set), for saying what changed when no case matches. Columns a side lacks are not compared."""
    a_rows, b_rows = base.every_row, new.every_row
    out = []
    for col in [*case_columns(a_rows), *IDENTITY]:
        a, b = _values(a_rows, col), _values(b_rows, col)
        if a and b and a != b or (col.startswith("param_") and bool(a) != bool(b)):
            out.append(f"{col}: {', '.join(a) or '-'} -> {', '.join(b) or '-'}")
    return out


def case_groups(rows: pd.DataFrame, keys: list[str]) -> dict[tuple, pd.DataFrame]:
    """Rows grouped by their case (the keys' values as text, see case_key); empty without rows or keys."""
    if rows.empty or not keys:
        return {}
    absent = [k for k in keys if k not in rows.columns]
    if absent:  # a key one side lacks reads as missing (a reindex copies every column: only where needed)
        rows = rows.reindex(columns=[*rows.columns, *absent])
    return {case_key(v): g for v, g in rows.groupby(keys, dropna=False, sort=False)}


def key_matches(error_key: tuple, key: tuple) -> bool:
    """An error row's case matches where it knows a value (a crash before the backend started has no device_kind)."""
    return all(e == "" or e == k for e, k in zip(error_key, key))


def pool_values(side: Side, rows: pd.DataFrame, metric: str) -> list:
    """A metric's (or probe's) per-process values over the rows' jobs, variants, envs and modes, pooled."""
    out: list = []
    for job, variant, env, mode in zip(rows["_job"], _text(rows, "variant"), _text(rows, "env"), rows["mode"]):
        out.extend(side.values.get((job, variant, env, str(mode)), {}).get(metric, []))
    return out


@dataclass(frozen=True)
class Case:
    """One case's rows on either side, with the runs they came from (whose processes hold the per-process values)."""

    base: Side
    base_rows: pd.DataFrame
    new: Side
    new_rows: pd.DataFrame

    def pooled(self, metric: str) -> tuple[list, list]:
        """A metric's (or probe's) per-process values on each side: pool_values of BASE's rows, of NEW's."""
        return pool_values(self.base, self.base_rows, metric), pool_values(self.new, self.new_rows, metric)


def _cell(value) -> str:
    if pd.isna(value):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # 64 and 64.0 (a column upcast by a missing value elsewhere) are one size
    return str(value)


def case_key(value: object) -> tuple:
    """A case's key values as text (64 and 64.0 alike, missing as ""), as cases are matched."""
    value = value if isinstance(value, tuple) else (value,)
    return tuple(_cell(v) for v in value)
