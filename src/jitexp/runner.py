"""run(config) -> rows: one whole job, callable from Python without Hydra."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

import jax
import numpy as np

from . import workloads
from .compiles import CompileCounter
from .config import DeviceConfig, ExperimentConfig, from_dict, validate
from .env import environment, jax_flag, load_avg
from .errors import ConfigError, PhaseError, first_line, hint_for, phase, qualified_name
from .modes import cold_calls, compile_phases, cost_of
from .stats import summarize
from .timing import default_block, dispatch_times, measure

# Normwise relative error allowed between a compiled result and eager's, per dtype:
# XLA may fuse and reorder reductions, so bitwise equality is not expected.
TOLERANCE = {"float16": 1e-2, "bfloat16": 5e-2, "float32": 1e-4, "float64": 1e-10}
MAX_CV = 0.10
MAX_OUTLIER_FRACTION = 0.10


@dataclass
class JobResult:
    """What one job measured: results.csv rows, samples.csv rows, calls.csv rows."""

    rows: list[dict]
    samples: list[dict] = field(default_factory=list)
    calls: list[dict] = field(default_factory=list)

    @property
    def row(self) -> dict:
        return self.rows[0]


def run(cfg: ExperimentConfig | Mapping, *, job_num: int = 0, overrides: str = "") -> JobResult:
    """Measure one case; config mistakes raise ConfigError, failures in a phase become an error row."""
    cfg = validate(cfg) if isinstance(cfg, ExperimentConfig) else from_dict(cfg)
    name, fn, statics = workloads.resolve(cfg)
    cpu_async = start_backends(cfg.cpu_async_dispatch)
    device = resolve_device(cfg.device)
    row = identity_row(cfg, job_num, overrides)
    row.update(platform=device.platform, device_kind=device.device_kind, load_avg_start=load_avg())
    samples: list[dict] = []
    calls: list[dict] = []
    with jax_settings(cfg), jax.default_device(device):
        warm_backend(device)
        try:
            _measure(cfg, name, fn, statics, device, row, samples, calls)
            row.update(status="ok")
        except PhaseError as exc:
            row.update(error_fields(exc.phase, exc.cause))
        row.update(environment(), cpu_async_dispatch=cpu_async)
    row["load_avg_end"] = load_avg()
    if row["status"] == "ok":
        row.update(_instability(row))
    key = {k: row[k] for k in ("job_num", "workload", "mode", "size")}
    return JobResult([row], [{**key, **s} for s in samples], [{**key, **c} for c in calls])


def _measure(cfg: ExperimentConfig, name: str, fn, statics, device, out: dict, samples: list, calls: list) -> None:
    """Every phase of one case, filling `out` as it goes so a later phase's failure keeps earlier figures."""
    mode, block, t = cfg.mode.name, default_block, cfg.timing
    with phase("inputs"):
        args = workloads.build_args(cfg, device)
    w = workloads.Workload(name, fn, args, statics)

    if mode != "eager":
        phases = [compile_phases(w) for _ in range(t.cold_repeats)]
        for stage in ("trace_s", "lower_s", "compile_s"):
            out[stage] = float(np.median([getattr(p, stage) for p in phases]))
        out.update(cost_of(phases[0].compiled))
        del phases

    with phase("execute"):
        firsts = []
        for repeat in range(t.cold_repeats):
            n = cfg.calls if repeat == 0 and cfg.calls > 0 else 1
            call, records, _ = cold_calls(w, mode, n, block)
            firsts.append(records[0].call_s)
            if repeat == 0 and cfg.calls > 0:
                calls.extend(vars(r) for r in records)
        out["first_call_s"] = float(np.median(firsts))

        counter = CompileCounter()
        m = measure(call, t, block, sampling=counter)
        out["compiles_during_timing"] = counter.count
        out["dispatch_s"] = float(np.median(dispatch_times(call, block, t.dispatch_probes)))
    summary = summarize(m.samples_s)
    out.update(summary.as_row(), number=m.number, stop_reason=m.stop_reason,
               rel_ci_halfwidth=summary.rel_ci_halfwidth)
    samples.extend({"sample": i, "number": m.number, "per_call_s": s} for i, s in enumerate(m.samples_s))
    if out.get("flops"):
        out["gflops_per_s"] = out["flops"] / summary.median_s / 1e9
    if out.get("bytes_accessed"):
        out["gbytes_per_s"] = out["bytes_accessed"] / summary.median_s / 1e9

    if cfg.check and mode != "eager":
        with phase("check"):
            reference = block(fn(*args))
            out.update(compare(m.last_output, reference, cfg.dtype))


_warmed: set = set()


def warm_backend(device) -> None:
    """Pay the process's one-time backend start-up before the first cold measurement.

    Without it the first job of a process reports compile times inflated by XLA/LLVM
    initialisation that no later job (and no user's second compile) ever pays.
    """
    key = (device.platform, device.id)
    if key in _warmed:
        return
    x = jax.device_put(np.linspace(0.0, 1.0, 16, dtype=np.float32).reshape(4, 4), device)
    jax.block_until_ready((jax.jit(lambda v: jax.numpy.sin(v) @ v)(x), jax.numpy.cos(x) + x))
    _warmed.add(key)


def compare(result: Any, reference: Any, dtype: str) -> dict:
    """Max abs and normwise relative error of result vs reference, and whether they match for dtype.

    NaN in the same places counts as equal; NaN on one side only is a mismatch (errors inf).
    """
    if jax.tree.structure(result) != jax.tree.structure(reference):
        return {"matches_eager": False}
    max_abs, scale = 0.0, 0.0
    for a, b in zip(jax.tree.leaves(result), jax.tree.leaves(reference)):
        a, b = _as_numbers(a), _as_numbers(b)
        if a.shape != b.shape:
            return {"matches_eager": False}
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        if np.any(nan_a != nan_b):
            return {"max_abs_err_vs_eager": float("inf"), "max_rel_err_vs_eager": float("inf"),
                    "matches_eager": False}
        max_abs = max(max_abs, float(np.max(np.abs(np.where(nan_a, 0, a - b)), initial=0.0)))
        scale = max(scale, float(np.max(np.abs(np.where(nan_b, 0, b)), initial=0.0)))
    rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    return {"max_abs_err_vs_eager": max_abs, "max_rel_err_vs_eager": rel,
            "matches_eager": bool(rel <= TOLERANCE.get(dtype, 1e-4))}


def _as_numbers(x: Any) -> np.ndarray:
    x = np.asarray(x)
    return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)


def _instability(row: dict) -> dict:
    """Flag a steady state that may not be one; the reasons say why (nothing is dropped)."""
    reasons = []
    if row.get("compiles_during_timing", 0) > 0:
        reasons.append(f"{row['compiles_during_timing']} compile(s) during timing")
    if row.get("stop_reason") != "ci":
        reasons.append(f"CI target not met by {row.get('stop_reason')} (half-width {row['rel_ci_halfwidth']:.1%})")
    if row.get("cv", 0) > MAX_CV:
        reasons.append(f"cv {row['cv']:.2f} > {MAX_CV}")
    if row.get("n_outliers", 0) > MAX_OUTLIER_FRACTION * row.get("n_samples", 1):
        reasons.append(f"{row['n_outliers']} outliers in {row['n_samples']} samples")
    cpus = row.get("cpu_count") or 1
    if max(row.get("load_avg_start", 0), row.get("load_avg_end", 0)) > cpus:
        reasons.append(f"load average above {cpus} cpu(s)")
    return {"unstable": bool(reasons), "unstable_reason": "; ".join(reasons)}


def error_fields(phase_name: str, exc: BaseException) -> dict:
    """The outcome columns of a failed case."""
    return {"status": "error", "error_phase": phase_name, "error_type": qualified_name(type(exc)),
            "error_message": first_line(exc), "hint": hint_for(exc)}


def identity_row(cfg: ExperimentConfig, job_num: int, overrides: str) -> dict:
    """The columns that say which case a row is."""
    return _identity(cfg.workload_name, cfg.mode.name, cfg.size, cfg.dtype, list(cfg.static_argnums),
                     cfg.workload.params, cfg.seed, job_num, overrides)


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
    row = _identity(name, pick("mode.name"), pick("size"), pick("dtype"), list(statics or []), params,
                    pick("seed"), job_num, overrides)
    row.update(status="error", error_phase="config", error_type=qualified_name(type(error)),
               error_message=str(error), hint=f"fix {error.key}")
    return JobResult([row])


def resolve_device(dc: DeviceConfig):
    """The jax.Device the config names, or a ConfigError listing what this machine has."""
    try:
        devices = jax.devices() if dc.platform == "auto" else jax.devices(dc.platform)
    except RuntimeError:
        raise ConfigError("device.platform", dc.platform,
                          f"not available on this machine; available: {', '.join(available_platforms())}, auto") from None
    if dc.index >= len(devices):
        raise ConfigError("device.index", dc.index, f"this machine has {len(devices)} {devices[0].platform} device(s)")
    return devices[dc.index]


def available_platforms() -> list[str]:
    found = []
    for name in ("cpu", "gpu", "tpu"):
        try:
            jax.devices(name)
            found.append(name)
        except RuntimeError:
            pass
    return found


_cpu_async: bool | None = None


def start_backends(cpu_async_dispatch: bool | None) -> bool:
    """Create JAX's clients (once per process) and return the CPU async-dispatch setting they use.

    JAX reads jax_cpu_enable_async_dispatch only when the CPU client is created, so it can be
    chosen for the first job of a process only; asking for another value later is an error.
    """
    global _cpu_async
    key = "jax_cpu_enable_async_dispatch"
    if _cpu_async is None:
        if cpu_async_dispatch is not None:
            jax.config.update(key, cpu_async_dispatch)
        jax.devices()
        _cpu_async = bool(jax_flag(key))
    elif cpu_async_dispatch is not None and cpu_async_dispatch != _cpu_async:
        raise ConfigError("cpu_async_dispatch", cpu_async_dispatch,
                          f"this process's CPU client was created with {_cpu_async} and keeps it; "
                          "sweep over it with hydra/launcher=submitit_local (a process per job)")
    return _cpu_async


@contextmanager
def jax_settings(cfg: ExperimentConfig) -> Iterator[None]:
    """Set the job's JAX flags (x64, persistent compilation cache) and restore them after."""
    wanted: dict[str, Any] = {
        "jax_enable_x64": workloads.needs_x64(cfg),
        "jax_enable_compilation_cache": cfg.compilation_cache_dir is not None,
    }
    if cfg.compilation_cache_dir is not None:
        wanted["jax_compilation_cache_dir"] = cfg.compilation_cache_dir
        wanted["jax_persistent_cache_min_compile_time_secs"] = 0.0
    previous = {key: jax_flag(key) for key in wanted}
    try:
        for key, value in wanted.items():
            jax.config.update(key, value)
        _reset_persistent_cache()
        yield
    finally:
        for key, value in previous.items():
            jax.config.update(key, value)
        _reset_persistent_cache()


def _reset_persistent_cache() -> None:
    # JAX decides once per process whether the persistent cache is used; without a reset a
    # job's compilation_cache_dir would be ignored after any earlier job (private API, jax 0.10).
    from jax._src import compilation_cache

    compilation_cache.reset_cache()
