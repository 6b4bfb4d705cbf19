"""experiment=fit, the driver: probe one value at a time, each in a fresh worker process (task kind "fit"), doubling
then bisecting (analysis.fit_search), then an ordinary job at the largest value that fit; fit.csv has a row a probe.

A probe that fails in any way (XLA's estimate over the limit, the allocator's out-of-memory error, a crash, a
timeout) is a row that did not fit, and the search goes on below it. Each probe's process exits before the next
starts (and the next retries its open while the device is still held: timing.open_retries), so no probe leaves the
device unusable for the next. No JAX here: the probes run in the worker.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jitexp.analysis.fit_search import (
    CRASH,
    ERROR,
    ESTIMATE,
    FITS,
    INPUTS,
    OOM,
    Search,
    fit_lines,
    is_oom,
    mib,
    standing,
)
from jitexp.config import ExperimentConfig
from jitexp.config.fit import key_value
from jitexp.config.sizing import ITEMSIZE, array_specs
from jitexp.engine.progress import Sweep
from jitexp.engine.runner import run, run_task
from jitexp.records import JobResult, ProcessResult, Task

FIT_CSV = "fit.csv"
# fit.csv's columns, one row a probe in the order they ran (docs/results.md)
FIT_COLUMNS = (
    "key",
    "value",
    "fits",
    "reason",
    "estimate_bytes",
    "peak_memory_bytes",
    "device_peak_bytes",
    "limit_bytes",
    "input_bytes",
    "argument_size_bytes",
    "output_size_bytes",
    "temp_size_bytes",
    "alias_size_bytes",
    "peak_rss_growth_bytes",
    "call_s",
    "seconds",
    "platform",
    "device_kind",
    "error_phase",
    "error_type",
    "error_message",
)


@dataclass
class FitResult:
    """A search's probes (fit.csv's rows), its answer, and the ordinary job at the largest value (fit.time)."""

    key: str
    maximum: int
    rows: list[dict[str, Any]] = field(default_factory=list)
    job: JobResult | None = None
    wall_s: float = 0.0
    untimed: bool = False  # fit.time, and each of TIMED_TRIES timed jobs ran out of memory: the largest is not timed

    @property
    def largest(self) -> int | None:
        """The largest value that fit, as a probe and (fit.time) as a timed job (None: none did)."""
        return max((r["value"] for r in standing(self.rows)), default=None)

    @property
    def smallest_failing(self) -> int | None:
        """The smallest value above the largest that did not fit (None: every value up to fit.max fit)."""
        best = self.largest
        return min(
            (r["value"] for r in self.rows if not r["fits"] and (best is None or r["value"] > best)), default=None
        )

    def lines(self) -> list[str]:
        """The printed answer: largest, smallest that did not, estimate vs allocator, the search."""
        return fit_lines(self.key, self.rows, self.maximum, self.wall_s, untimed=TIMED_TRIES if self.untimed else 0)

    def save(self, folder: str | Path) -> Path:
        """fit.csv, and the timed job's files, in `folder`."""
        from jitexp.store.folders import write_job

        folder = Path(folder)
        self.save_probes(folder)
        if self.job is not None:
            write_job(self.job, folder)
        return folder

    def save_probes(self, folder: str | Path) -> Path:
        """fit.csv alone (atomically): after each probe, so that a search stopped half-way keeps what it found."""
        from jitexp.store.csvio import to_frame, write_csv

        frame = to_frame(self.rows, FIT_COLUMNS)
        for column in FIT_COLUMNS:
            if column == "value" or column.endswith("_bytes"):  # whole bytes, a missing one empty (not 3145728.0)
                frame[column] = frame[column].astype("Int64")
        return write_csv(frame, Path(folder) / FIT_CSV)


def search(
    config_at: Callable[[int], ExperimentConfig],
    cfg: ExperimentConfig,
    *,
    say: Callable[[str], None] | None = None,
    folder: str | Path | None = None,
    job_num: int = 0,
    overrides: str = "",
    sweep: Sweep | None = None,
) -> FitResult:
    """The largest value of cfg.fit.key that fits: `config_at(value)` is the job at that value (resolved again, so
    shapes written in terms of it follow); then, with fit.time, that job run as any other. With `folder`, fit.csv is
    written there after each probe."""
    fit = cfg.fit
    assert fit.key is not None
    start = fit.start if fit.start is not None else int(key_value(cfg, fit.key))
    steps = Search(start, fit.max, fit.step)
    out = FitResult(fit.key, fit.max)
    began = time.perf_counter()
    for _ in range(TIMED_TRIES):
        while (value := steps.next()) is not None:
            row = probe(config_at(value), fit.key, value)
            steps.record(value, bool(row["fits"]))
            _add(out, row, folder, say)
        out.wall_s = time.perf_counter() - began
        best = out.largest
        if not fit.time or best is None:
            out.job = None
            return out
        at = config_at(best)
        out.job = run(
            dataclasses.replace(at, fit=dataclasses.replace(at.fit, key=None)),
            job_num=job_num,
            overrides=overrides,
            sweep=sweep,
        )
        short = timed_oom(out.job, fit.key, best)
        if short is None:
            return out
        # the timed job's calls hold what the probe's do (docs/decisions.md, "Issue 59: what the timed job holds"),
        # but not all it does (process 0's extras, the check's eager call, the allocator's state after many calls):
        # out of memory there, the value does not fit, and the search goes on below
        steps.refute(best)
        _add(out, short, folder, say)
    # every timed job ran out of memory: the largest value standing was never timed, and the last job's block
    # (a value its rows now call too large) is not the answer's
    out.job = None
    out.untimed = True
    return out


TIMED_TRIES = 4  # timed jobs at most: each failure sends the search below (TPU v5e: the probe of two calls needed 4)


def _add(out: FitResult, row: dict[str, Any], folder: str | Path | None, say: Callable[[str], None] | None) -> None:
    out.rows.append(row)
    if folder is not None:
        out.save_probes(folder)
    if say is not None:
        say(probe_line(row))


def timed_oom(job: JobResult, key: str, value: int) -> dict[str, Any] | None:
    """fit.csv's row for a timed job that ran out of memory at `value` (None: it did not)."""
    for r in job.rows:
        if r.get("status") != "ok" and is_oom(r.get("error_type"), r.get("error_message")):
            return {
                "key": key,
                "value": value,
                "fits": False,
                "reason": OOM,
                "platform": r.get("platform"),
                "device_kind": r.get("device_kind"),
                "error_phase": f"timed job ({r.get('error_phase')})",
                "error_type": r.get("error_type"),
                "error_message": r.get("error_message"),
                "seconds": r.get("job_wall_s"),
            }
    return None


def probe(cfg: ExperimentConfig, key: str, value: int) -> dict[str, Any]:
    """One value tried in a fresh worker process (none when its arguments alone exceed fit.memory_bytes): its row."""
    started = time.perf_counter()
    needed = array_bytes(cfg)
    limit = cfg.fit.memory_bytes
    if limit is not None and needed is not None and needed > limit:
        row = {"key": key, "value": value, "fits": False, "reason": INPUTS, "input_bytes": needed, "limit_bytes": limit}
        row["seconds"] = time.perf_counter() - started
        return row
    task = Task(cfg, 0, ("jit" if cfg.mode.jit else "aot",), 1, extras=False, kind="fit")
    result = run_task(task, cfg)
    row = probe_row(key, value, result)
    row["input_bytes"] = needed
    row["seconds"] = time.perf_counter() - started
    return row


def array_bytes(cfg: ExperimentConfig) -> int | None:
    """What the job's array arguments hold on the device, from their shapes and dtypes (None under a setup)."""
    if cfg.workload.setup is not None:
        return None
    return sum(math.prod(a.get("shape", [])) * ITEMSIZE.get(a.get("dtype", cfg.dtype), 8) for a in array_specs(cfg))


def probe_row(key: str, value: int, result: ProcessResult) -> dict[str, Any]:
    """A fit probe's ProcessResult as its fit.csv row: why it fit or did not."""
    row: dict[str, Any] = {
        "key": key,
        "value": value,
        "platform": result.platform,
        "device_kind": result.device_kind,
        "device_peak_bytes": result.device_peak_bytes,
        "peak_rss_growth_bytes": result.peak_rss_growth_bytes,
    }
    failure = result.error
    record: dict[str, Any] = {}
    for mode in result.modes.values():
        record = dict(mode.calls[0]) if mode.calls else {}
        failure = failure or mode.error
    over = record.pop("over_limit", False)
    row.update(record)
    if result.config_error is not None:
        problem = result.config_error
        row.update(
            error_phase="config", error_type="jitexp.ConfigError", error_message=f"{problem.key}: {problem.expected}"
        )
        row["reason"] = OOM if "memory" in problem.expected else ERROR
    elif failure is not None:
        row.update(error_phase=failure.error_phase, error_type=failure.error_type, error_message=failure.error_message)
        if is_oom(failure.error_type, failure.error_message):
            row["reason"] = OOM
        else:
            row["reason"] = CRASH if result.platform is None else ERROR
    elif over:
        row["reason"] = ESTIMATE
    else:
        row["reason"] = FITS
    row["fits"] = row["reason"] == FITS
    return row


def probe_line(row: dict[str, Any]) -> str:
    """One probe as the search shows it, a line each."""
    what = "fits" if row["fits"] else f"does not fit ({row['reason']})"
    if row["reason"] == INPUTS:
        figure = f"the arguments alone {mib(row.get('input_bytes'))}"
    elif row.get("estimate_bytes") is None and row.get("error_type"):
        figure = f"{row['error_type']} in {row.get('error_phase')}"
    else:
        figure = f"XLA's estimate {mib(row.get('estimate_bytes'))}"
    return f"fit: {row['key']}={row['value']} {what}: {figure}, limit {mib(row.get('limit_bytes'))} ({row.get('seconds', 0.0):.1f} s)"


def fit(
    overrides: Sequence[str] = (),
    *,
    key: str | None = None,
    config_dir: str | None = None,
    out_dir: str | Path | None = None,
    verbose: bool = True,
) -> FitResult:
    """The largest value of one key whose job fits this device's memory, from Python: `jitexp.fit(["workload=matmul",
    "fit.memory_bytes=268435456"], key="size")` is `jitexp experiment=fit workload=matmul fit.memory_bytes=...`.

    `key` sets fit.key (else the overrides must, e.g. `experiment=fit`); `out_dir` (optional) gets fit.csv and the
    timed job's files. Returns a FitResult: `.rows` (fit.csv), `.largest`, `.smallest_failing`, `.job`, `.lines()`.
    """
    from jitexp.engine.preflight import compose

    extra = [f"fit.key={key}"] if key is not None else []
    base = [*overrides, *extra]
    cfg = compose(base, config_dir)
    if cfg.fit.key is None:
        from jitexp.errors import ConfigError

        raise ConfigError("fit.key", None, "the key to search: size or workload.params.NAME (key='size')")
    chosen = cfg.fit.key

    def config_at(value: int) -> ExperimentConfig:
        return compose([*base, f"{chosen}={value}"], config_dir)

    result = search(
        config_at, cfg, say=(lambda line: print(line, file=sys.stderr)) if verbose else None, folder=out_dir
    )
    if out_dir is not None:
        result.save(out_dir)
    return result


def fit_job(cfg: Any, out_dir: Path, *, job_num: int, overrides: str, sweep: Sweep | None, digest: str) -> bool:
    """`jitexp experiment=fit ...` as Hydra runs it (cli._job hands a composed job with fit.key over): the probes'
    lines on stderr as they end, fit.csv and the timed job's files in out_dir, the answer's lines and the job's block;
    False when no value fit (the command exits 1). Each value's job is the composed config with the key set and
    resolved again, so shapes written in terms of it (`${size}`) follow."""
    import copy

    from omegaconf import OmegaConf

    from jitexp.analysis.formatting.block import block_lines
    from jitexp.analysis.formatting.values import display_path
    from jitexp.config import to_config
    from jitexp.engine.console import print_block

    exp = to_config(cfg)
    key = exp.fit.key
    assert key is not None

    def config_at(value: int) -> ExperimentConfig:
        node = copy.deepcopy(cfg)
        OmegaConf.update(node, key, value, merge=False)
        return to_config(node)

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    result = search(config_at, exp, say=say, folder=out_dir, job_num=job_num, overrides=overrides, sweep=sweep)
    if result.job is not None:
        for row in result.job.rows:
            row["config_hash"] = digest
    result.save(out_dir)
    where = display_path(out_dir)
    print("\n".join(result.lines()), flush=True)
    if result.job is not None:
        print_block(block_lines(result.job.rows, where))
    return result.largest is not None
