"""Python environments in one job (`envs`): the alternating process order, each env's rows, the A/B columns.

Pure, like `rows`: the processes of a job with envs alternate between the environments in
rounds, forward then backward (old, new, new, old, old, new, ...), so drift hits every side
alike; pair i is the i-th process of each env. Each env's processes become rows as a job of their
own (`rows.job_result`, so its environment columns are its own workers'), with an `env` column;
every other env's rows get `rows.ab_columns` against the first (the baseline) env's same mode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from .config import ExperimentConfig
from .records import JobRaw, JobResult, ProcessResult
from .rows import ab_columns, ci_met
from .rows import job_result as rows_job_result
from .stats import undetectable

T = TypeVar("T")


def env_of(k: int, names: Sequence[T]) -> T:
    """The environment of a job's k-th process: rounds of one process per env, forward then backward (ABBA)."""
    rnd, i = divmod(k, len(names))
    return names[i] if rnd % 2 == 0 else names[len(names) - 1 - i]


def split(results: Sequence[ProcessResult], names: Sequence[T]) -> dict[T, list[ProcessResult]]:
    """Each environment's processes, in order (its i-th is pair i), from the job's processes in running order."""
    out: dict[T, list[ProcessResult]] = {name: [] for name in names}
    for k, result in enumerate(results):
        out[env_of(k, names)].append(result)
    return out


def enough(results: Sequence[ProcessResult], names: Sequence[Any], modes: tuple[str, ...], target: float) -> bool:
    """Whether every env's CI is within target and, with envs, the pairs so far could show a significant A/B change."""
    sides = split(results, names)
    pairs = min(len(side) for side in sides.values())
    if len(names) > 1 and undetectable(pairs) is not None:
        return False
    return all(ci_met(side, modes, target) for side in sides.values())


def pair_values(results: Sequence[ProcessResult], mode: str) -> dict[str, list]:
    """Per metric, one value per process of an env (None where it has none): the median per-call time
    of the mode, its cold first call, its compile."""
    out: dict[str, list] = {"steady": [], "first_call": [], "compile": []}
    for r in results:
        m = r.modes.get(mode)
        samples = m.samples_s if m is not None else None
        out["steady"].append(float(np.median(samples)) if samples is not None and len(samples) else None)
        out["first_call"].append(m.cold.first_call_s if m is not None and m.cold is not None else None)
        out["compile"].append(m.cold.compile_s if m is not None and m.cold is not None else None)
    return out


def job_result(
    cfg: ExperimentConfig, raws: Mapping[str, JobRaw], *, job_num: int = 0, overrides: str = ""
) -> JobResult:
    """Every file's rows of a job with envs: each env's rows with an `env` column, the others' A/B columns.

    An env that ran no process (the job stopped at the baseline's first failure) has no rows.
    """
    parts: dict[str, JobResult] = {}
    for env, raw in raws.items():
        if not raw.processes:
            continue
        part = rows_job_result(cfg, raw, job_num=job_num, overrides=overrides)
        for table in (part.rows, part.samples, part.processes, part.calls):
            for row in table:
                row["env"] = env
        parts[env] = part
    baseline = next(iter(raws))
    for env, part in parts.items():
        if env == baseline or baseline not in parts:
            continue
        for row in part.rows:
            if row.get("status") == "ok":
                base = pair_values(raws[baseline].processes, row["mode"])
                row.update(ab_columns(baseline, base, pair_values(raws[env].processes, row["mode"])))
    return JobResult(
        [r for p in parts.values() for r in p.rows],
        [r for p in parts.values() for r in p.samples],
        [r for p in parts.values() for r in p.processes],
        [r for p in parts.values() for r in p.calls],
    )
