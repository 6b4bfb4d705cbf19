"""run(config) -> rows: plan the processes, collect their plain results, compute the statistics.

Callable from Python without Hydra. The driver imports no JAX: measurements run in fresh
worker processes (`isolate=process`) or, for debugging, in this process (`isolate=none`).
"""

from __future__ import annotations

import dataclasses
import math
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .config import MODES, ExperimentConfig, from_dict, input_bytes, validate
from .env import available_memory, load_avg
from .explain import explain
from .errors import ConfigError, failure, qualified_name
from .processes import Task, run_worker
from .stats import (
    break_even, hierarchical_medians, median_ci, percentile_ci, point_medians, robust_cv, summarize,
    tukey_outliers, verdict,
)

# pyperf warns when std >= 10% of the mean and when min or max lies more than 50% from the mean.
MAX_SPREAD = 0.10
MAX_EXTREME = 0.50
COLD_PHASES = ("trace_s", "lower_s", "compile_s", "execute_s")
EXTRA_FIELDS = (
    "dispatch_s", "finite_output", "flops", "transcendentals", "bytes_accessed", "argument_size_bytes",
    "output_size_bytes", "temp_size_bytes", "alias_size_bytes", "generated_code_size_bytes",
    "peak_memory_bytes", "max_abs_err_vs_eager", "max_rel_err_vs_eager", "matches_eager",
    "max_abs_err_vs_numpy", "max_rel_err_vs_numpy", "matches_numpy",
    "eager_ops", "eager_bytes", "jaxpr_eqns", "xla_kernels", "xla_fusions", "arithmetic_intensity", "op_dispatch_s",
    "donation",
)


@dataclass
class JobResult:
    """What one job measured: results.csv rows (one per mode), samples, processes and calls rows."""

    rows: list[dict]
    samples: list[dict] = field(default_factory=list)
    processes: list[dict] = field(default_factory=list)
    calls: list[dict] = field(default_factory=list)

    @property
    def row(self) -> dict:
        """The row of a single-mode job."""
        if len(self.rows) != 1:
            raise ValueError(f"this job measured {len(self.rows)} modes: use .rows or .by_mode(name)")
        return self.rows[0]

    def by_mode(self, mode: str) -> dict:
        """The row of one mode."""
        for row in self.rows:
            if row["mode"] == mode:
                return row
        raise KeyError(mode)


def run(cfg: ExperimentConfig | Mapping, *, job_num: int = 0, overrides: str = "") -> JobResult:
    """Measure one case in its modes; config mistakes raise ConfigError, failures become error rows."""
    cfg = validate(cfg) if isinstance(cfg, ExperimentConfig) else from_dict(cfg)
    check_memory(cfg)
    load_start = load_avg()
    processes, stop_reason = collect(cfg)
    first = processes[0]
    if first.get("config_error"):
        e = first["config_error"]
        raise ConfigError(e["key"], e["value"], e["expected"])
    base = identity_row(cfg, job_num, overrides)
    base.update(platform=first.get("platform"), device_kind=first.get("device_kind"),
                load_avg_start=load_start, **first.get("environment", {}),
                cpu_async_dispatch=first.get("cpu_async_dispatch"), isolate=cfg.isolate,
                modes=",".join(cfg.mode.names), measure_s=sum(r.get("measure_s", 0.0) for r in processes),
                **_median_of(processes, ("peak_rss_growth_bytes", "device_peak_bytes")))
    rows = mode_rows(cfg, processes, stop_reason, base)
    cache = disk_cache(cfg)
    for row in rows:
        row.update(cache.get(row["mode"], {}))
    base_load_end = load_avg()
    for row in rows:
        row["load_avg_end"] = base_load_end
        if row["status"] == "ok":
            row.update(instability(row))
    samples, procs, calls = _long_rows(rows, processes)
    calls.extend(sequence_rows(cfg, rows[0]))
    return JobResult(rows, samples, procs, calls)


def disk_cache(cfg: ExperimentConfig) -> dict[str, dict]:
    """With compilation_cache_dir set: per compiled mode, a cold first call that writes a fresh cache
    directory and one in another fresh worker that reads it back (cache_* columns)."""
    modes = tuple(m for m in cfg.mode.names if m in ("jit", "aot"))
    if cfg.compilation_cache_dir is None or not modes:
        return {}
    root = Path(cfg.compilation_cache_dir).expanduser()
    root.mkdir(parents=True, exist_ok=True)
    probe_dir = tempfile.mkdtemp(prefix="jitexp-cache-probe-", dir=root)
    probe = dataclasses.replace(cfg, compilation_cache_dir=probe_dir)
    try:
        cold, warm = (_run(Task(probe, 0, modes, extras=False, fresh=cfg.isolate != "none", kind="cache"), cfg)
                      for _ in range(2))
    finally:
        shutil.rmtree(probe_dir, ignore_errors=True)
    out = {}
    for mode in modes:
        c, w = cold["modes"].get(mode, {}), warm["modes"].get(mode, {})
        if "first_call_s" not in c or "first_call_s" not in w:
            continue
        out[mode] = {"cache_cold_first_call_s": c["first_call_s"], "cache_warm_first_call_s": w["first_call_s"],
                     "cache_cold_compile_s": c["compile_s"], "cache_warm_compile_s": w["compile_s"],
                     "cache_warm_trace_s": w["trace_s"], "cache_warm_lower_s": w["lower_s"],
                     "cache_hit": w["cache_hits"] > 0 and w["cache_misses"] == 0}
    return out


def _run(task: Task, cfg: ExperimentConfig) -> dict:
    """One task in a fresh worker, or in this process for isolate=none."""
    if cfg.isolate == "none":
        from .worker import measure_process  # imports JAX into this process

        return measure_process(task)
    return run_worker(task, cfg.timing.timeout_s)


def sequence_rows(cfg: ExperimentConfig, row: dict) -> list[dict]:
    """calls.csv rows of the retrace probe: each compiled mode (and eager) in a fresh worker of its own."""
    if not cfg.sequence:
        return []
    key = {k: row[k] for k in ("job_num", "workload", "size")}
    out = []
    for mode in (m for m in cfg.mode.names if m != "numpy"):
        result = _run(Task(cfg, 0, (mode,), extras=False, fresh=cfg.isolate != "none", kind="sequence"), cfg)
        failed = result.get("error") or (result.get("config_error") and {"status": "error", "error_phase": "config"})
        records = result["modes"].get(mode, {}).get("calls") or [{"call": 1, **(failed or {})}]
        out.extend({**key, "mode": mode, "probe": "sequence", **r} for r in records)
    return out


def _median_of(processes: list[dict], keys: tuple[str, ...]) -> dict:
    """Per key, the median over the processes that report it (integers stay integers)."""
    out = {}
    for key in keys:
        values = [r[key] for r in processes if r.get(key) is not None]
        if values:
            out[key] = int(np.median(values))
    return out


def check_memory(cfg: ExperimentConfig) -> None:
    """Refuse, before anything is allocated, a job whose inputs cannot fit in available memory."""
    need, available = input_bytes(cfg), available_memory()
    if available is not None and need > available:
        raise ConfigError("size", cfg.size, f"the inputs need about {need / 2**30:.1f} GiB to build, "
                                            f"and {available / 2**30:.1f} GiB of memory is available")


def collect(cfg: ExperimentConfig) -> tuple[list[dict], str]:
    """Plain results of the job's processes, and why no more were started.

    `timing.processes` fresh processes at least; more, up to `timing.max_processes`, while a
    CI is wider than `timing.target_rel_ci` and the job has run less than `timing.job_time_s`.
    """
    t = cfg.timing
    if cfg.isolate == "none":
        from .worker import measure_process  # imports JAX into this process

        return [measure_process(Task(cfg, 0, cfg.mode.names, max(cfg.calls, 1), True, fresh=False))], "isolate=none"
    results: list[dict] = []
    modes = cfg.mode.names
    start = time.perf_counter()
    while True:
        p = len(results)
        task = Task(cfg, p, modes, max(cfg.calls, 1) if p == 0 else 1, extras=p == 0)
        result = run_worker(task, t.timeout_s)
        results.append(result)
        if result.get("config_error") or result.get("error"):
            return results, "error"
        modes = tuple(m for m in modes if not result["modes"].get(m, {}).get("error"))
        if not modes:
            return results, "error"
        n = len(results)
        if n < t.processes:
            continue
        if n >= t.max_processes:
            return results, "max_processes"
        if time.perf_counter() - start >= t.job_time_s:
            return results, "budget"
        if ci_met(results, cfg):
            return results, "ci"


def ci_met(results: list[dict], cfg: ExperimentConfig) -> bool:
    """Whether the figures the job reports are within target: the speedups when modes are paired, else the medians."""
    live, groups = _paired_groups(results, cfg.mode.names)
    if not groups:
        return True
    boot = hierarchical_medians(groups, n_resamples=1000)
    point = point_medians(groups)
    target = cfg.timing.target_rel_ci
    if len(live) == 1:
        lo, hi = percentile_ci(boot[:, 0])
        return (hi - lo) / 2 / point[0] <= target
    ratios = boot[:, :1] / boot[:, 1:]
    for j in range(ratios.shape[1]):
        lo, hi = percentile_ci(ratios[:, j])
        if (hi - lo) / 2 / (point[0] / point[j + 1]) > target:
            return False
    return True


def _paired_groups(results: list[dict], modes: tuple[str, ...]) -> tuple[list[str], list[np.ndarray]]:
    """The modes every sampled process has, and per process a (rounds x modes) array of samples."""
    sampled = [r for r in results if not r.get("error") and not r.get("config_error")]
    live = [m for m in modes if sampled and all("samples_s" in r["modes"].get(m, {}) for r in sampled)]
    groups = [np.column_stack([r["modes"][m]["samples_s"] for m in live]) for r in sampled] if live else []
    return live, groups


def mode_rows(cfg: ExperimentConfig, results: list[dict], stop_reason: str, base: dict) -> list[dict]:
    """One results.csv row per mode: steady state, cold first call, paired speedup, extras."""
    live, groups = _paired_groups(results, cfg.mode.names)
    boot = hierarchical_medians(groups) if groups else None
    point = point_medians(groups) if groups else None
    n_proc = len(groups)
    rows = []
    for mode in cfg.mode.names:
        row = {**base, "mode": mode, "status": "ok"}
        row.update(_error(results, mode))
        row.update(_cold(results, mode))
        row.update({k: v for k, v in results[0]["modes"].get(mode, {}).items() if k in EXTRA_FIELDS})
        if mode in live:
            j = live.index(mode)
            row.update(_steady(results, mode, point[j], boot[:, j], cfg.timing.target_rel_ci))
            row.update(n_processes=n_proc, stop_reason=stop_reason,
                       ci_scope="between_processes" if n_proc > 1 else "within_process")
            if row.get("flops"):
                row["gflops_per_s"] = row["flops"] / row["median_s"] / 1e9
            if row.get("bytes_accessed"):
                row["gbytes_per_s"] = row["bytes_accessed"] / row["median_s"] / 1e9
        rows.append(row)
    if boot is not None and len(live) > 1:
        baseline = next(r for r in rows if r["mode"] == live[0])
        for j, mode in enumerate(live[1:], start=1):
            row = next(r for r in rows if r["mode"] == mode)
            row.update(paired(baseline, row, boot[:, 0] / boot[:, j]))
            if baseline["mode"] == "eager" and mode in ("jit", "aot"):
                row.update(explain(baseline, row))
        if "numpy" in live:
            k = live.index("numpy")
            for j, mode in enumerate(live):
                if j != k:
                    row = next(r for r in rows if r["mode"] == mode)
                    row.update(vs_numpy(point[k] / point[j], boot[:, k] / boot[:, j]))
    return rows


def _error(results: list[dict], mode: str) -> dict:
    """The first error that hit this mode (or the whole process), else nothing."""
    for r in results:
        if r.get("error"):
            return r["error"]
        err = r["modes"].get(mode, {}).get("error")
        if err:
            return err
    return {}


def _cold(results: list[dict], mode: str) -> dict:
    """The cold first call: the median process's call and its parts, so they add up; a CI over processes."""
    cold = [r["modes"][mode] for r in results if "first_call_s" in r["modes"].get(mode, {})]
    if not cold:
        return {}
    ordered = sorted(cold, key=lambda c: c["first_call_s"])
    middle = ordered[(len(ordered) - 1) // 2]  # the lower median: an observed call whose parts add up
    lo, hi = median_ci([c["first_call_s"] for c in cold])
    return {"first_call_s": middle["first_call_s"], **{k: middle[k] for k in COLD_PHASES},
            "first_call_compiles": middle["first_call_compiles"],
            "first_call_ci95_low_s": lo, "first_call_ci95_high_s": hi}


def _steady(results: list[dict], mode: str, median: float, replicates: np.ndarray, target: float) -> dict:
    per_process = [r["modes"][mode] for r in results if "samples_s" in r["modes"].get(mode, {})]
    pooled = np.concatenate([p["samples_s"] for p in per_process])
    lo, hi = percentile_ci(replicates)
    medians = [float(np.median(p["samples_s"])) for p in per_process]
    s = summarize(pooled)
    half = (hi - lo) / 2 / median
    return {
        **{k: v for k, v in s.as_row().items() if k not in ("median_s", "ci95_low_s", "ci95_high_s", "n_outliers")},
        "median_s": median, "ci95_low_s": lo, "ci95_high_s": hi, "rel_ci_halfwidth": half,
        "ci_target_met": bool(half <= target),
        "number": int(np.median([p["number"] for p in per_process])),
        "n_outliers": sum(tukey_outliers(p["samples_s"]) for p in per_process),
        "compiles_during_timing": sum(p["compiles_during_timing"] for p in per_process),
        "process_rel_spread": robust_cv(medians) if len(medians) > 1 else math.nan,
        "within_process_rel_spread": float(np.median([robust_cv(p["samples_s"]) for p in per_process])),
        "process_median_min_s": min(medians), "process_median_max_s": max(medians),
    }


def paired(baseline: dict, row: dict, ratio_replicates: np.ndarray) -> dict:
    """Speedup of row's mode over the baseline's (same processes, same rounds), its CI, verdict, break-even."""
    lo, hi = percentile_ci(ratio_replicates)
    calls, ahead = break_even(baseline.get("first_call_s", math.nan), baseline["median_s"],
                              row.get("first_call_s", math.nan), row["median_s"])
    return {"baseline_mode": baseline["mode"], "speedup": baseline["median_s"] / row["median_s"],
            "speedup_ci_low": lo, "speedup_ci_high": hi, "verdict": verdict(lo, hi),
            "break_even_calls": calls, "ahead_until_calls": ahead}


def vs_numpy(speedup: float, ratio_replicates: np.ndarray) -> dict:
    """Speedup of a mode over the NumPy twin measured in the same rounds, its CI and verdict."""
    lo, hi = percentile_ci(ratio_replicates)
    return {"speedup_vs_numpy": speedup, "speedup_vs_numpy_ci_low": lo, "speedup_vs_numpy_ci_high": hi,
            "verdict_vs_numpy": verdict(lo, hi)}


def _pct(value: float, limit: float) -> str:
    """A percentage that never reads as equal to the limit it exceeds (10.4% rather than 10%)."""
    text = f"{value:.0%}"
    return text if text != f"{limit:.0%}" else f"{value:.1%}"


def instability(row: dict) -> dict:
    """Flag a steady state that may not be one, with pyperf's thresholds; the reasons say why."""
    reasons = []
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
        reasons.append(f"samples within a process spread {_pct(within, MAX_SPREAD)} (robust cv; limit {MAX_SPREAD:.0%})")
    cpus = row.get("cpu_count") or 1
    load = max(row.get("load_avg_start") or 0, row.get("load_avg_end") or 0)
    if load > cpus:
        reasons.append(f"load average {load:.1f} above {cpus} CPU(s)")
    return {"unstable": bool(reasons), "unstable_reason": "; ".join(reasons)}


def _long_rows(rows: list[dict], results: list[dict]) -> tuple[list[dict], list[dict], list[dict]]:
    """samples.csv, processes.csv and calls.csv rows."""
    key = {k: rows[0][k] for k in ("job_num", "workload", "size")}
    samples, procs, calls = [], [], []
    for r in results:
        for mode, m in r["modes"].items():
            ident = {**key, "mode": mode, "process": r["process"]}
            if "first_call_s" in m:
                s = m.get("samples_s")
                procs.append({**ident, "cold_position": m["cold_position"], "first_call_s": m["first_call_s"],
                              **{k: m[k] for k in COLD_PHASES}, "first_call_compiles": m["first_call_compiles"],
                              "rounds": len(s) if s is not None else 0, "number": m.get("number"),
                              "median_s": float(np.median(s)) if s is not None and len(s) else math.nan,
                              "compiles_during_timing": m.get("compiles_during_timing"),
                              "stop_reason": m.get("stop_reason")})
            for i, value in enumerate(m.get("samples_s", ())):
                samples.append({**ident, "round": i, "number": m["number"], "per_call_s": float(value)})
            calls.extend({**key, "mode": mode, "probe": "cold", **c} for c in m.get("calls", ()))
    return samples, procs, calls


def identity_row(cfg: ExperimentConfig, job_num: int, overrides: str) -> dict:
    """The columns that say which case a row is (mode filled per row)."""
    row = _identity(cfg.workload_name, None, cfg.size, cfg.dtype, list(cfg.static_argnums),
                    cfg.workload.params, cfg.seed, job_num, overrides)
    row.update(jit_options(cfg.mode.donate_argnums, cfg.mode.compiler_options))
    return row


def jit_options(donate_argnums: Any, compiler_options: Any) -> dict:
    """jit's own knobs as row text: donate_argnums like static_argnums, compiler_options as sorted key=value pairs."""
    options = dict(compiler_options or {})
    return {"donate_argnums": str(list(donate_argnums or [])),
            "compiler_options": ",".join(f"{k}={options[k]}" for k in sorted(options))}


def _identity(workload, mode, size, dtype, statics, params: Mapping, seed, job_num: int, overrides: str) -> dict:
    return {"workload": workload, "mode": mode, "size": size, "dtype": dtype, "static_argnums": str(statics),
            **{f"param_{k}": v for k, v in params.items()},
            "seed": seed, "job_num": job_num, "overrides": overrides}


def config_error_result(cfg: Mapping, error: ConfigError, *, job_num: int = 0, overrides: str = "") -> JobResult:
    """A status=error row for a sweep job whose config is invalid, so the sweep still records it."""
    from omegaconf import OmegaConf

    def pick(key: str) -> Any:
        try:
            return OmegaConf.select(cfg, key, default=None)
        except Exception:  # the very value that made the config invalid may not resolve
            return None

    params = {k: pick(f"workload.params.{k}") for k in (pick("workload.params") or {})}
    statics = pick("mode.static_argnums")
    statics = statics if statics is not None else pick("workload.static_argnums")
    name = pick("workload.name") or str(pick("workload.fn") or "").rsplit(".", 1)[-1]
    modes = [m for m in MODES if pick(f"mode.{m}")] or [None]
    rows = []
    for mode in modes:
        row = _identity(name, mode, pick("size"), pick("dtype"), list(statics or []), params,
                        pick("seed"), job_num, overrides)
        row.update(jit_options(pick("mode.donate_argnums"), pick("mode.compiler_options")))
        row.update(failure("config", qualified_name(type(error)), str(error), f"fix {error.key}"))
        rows.append(row)
    return JobResult(rows)
