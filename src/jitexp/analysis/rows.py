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
from jitexp.analysis.explain import explain
from jitexp.analysis.stats import (
    CHANGE_METRICS,
    break_even,
    hierarchical_medians,
    median_ci,
    paired_change,
    percentile_ci,
    point_medians,
    robust_cv,
    signed_rank_interval,
    summarize,
    tukey_outliers,
    verdict,
)
from jitexp.config import MODES, ExperimentConfig, variant_configs
from jitexp.errors import ConfigError, Failure, qualified_name
from jitexp.records import COLD_PHASES, NOISE_COLUMNS, JobRaw, JobResult, ModeResult, ProcessResult

# pyperf warns when std >= 10% of the mean and when min or max lies more than 50% from the mean.
MAX_SPREAD = 0.10
MAX_EXTREME = 0.50
KEY_COLUMNS = ("job_num", "workload", "size")  # what samples/processes/calls rows repeat of their job


def job_result(cfg: ExperimentConfig, raw: JobRaw, *, job_num: int = 0, overrides: str = "") -> JobResult:
    """Every file's rows of one job from everything its processes and probes returned."""
    processes = raw.processes
    first = processes[0]
    base = identity_row(cfg, job_num, overrides)
    base.update(
        platform=first.platform,
        device_kind=first.device_kind,
        load_avg_start=raw.load_avg_start,
        **first.environment,
        cpu_async_dispatch=first.cpu_async_dispatch,
        isolate=cfg.isolate,
        modes=",".join(cfg.mode.names),
        measure_s=sum(r.measure_s for r in processes),
        **_median_of(processes, ("peak_rss_growth_bytes", "device_peak_bytes")),
    )
    setups = [r.setup_s for r in processes if r.setup_s is not None]
    if setups:
        base["setup_s"] = float(np.median(setups))
    base.update(noise_columns(processes, len(raw.replaced)))
    if cfg.variants:
        rows = variant_rows(cfg, processes, raw.stop_reason, base, job_num, overrides)
    else:
        rows = mode_rows(cfg, processes, raw.stop_reason, base)
    cache = cache_columns(*raw.cache) if raw.cache else {}
    for row in rows:
        row.update(cache.get(row["mode"], {}))
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
    return JobResult(rows, samples, procs, calls)


def noise_columns(processes: list[ProcessResult], replaced: int) -> dict[str, Any]:
    """The machine's noise over a job's kept processes: steal median and maximum, replacements, host probe medians."""
    out: dict[str, Any] = {"n_steal_replaced": replaced}
    steal = [r.noise.steal for r in processes if r.noise.steal is not None]
    if steal:
        out.update(steal_median=float(np.median(steal)), steal_max=float(max(steal)))
    waits = [r.noise.run_queue_wait for r in processes if r.noise.run_queue_wait is not None]
    if waits:
        out["run_queue_wait_median"] = float(np.median(waits))
    probes: dict[str, list[float]] = {}
    for r in processes:
        for name, value in r.noise.host_probe.items():
            probes.setdefault(name, []).append(value)
    out.update({name: float(np.median(values)) for name, values in probes.items()})
    return out


def kept_against_all(procs: list[dict], variant: str | None, mode: str) -> dict[str, float]:
    """The kept processes' median against all processes' (replaced ones included): replacing processes measured
    under steal keeps the faster ones, so an absolute median reads low by this much (paired ratios do not)."""
    mine = [
        p
        for p in procs
        if (p.get("variant") or None) == (variant or None) and p["mode"] == mode and np.isfinite(p["median_s"])
    ]
    kept = [p["median_s"] for p in mine if not p["replaced"]]
    every = [p["median_s"] for p in mine]
    if not kept or len(every) == len(kept):
        return {}
    return {"kept_vs_all_processes": float(np.median(kept) / np.median(every))}


def _process_noise(r: ProcessResult) -> dict[str, Any]:
    """processes.csv's noise columns of one process (None: not accounted)."""
    return {**{k: getattr(r.noise, k) for k in NOISE_COLUMNS}, **r.noise.host_probe}


def _median_of(processes: list[ProcessResult], keys: tuple[str, ...]) -> dict:
    """Per key, the median over the processes that report it (integers stay integers)."""
    out = {}
    for key in keys:
        values = [getattr(r, key) for r in processes if getattr(r, key) is not None]
        if values:
            out[key] = int(np.median(values))
    return out


def paired_groups(results: list[ProcessResult], modes: tuple[str, ...]) -> tuple[list[str], list[np.ndarray]]:
    """The modes every sampled process has, and per process a (rounds x modes) array of samples."""
    sampled = [r for r in results if not r.failed]

    def has(r: ProcessResult, m: str) -> bool:
        return m in r.modes and r.modes[m].sampled

    live = [m for m in modes if sampled and all(has(r, m) for r in sampled)]
    groups = [np.column_stack([np.asarray(r.modes[m].samples_s) for m in live]) for r in sampled] if live else []
    return live, groups


def ci_met(results: list[ProcessResult], modes: tuple[str, ...], target: float) -> bool:
    """Whether the figures a job reports are within target: the speedups when modes are paired, else the medians
    (with variants: each variant's, and each variant's steady-state ratio to the baseline)."""
    if any(r.variants for r in results):
        return _variants_ci_met(results, modes, target)
    live, groups = paired_groups(results, modes)
    if not groups:
        return True
    if len(live) == 1:
        boot = hierarchical_medians(groups, n_resamples=1000)
        lo, hi = percentile_ci(boot[:, 0])
        return (hi - lo) / 2 / point_medians(groups)[0] <= target
    medians = process_medians(groups)
    within = hierarchical_medians(groups, n_resamples=1000) if len(groups) < 2 else None  # one process: its rounds
    for j in range(1, len(live)):
        speedup, lo, hi = speedup_interval(
            medians[:, 0], medians[:, j], within[:, 0] / within[:, j] if within is not None else None
        )
        if not (hi - lo) / 2 / speedup <= target:
            return False
    return True


def process_medians(groups: list[np.ndarray]) -> np.ndarray:
    """Per process (rows) and mode (columns), the median of the process's samples."""
    return np.stack([np.median(np.asarray(g, dtype=float).reshape(len(g), -1), axis=0) for g in groups])


def speedup_interval(
    base: np.ndarray, mode: np.ndarray, ratio_replicates: np.ndarray | None = None
) -> tuple[float, float, float]:
    """(speedup, ci_low, ci_high) of a mode over a baseline measured in the same processes, from each
    process's medians of the two.

    Over processes (two or more): the Hodges-Lehmann estimate of the per-process log(base / mode)
    (the median of their Walsh averages), exponentiated, and the 95% CI that inverts the Wilcoxon
    signed-rank test (stats.signed_rank_interval): coverage at least 95% when the per-process log
    speedups are symmetric about the truth; (0, inf) below 6 processes, where no 95% interval exists.
    One process: its ratio of medians, the CI the percentile interval of `ratio_replicates` (the
    rounds resampled: it describes that process only, ci_scope within_process).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(np.asarray(base, dtype=float) / np.asarray(mode, dtype=float))
    logs = logs[np.isfinite(logs)]
    if logs.size >= 2 or ratio_replicates is None:
        est, lo, hi, _ = signed_rank_interval(logs)
        return math.exp(est), math.exp(lo), math.exp(hi)
    lo, hi = percentile_ci(ratio_replicates)
    return float(math.exp(logs[0])) if logs.size else math.nan, lo, hi


def _variants_ci_met(results: list[ProcessResult], modes: tuple[str, ...], target: float) -> bool:
    names = list(dict.fromkeys(name for r in results for name in r.variants))
    if not all(ci_met([r.of_variant(name) for r in results], modes, target) for name in names):
        return False
    for name in names[1:]:
        for mode in modes:
            ab = ab_columns(names[0], variant_pairs(results, names[0], mode), variant_pairs(results, name, mode))
            if ab.get("ab_steady_n_pairs", 0) < 2:
                continue
            lo, hi, ratio = ab["ab_steady_ratio_ci_low"], ab["ab_steady_ratio_ci_high"], ab["ab_steady_ratio"]
            if not (hi - lo) / 2 / ratio <= target:
                return False
    return True


def variant_rows(
    cfg: ExperimentConfig, results: list[ProcessResult], stop_reason: str, base: dict, job_num: int, overrides: str
) -> list[dict]:
    """One row per (variant, mode), each as mode_rows makes it from that variant's own config and measurements,
    with a `variant` column; every other variant's rows get the ab_* columns against the first's same mode."""
    configs = variant_configs(cfg)
    rows = []
    for name, own in configs.items():
        ident = {**base, **identity_row(own, job_num, overrides), "variant": name}
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


def variant_pairs(results: list[ProcessResult], name: str, mode: str) -> dict[str, list]:
    """A variant's pair_values, one pair per process (every variant ran in its rounds)."""
    return pair_values([r.variants.get(name, {}).get(mode) for r in results])


def pair_values(measured: list[ModeResult | None]) -> dict[str, list]:
    """ab_columns' per-pair values from one ModeResult per pair (None, or a failed one: None values):
    steady = the median per-call time of its samples, first_call and compile = its cold first call's."""
    out: dict[str, list] = {metric: [] for metric in CHANGE_METRICS}
    for m in measured:
        m = m if m is not None and m.error is None else None
        samples = m.samples_s if m is not None else None
        cold = m.cold if m is not None else None
        out["steady"].append(float(np.median(samples)) if samples is not None and len(samples) else None)
        out["first_call"].append(cold.first_call_s if cold is not None else None)
        out["compile"].append(cold.compile_s if cold is not None else None)
    return out


def mode_rows(cfg: ExperimentConfig, results: list[ProcessResult], stop_reason: str, base: dict) -> list[dict]:
    """One results.csv row per mode: steady state, cold first call, paired speedup, extras."""
    live, groups = paired_groups(results, cfg.mode.names)
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


def paired(baseline: dict, row: dict, interval: tuple[float, float, float]) -> dict:
    """Speedup of row's mode over the baseline's (same processes, same rounds): `speedup_interval`'s
    (speedup, ci_low, ci_high), the verdict from that CI, break-even from the two modes' medians."""
    speedup, lo, hi = interval
    calls, ahead = break_even(
        baseline.get("first_call_s", math.nan), baseline["median_s"], row.get("first_call_s", math.nan), row["median_s"]
    )
    return {
        "baseline_mode": baseline["mode"],
        "speedup": speedup,
        "speedup_ci_low": lo,
        "speedup_ci_high": hi,
        "verdict": verdict(lo, hi),
        "break_even_calls": calls,
        "ahead_until_calls": ahead,
    }


def vs_numpy(interval: tuple[float, float, float]) -> dict:
    """Speedup of a mode over the NumPy twin measured in the same rounds (`speedup_interval`), its CI and verdict."""
    speedup, lo, hi = interval
    return {
        "speedup_vs_numpy": speedup,
        "speedup_vs_numpy_ci_low": lo,
        "speedup_vs_numpy_ci_high": hi,
        "verdict_vs_numpy": verdict(lo, hi),
    }


def _pct(value: float, limit: float) -> str:
    """A percentage that never reads as equal to the limit it exceeds (10.4% rather than 10%)."""
    text = f"{value:.0%}"
    return text if text != f"{limit:.0%}" else f"{value:.1%}"


def instability(row: dict, max_steal: float = 0.05) -> dict:
    """Flag a steady state that may not be one, with pyperf's thresholds (and CPU steal); the reasons say why."""
    reasons = []
    steal = row.get("steal_median")
    if steal is not None and steal > max_steal:
        reasons.append(f"CPU steal {_pct(steal, max_steal)} of the time (median process; limit {max_steal:.0%})")
    wait = row.get("run_queue_wait_median")
    if wait is not None and wait > max_steal:
        reasons.append(f"waited to run {_pct(wait, max_steal)} of the time (median process; limit {max_steal:.0%})")
    if row.get("compiles_during_timing", 0) > 0:
        reasons.append(f"{row['compiles_during_timing']} compile(s) while timed")
    spread = row.get("process_rel_spread", math.nan)
    if row.get("n_processes", 0) >= 3 and spread > MAX_SPREAD:
        reasons.append(f"process medians spread {_pct(spread, MAX_SPREAD)} (robust cv; limit {MAX_SPREAD:.0%})")
    median = row["median_s"]
    extreme = max(row["process_median_max_s"] / median - 1, 1 - row["process_median_min_s"] / median)
    if row.get("n_processes", 0) >= 2 and extreme > MAX_EXTREME:
        reasons.append(f"a process median lies {_pct(extreme, MAX_EXTREME)} from the median (limit {MAX_EXTREME:.0%})")
    within = row.get("within_process_rel_spread", math.nan)
    if within > MAX_SPREAD:
        reasons.append(
            f"samples within a process spread {_pct(within, MAX_SPREAD)} (robust cv; limit {MAX_SPREAD:.0%})"
        )
    cpus = row.get("cpu_count") or 1
    load = max(row.get("load_avg_start") or 0, row.get("load_avg_end") or 0)
    if other_load(load, cpus) > 0:
        reasons.append(
            f"other work on the machine (load average {load:.1f}: more than the job's own worker, "
            f"at most {own_load(cpus)} on {cpus} CPU(s))"
        )
    return {"unstable": bool(reasons), "unstable_reason": "; ".join(reasons)}


def own_load(cpus: int) -> int:
    """The most a job adds to the load average itself: one worker at a time, whose XLA thread pool keeps
    up to one thread per CPU runnable, plus its timing thread (the driver and forkserver sleep meanwhile)."""
    return cpus + 1


def other_load(load: float, cpus: int) -> float:
    """The part of a load average the job's own worker cannot account for: someone else's work (0 when none)."""
    return max(load - own_load(cpus), 0.0)


def long_rows(rows: list[dict], results: list[ProcessResult]) -> tuple[list[dict], list[dict], list[dict]]:
    """samples.csv, processes.csv and calls.csv rows."""
    key = {k: rows[0][k] for k in KEY_COLUMNS}
    samples: list[dict] = []
    procs: list[dict] = []
    calls: list[dict] = []
    for r in results:
        for mode, m in r.modes.items():
            ident = {**key, "mode": mode, "process": r.process}
            s = m.samples_s
            if m.cold is not None:
                procs.append(
                    {
                        **ident,
                        "cold_position": m.cold_position,
                        **vars(m.cold),
                        "rounds": len(s) if s is not None else 0,
                        "number": m.number,
                        "median_s": float(np.median(s)) if s is not None and len(s) else math.nan,
                        "compiles_during_timing": m.compiles_during_timing,
                        "stop_reason": m.stop_reason,
                        **_process_noise(r),
                    }
                )
            steal = r.noise.round_steal
            for i, value in enumerate(s if s is not None else ()):
                samples.append(
                    {
                        **ident,
                        "round": i,
                        "number": m.number,
                        "per_call_s": float(value),
                        "steal": steal[i] if i < len(steal) else None,
                    }
                )
            calls.extend({**key, "mode": mode, "probe": "cold", **c} for c in m.calls)
    return samples, procs, calls


def variant_long_rows(rows: list[dict], results: list[ProcessResult]) -> tuple[list[dict], list[dict], list[dict]]:
    """long_rows of each variant (its own rows and measurements), every record with its `variant`."""
    samples: list[dict] = []
    procs: list[dict] = []
    calls: list[dict] = []
    for name in dict.fromkeys(row["variant"] for row in rows):
        mine = long_rows([row for row in rows if row["variant"] == name], [r.of_variant(name) for r in results])
        for into, records in zip((samples, procs, calls), mine):
            into.extend({**record, "variant": name} for record in records)
    return samples, procs, calls


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


def sequence_rows(results: Mapping[str, ProcessResult], key: dict) -> list[dict]:
    """calls.csv rows of the retrace probe: each mode's calls, or one error record when its worker failed."""
    out: list[dict] = []
    for mode, result in results.items():
        failed: dict[str, Any] = {}
        if result.error is not None:
            failed = result.error.as_row()
        elif result.config_error is not None:
            failed = {"status": "error", "error_phase": "config"}
        m = result.modes.get(mode)
        records = (m.calls if m is not None else None) or [{"call": 1, **failed}]
        out.extend({**key, "mode": mode, "probe": "sequence", **r} for r in records)
    return out


def identity_row(cfg: ExperimentConfig, job_num: int, overrides: str) -> dict:
    """The columns that say which case a row is (mode filled per row)."""
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
    row.update(labels.inputs_columns(cfg.workload.setup))
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


def ab_columns(baseline: str, base: Mapping[str, list], new: Mapping[str, list]) -> dict[str, Any]:
    """The ab_* columns of a variant's (or env's) row against the baseline's, from aligned per-pair values.

    base[metric][i] and new[metric][i] come from pair i (one process for variants, a process pair
    for envs); a pair with a missing or non-positive value on either side is left out.
    """
    out: dict[str, Any] = {"ab_baseline": baseline}
    for metric in CHANGE_METRICS:
        pairs = [
            (float(a), float(b))
            for a, b in zip(base.get(metric, []), new.get(metric, []))
            if a is not None and b is not None and math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0
        ]
        if not pairs:
            continue
        change = paired_change([a for a, _ in pairs], [b for _, b in pairs])
        out[f"ab_{metric}_n_pairs"] = change.pop("n_pairs")
        out.update({f"ab_{metric}_{key}": value for key, value in change.items()})
    return out
