"""Raw worker results -> results.csv rows: statistics, paired speedups, the cold call, the long files.

Pure: typed records in (`records.JobRaw`), a `records.JobResult` out; no processes, no files,
no Hydra (except `config_error_result`, which reads the composed config it is given).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from jitexp import labels
from jitexp.analysis.device import device_columns, job_split, unavailable
from jitexp.analysis.explain import explain
from jitexp.analysis.instability import blas_stall, instability, kept_against_all, noise_columns
from jitexp.analysis.long_files import KEY_COLUMNS, long_rows, sequence_rows, variant_long_rows
from jitexp.analysis.speedups import (
    BLAS_STALLED,
    ab_columns,
    not_work,
    paired,
    paired_groups,
    process_medians,
    speedup_interval,
    variant_pairs,
    vs_numpy,
)
from jitexp.analysis.stats import (
    hierarchical_medians,
    median_ci,
    percentile_ci,
    point_medians,
    robust_cv,
    summarize,
    tukey_outliers,
)
from jitexp.config import MODES, ExperimentConfig, variant_configs
from jitexp.config.mesh import mesh_columns
from jitexp.errors import ConfigError, Failure, qualified_name
from jitexp.records import COLD_PHASES, JobRaw, JobResult, ProcessResult


def job_result(cfg: ExperimentConfig, raw: JobRaw, *, job_num: int = 0, overrides: str = "") -> JobResult:
    """Every file's rows of one job from everything its processes and probes returned."""
    processes = raw.processes
    first = processes[0]
    base = identity_row(cfg, job_num, overrides, setup_kinds(processes).get(""), *worker_built(processes, ""))
    base.update(
        platform=first.platform,
        device_kind=first.device_kind,
        load_avg_start=raw.load_avg_start,
        **first.environment,
        **raw.provenance,
        cpu_async_dispatch=first.cpu_async_dispatch,
        isolate=cfg.isolate,
        interleave=cfg.timing.interleave,
        modes=",".join(cfg.mode.names),
        measure_s=sum(r.measure_s for r in processes),
        **_median_of(processes, ("peak_rss_growth_bytes", "device_peak_bytes")),
    )
    opened = [r.device_open_s for r in processes if r.device_open_s is not None]
    if opened:
        base["device_open_s"] = float(np.median(opened))
    base.update(job_split(raw))
    setups = [r.setup_s for r in processes if r.setup_s is not None]
    if setups:
        base["setup_s"] = float(np.median(setups))
    base.update(noise_columns(processes, len(raw.replaced)))
    if cfg.variants:
        rows = variant_rows(cfg, processes, raw.stop_reason, base, job_num, overrides)
    else:
        rows = mode_rows(cfg, processes, raw.stop_reason, base)
    cache = cache_columns(*raw.cache) if raw.cache else {}
    note = unavailable(rows, first, cfg.roofline)
    for row in rows:
        row.update(cache.get(row["mode"], {}))
        row.update(device_columns(row, first.peaks))
        if first.peaks:
            row["peaks_measured"] = first.peaks_measured
        row.pop("device_time_error", None)  # said once for the job, in `unavailable`
        row["unavailable"] = note
        row["load_avg_end"] = raw.load_avg_end
        if row["status"] == "ok":
            row.update(instability(row, cfg.timing.max_steal))
    long = variant_long_rows if cfg.variants else long_rows
    samples, procs, calls = long(rows, processes)
    procs = [{**p, "replaced": False} for p in procs] + [{**p, "replaced": True} for p in long(rows, raw.replaced)[1]]
    if raw.replaced:
        for row in rows:
            row.update(kept_against_all(procs, row.get("variant"), row["mode"]))
    calls.extend(sequence_rows(raw.sequence, {k: rows[0][k] for k in KEY_COLUMNS}))
    profile, files = profile_outputs(raw.profile, rows)
    return JobResult(rows, samples, procs, calls, profile, files)


def profile_outputs(result: ProcessResult | None, rows: list[dict]) -> tuple[list[dict], dict[str, bytes]]:
    """profile=true: each compiled mode's row gets profile_calls, profile_step_s and profile_execute_s (or
    profile_error); profile.csv's rows and the trace files under profile/<mode>/."""
    if result is None:
        return [], {}
    events: list[dict] = []
    files: dict[str, bytes] = {}
    for row in rows:
        mode = row["mode"]
        if mode not in ("jit", "aot"):
            continue
        m = result.modes.get(mode)
        failure = result.error or (m.error if m is not None else None)
        if m is None or m.profile is None:
            row["profile_error"] = failure.error_message if failure is not None else "not profiled"
            continue
        p = m.profile
        row.update(profile_calls=p.calls, profile_step_s=p.wall_s / p.calls, profile_execute_s=p.execute_s)
        events.extend({**{k: row[k] for k in KEY_COLUMNS}, "mode": mode, **e} for e in p.events)
        files.update({f"profile/{mode}/{name}": data for name, data in p.files.items()})
    return events, files


def _median_of(processes: list[ProcessResult], keys: tuple[str, ...]) -> dict:
    """Per key, the median over the processes that report it (integers stay integers)."""
    out = {}
    for key in keys:
        values = [getattr(r, key) for r in processes if getattr(r, key) is not None]
        if values:
            out[key] = int(np.median(values))
    return out


def setup_kinds(processes: list[ProcessResult]) -> dict[str, str]:
    """Per variant, how the worker found the workload.setup it imported (every process imports the same)."""
    return next((p.setup_kinds for p in processes if p.setup_kinds), {})


def worker_built(processes: list[ProcessResult], variant: str) -> tuple[str | None, str | None, str | None]:
    """What a worker found of variant's inputs and function: the arguments' shapes, their dtype (labels.args_dtype)
    and the jit the function came wrapped in (labels.prejitted); None where no worker built them."""
    first = next((p for p in processes if variant in p.input_shapes), None)
    if first is None:
        return None, None, None
    return first.input_shapes[variant], first.input_dtypes.get(variant), first.prejitted.get(variant)


def variant_rows(
    cfg: ExperimentConfig, results: list[ProcessResult], stop_reason: str, base: dict, job_num: int, overrides: str
) -> list[dict]:
    """One row per (variant, mode), each as mode_rows makes it from that variant's own config and measurements,
    with a `variant` column; every other variant's rows get the ab_* columns against the first's same mode."""
    configs = variant_configs(cfg)
    kinds = setup_kinds(results)
    rows = []
    for name, own in configs.items():
        ident = {
            **base,
            **identity_row(own, job_num, overrides, kinds.get(name), *worker_built(results, name)),
            "variant": name,
        }
        rows.extend(mode_rows(own, [r.of_variant(name) for r in results], stop_reason, ident))
    baseline, *others = configs
    by_key = {(row["variant"], row["mode"]): row for row in rows}
    for name in others:
        for mode in cfg.mode.names:
            row, against = by_key[(name, mode)], by_key[(baseline, mode)]
            if row["status"] == "ok" and against["status"] == "ok":
                row.update(
                    ab_columns(baseline, variant_pairs(results, baseline, mode), variant_pairs(results, name, mode))
                )
    return rows


def mode_rows(cfg: ExperimentConfig, results: list[ProcessResult], stop_reason: str, base: dict) -> list[dict]:
    """One results.csv row per mode: steady state, cold first call, paired speedup, extras."""
    live, groups = paired_groups(results, cfg.mode.names, unpaired=cfg.timing.interleave == "processes")
    boot = hierarchical_medians(groups) if groups else None
    point = point_medians(groups) if groups else None
    n_proc = len(groups)
    rows = []
    for mode in cfg.mode.names:
        row = {**base, "mode": mode, "status": "ok"}
        row.update(_error(results, mode))
        row.update(_cold(results, mode))
        if mode in results[0].modes:
            row.update(results[0].modes[mode].extras.as_row())
        if mode in live and boot is not None and point is not None:
            j = live.index(mode)
            row.update(_steady(results, mode, point[j], boot[:, j], cfg.timing.target_rel_ci))
            row.update(
                n_processes=n_proc,
                stop_reason=stop_reason,
                ci_scope="between_processes" if n_proc > 1 else "within_process",
            )
            if row.get("flops"):
                row["gflops_per_s"] = row["flops"] / row["median_s"] / 1e9
            if row.get("bytes_accessed"):
                row["gbytes_per_s"] = row["bytes_accessed"] / row["median_s"] / 1e9
        rows.append(row)
    if boot is not None and point is not None and len(live) > 1:
        by_mode = {r["mode"]: r for r in rows}
        baseline = by_mode[live[0]]
        medians = process_medians(groups)
        for j, mode in enumerate(live[1:], start=1):
            row = by_mode[mode]
            row.update(paired(baseline, row, speedup_interval(medians[:, 0], medians[:, j], boot[:, 0] / boot[:, j])))
            if baseline["mode"] == "eager" and mode in ("jit", "aot"):
                row.update(explain(baseline, row))
        if "numpy" in live:
            k = live.index("numpy")
            for j, mode in enumerate(live):
                if j != k:
                    by_mode[mode].update(
                        vs_numpy(speedup_interval(medians[:, k], medians[:, j], boot[:, k] / boot[:, j]))
                    )
    for row in rows:  # a time that is not the function's work is no speedup: the verdict says why not
        for column, against in (("verdict", row.get("baseline_mode")), ("verdict_vs_numpy", "numpy")):
            if row.get(column) is not None and against:
                problem = not_work(row, str(against))[0] or not_work(row)[0]
                if problem:
                    row[column] = problem
    twin = next((r for r in rows if r["mode"] == "numpy" and r["status"] == "ok"), None)
    if twin is not None and blas_stall(twin):  # the twin's time is its BLAS threads waiting: no verdict on it
        for row in rows:
            for column, against in (("verdict", row.get("baseline_mode")), ("verdict_vs_numpy", "numpy")):
                if row.get(column) is not None and "numpy" in (row["mode"], against) and row["mode"] != against:
                    row[column] = BLAS_STALLED
    return rows


def _error(results: list[ProcessResult], mode: str) -> dict:
    """The first error that hit this mode (or the whole process), else nothing."""
    for r in results:
        if r.error is not None:
            return r.error.as_row()
        m = r.modes.get(mode)
        if m is not None and m.error is not None:
            return m.error.as_row()
    return {}


def _cold(results: list[ProcessResult], mode: str) -> dict:
    """The cold first call: the median process's call and its parts, so they add up; a CI over processes."""
    cold = [m.cold for r in results if (m := r.modes.get(mode)) is not None and m.cold is not None]
    if not cold:
        return {}
    ordered = sorted(cold, key=lambda c: c.first_call_s)
    middle = ordered[(len(ordered) - 1) // 2]  # the lower median: an observed call whose parts add up
    lo, hi = median_ci([c.first_call_s for c in cold])
    return {
        "first_call_s": middle.first_call_s,
        **{k: getattr(middle, k) for k in COLD_PHASES},
        "first_call_compiles": middle.first_call_compiles,
        "first_call_ci95_low_s": lo,
        "first_call_ci95_high_s": hi,
        "first_call_processes": len(cold),
    }


def _steady(results: list[ProcessResult], mode: str, median: float, replicates: np.ndarray, target: float) -> dict:
    per_process = [m for r in results if (m := r.modes.get(mode)) is not None and m.samples_s is not None]
    samples = [np.asarray(p.samples_s) for p in per_process]
    lo, hi = percentile_ci(replicates)
    medians = [float(np.median(s)) for s in samples]
    s = summarize(np.concatenate(samples))
    half = (hi - lo) / 2 / median
    return {
        **{k: v for k, v in s.as_row().items() if k not in ("median_s", "ci95_low_s", "ci95_high_s", "n_outliers")},
        "median_s": median,
        "ci95_low_s": lo,
        "ci95_high_s": hi,
        "rel_ci_halfwidth": half,
        "ci_target_met": bool(half <= target),
        "number": int(np.median([p.number for p in per_process])),
        "n_outliers": sum(tukey_outliers(x) for x in samples),
        "compiles_during_timing": sum(p.compiles_during_timing or 0 for p in per_process),
        "process_rel_spread": robust_cv(medians) if len(medians) > 1 else math.nan,
        "within_process_rel_spread": float(np.median([robust_cv(x) for x in samples])),
        "process_median_min_s": min(medians),
        "process_median_max_s": max(medians),
    }


def cache_columns(cold: ProcessResult, warm: ProcessResult) -> dict[str, dict]:
    """Per compiled mode, the disk-cache probe's cache_* columns: a cold first call writing the cache, a warm one reading it."""
    out = {}
    for mode, c in cold.modes.items():
        w = warm.modes.get(mode)
        if c.cold is None or w is None or w.cold is None:
            continue
        out[mode] = {
            "cache_cold_first_call_s": c.cold.first_call_s,
            "cache_warm_first_call_s": w.cold.first_call_s,
            "cache_cold_compile_s": c.cold.compile_s,
            "cache_warm_compile_s": w.cold.compile_s,
            "cache_warm_trace_s": w.cold.trace_s,
            "cache_warm_lower_s": w.cold.lower_s,
            "cache_hit": (w.cache_hits or 0) > 0 and w.cache_misses == 0,
        }
    return out


def identity_row(
    cfg: ExperimentConfig,
    job_num: int,
    overrides: str,
    setup_kind: str | None = None,
    shapes: str | None = None,
    dtype: str | None = None,
    prejitted: str | None = None,
) -> dict:
    """The columns that say which case a row is (mode filled per row); `setup_kind` is the worker's word on the
    job's workload.setup (labels.setup_kind), None where no worker imported it; `shapes` the arguments it built
    (labels.shapes_label), `dtype` their dtype (labels.args_dtype: the row's where it is not empty) and `prejitted`
    the jit the function came in (labels.prejitted), None where no worker built them."""
    row = _identity(
        cfg.workload_name,
        None,
        cfg.size,
        cfg.dtype,
        list(cfg.static_argnums),
        cfg.workload.params,
        cfg.seed,
        job_num,
        overrides,
    )
    row.update(
        jit_options(
            cfg.donate_argnums, cfg.mode.compiler_options, cfg.static_argnames, cfg.jit_fn, cfg.mode.donate_argnames
        )
    )
    built = labels.size_built(cfg)
    row.update(labels.inputs_columns(cfg.workload.setup, setup_kind, shapes, built))
    if not built:  # size built nothing: no size on the row (issue 57)
        row["size"] = None
    if dtype:  # the arguments' own dtype, where it is not the job's (mixed, a setup's own, a literal's: issue 57)
        row["dtype"] = dtype
    row["prejitted"] = prejitted or ""
    row.update(mesh_columns(cfg))
    return row


def jit_options(
    donate_argnums: Any,
    compiler_options: Any,
    static_argnames: Any = (),
    jit_fn: Any = "jax.jit",
    donate_argnames: Any = (),
) -> dict:
    """jit's own knobs as row text: lists like static_argnums, compiler_options as sorted key=value pairs."""
    options = dict(compiler_options or {})
    return {
        "static_argnames": str(list(static_argnames or [])),
        "jit_fn": jit_fn or "jax.jit",
        "donate_argnums": str(list(donate_argnums or [])),
        "donate_argnames": str(list(donate_argnames or [])),
        "compiler_options": ",".join(f"{k}={options[k]}" for k in sorted(options)),
    }


def _identity(
    workload: Any,
    mode: Any,
    size: Any,
    dtype: Any,
    statics: Any,
    params: Mapping,
    seed: Any,
    job_num: int,
    overrides: str,
) -> dict:
    return {
        "workload": workload,
        "mode": mode,
        "size": size,
        "dtype": dtype,
        "static_argnums": str(statics),
        **{f"param_{k}": v for k, v in params.items()},
        "seed": seed,
        "job_num": job_num,
        "overrides": overrides,
    }


def config_error_result(cfg: Mapping, error: ConfigError, *, job_num: int = 0, overrides: str = "") -> JobResult:
    """A status=error row for a sweep job whose config is invalid, so the sweep still records it."""
    from omegaconf import OmegaConf

    def pick(key: str) -> Any:
        try:
            return OmegaConf.select(cfg, key, default=None)  # type: ignore[arg-type]
        except Exception:  # the very value that made the config invalid may not resolve
            return None

    params = {k: pick(f"workload.params.{k}") for k in (pick("workload.params") or {})}
    statics = pick("mode.static_argnums")
    statics = statics if statics is not None else pick("workload.static_argnums")
    name = pick("workload.name") or str(pick("workload.fn") or "").rsplit(".", 1)[-1]
    modes: list[str | None] = [m for m in MODES if pick(f"mode.{m}")] or [None]
    failed = Failure("config", qualified_name(type(error)), str(error), f"fix {error.key}").as_row()
    rows = []
    for mode in modes:
        row = _identity(
            name, mode, pick("size"), pick("dtype"), list(statics or []), params, pick("seed"), job_num, overrides
        )
        names = pick("mode.static_argnames")
        donated = pick("mode.donate_argnums")
        row.update(
            jit_options(
                donated if donated is not None else pick("workload.donate_argnums"),
                pick("mode.compiler_options"),
                names if names is not None else pick("workload.static_argnames"),
                pick("mode.jit_fn") or pick("workload.jit_fn"),
                pick("mode.donate_argnames"),
            )
        )
        row.update(failed)
        rows.append(row)
    return JobResult(rows)
