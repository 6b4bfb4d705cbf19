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

from jitexp.analysis.rows import job_result as rows_job_result
from jitexp.analysis.speedups import ab_columns, ci_met, pair_values
from jitexp.analysis.stats import undetectable
from jitexp.config import ExperimentConfig
from jitexp.records import JobRaw, JobResult, ProcessResult

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
    if any(r.variants for r in results) and undetectable(len(results)) is not None:
        return False  # variants: each process is a pair; keep adding (to max_processes) until one could tell
    return all(ci_met(side, modes, target) for side in sides.values())


def job_result(
    cfg: ExperimentConfig, raws: Mapping[str, JobRaw], *, job_num: int = 0, overrides: str = ""
) -> JobResult:
    """Every file's rows of a job with envs: each env's rows with an `env` column, the others' A/B columns.

    Every env ran a process: a failure ends the job only after its round (runner.collect).
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
                base = pair_values([r.modes.get(row["mode"]) for r in raws[baseline].processes])
                new = pair_values([r.modes.get(row["mode"]) for r in raws[env].processes])
                row.update(ab_columns(baseline, base, new))
    return JobResult(
        [r for p in parts.values() for r in p.rows],
        [r for p in parts.values() for r in p.samples],
        [r for p in parts.values() for r in p.processes],
        [r for p in parts.values() for r in p.calls],
    )
