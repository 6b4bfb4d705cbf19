"""What runs inside one measuring process: inputs, cold first calls, interleaved rounds -> a ProcessResult.

`measure_process(task)` returns a `records.ProcessResult` of builtins and NumPy arrays (never
JAX objects), so it crosses a pipe from a fresh worker process; `isolate=none` calls it in-process.
Importing this module imports JAX but creates no backend, so a forkserver may preload it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import jax
import numpy as np

from jitexp import noise
from jitexp.config import DeviceConfig, ExperimentConfig, sizing, variant_configs
from jitexp.errors import ConfigError, PhaseError, failure_of, first_line, phase, qualified_name
from jitexp.records import Cold, ConfigProblem, ModeResult, Noise, ProcessResult, Task
from jitexp.worker import compiles, memory, misses, payload, probes, workload
from jitexp.worker.attribution import jaxpr_counts, op_dispatch_s
from jitexp.worker.compiles import CompileCounter
from jitexp.worker.jaxinfo import environment, jax_flag
from jitexp.worker.modes import Carry, ColdCall, cold_call, cost_of
from jitexp.worker.timing import dispatch_times, measure_rounds, rotation

# Normwise relative error allowed between a compiled result and eager's, per dtype:
# XLA may fuse and reorder reductions, so bitwise equality is not expected.
TOLERANCE = {"float16": 1e-2, "bfloat16": 5e-2, "float32": 1e-4, "float64": 1e-10}


_conn: Any = None


def entry(task: Task, conn: Any) -> None:
    """Worker-process entry point: measure, reporting each phase, then send the plain result through conn."""
    global _conn
    if task.sys_path:
        sys.path[:] = task.sys_path
    if task.cwd:
        os.chdir(task.cwd)
    if task.cfg.cpu_affinity:
        from threadpoolctl import threadpool_limits

        os.sched_setaffinity(0, task.cfg.cpu_affinity)  # before JAX sizes its thread pools
        threadpool_limits(len(task.cfg.cpu_affinity), user_api="blas")  # NumPy's BLAS threads: as many
    _conn = conn
    try:
        result = measure_process(task)
    except KeyboardInterrupt:  # raised inside the workload (a callback): the driver stops the run
        conn.send(("interrupt", None))
        return
    conn.send(("result", result))
    conn.close()


def enter_phase(phase_name: str) -> None:
    """Tell the driver which phase this worker is in (a timeout or crash row names it)."""
    if _conn is not None:
        _conn.send(("phase", phase_name))


def measure_process(task: Task) -> ProcessResult:
    """Every phase of one process's measurement; failures become error fields, never exceptions."""
    cfg = task.cfg
    started = time.perf_counter()
    result = ProcessResult(task.process)
    variants = variant_configs(cfg) if task.kind == "measure" else {}
    try:
        by_path = task.payload is None  # else jitexp.measure's payload brings fn, jit_fn and the inputs ("inputs")
        loaded = {name: import_functions(job, name) for name, job in (variants or {"": cfg}).items()} if by_path else {}
        result.cpu_async_dispatch = start_backends(cfg.cpu_async_dispatch)
        device = resolve_device(cfg.device)
    except ConfigError as error:
        result.config_error = ConfigProblem(error.key, error.value, error.expected)
        return result
    result.platform, result.device_kind = device.platform, device.device_kind
    with jax_settings(
        next(iter(variants.values()), cfg),
        x64=(task.payload is not None and task.payload.x64)
        or (task.kind == "sequence" and any(workload.needs_x64(variant_cfg(cfg, v)) for v in cfg.sequence)),
    ):
        warm_backend(device)
        result.environment = {**environment(), **pinning()}
        if task.kind == "measure":
            result.noise.host_probe = probes.host_probe()
        rss_before = memory.reset_peak_rss()
        if variants:
            sampled = _measure_variants(task, variants, loaded, device, result)
        else:
            f: Functions | None = None
            try:
                enter_phase("inputs")
                if task.payload is not None:  # unpickled here, under the job's device and JAX settings
                    with phase("inputs"):
                        fn, jit_fn, setup = payload.unpack(task.payload, cfg.jit_fn, workload.placement(device))
                    f = Functions(fn, None, setup, jit_fn)
                else:
                    f = loaded[""]
                    if f.setup is not None and task.process == 0:  # same shapes everywhere: once per job
                        check_setup_memory(f.setup, cfg, len(task.modes or cfg.mode.names))
                inputs = input_builder(cfg, f, device, result)
                w = inputs()
            except ConfigError as error:
                result.config_error = ConfigProblem(error.key, error.value, error.expected)
                return result
            except PhaseError as exc:
                result.error = failure_of(exc.phase, exc.cause)
                if by_path and f is not None and f.setup is not None:
                    result.error.hint = result.error.hint or raised_at(exc.cause, "workload.setup")
                return result
            # The steady state runs outside any device context (the inputs carry the device); the probes inside.
            with workload.on_device(device) if task.kind != "measure" else contextlib.nullcontext():
                sampled = KINDS[task.kind](task, w, result.modes, inputs if f.setup is not None else lambda job=cfg: w)
        if sampled is not None:
            result.noise = dataclasses.replace(sampled, host_probe=result.noise.host_probe)
        result.peak_rss_growth_bytes, result.device_peak_bytes = memory.growth(rss_before, device)
    result.measure_s = time.perf_counter() - started
    return result


@dataclasses.dataclass
class Functions:
    """The callables a config names, imported in the worker: the function, its twin, setup, the jit transformation."""

    fn: Callable
    numpy_fn: Callable | None
    setup: Callable | None
    jit_fn: Callable


def import_functions(cfg: ExperimentConfig, variant: str = "") -> Functions:
    """Import what cfg names; a ConfigError names the key (under `variants.NAME.` for a variant's)."""
    try:
        return Functions(
            workload.import_fn(cfg.workload.fn),
            workload.import_fn(cfg.workload.numpy_fn, "workload.numpy_fn")
            if cfg.mode.numpy and cfg.workload.numpy_fn
            else None,
            workload.import_fn(cfg.workload.setup, "workload.setup") if cfg.workload.setup else None,
            workload.import_fn(cfg.jit_fn, "mode.jit_fn" if cfg.mode.jit_fn else "workload.jit_fn"),
        )
    except ConfigError as error:
        if not variant:
            raise
        raise ConfigError(f"variants.{variant}.{error.key}", error.value, error.expected) from None


def input_builder(cfg: ExperimentConfig, f: Functions, device: Any, result: ProcessResult) -> Inputs:
    """A function giving each caller its own inputs for a config (setup_s of the first build is the process's).

    The job's own config is built once per process: later calls get a copy of every array of a copy held
    back from that build (a slow setup, such as a flax init, no longer runs once per mode). Inputs with
    leaves that are not arrays or immutable values (a stateful object) are built afresh each time, as
    are other configs (a sequence's variants).
    """
    held: list[workload.Workload] = []

    def inputs(job: ExperimentConfig = cfg) -> workload.Workload:
        with phase("inputs"), workload.on_device(device):
            if held and job is cfg:
                return workload.copied(held[0])
            args, kwargs, seconds = workload.build_inputs(job, workload.placement(device), f.setup)
            built = _workload(job, f, args, kwargs)
            if job is cfg and f.setup is not None and workload.copyable(built):
                held.append(workload.copied(built))
        result.setup_s = result.setup_s if result.setup_s is not None else seconds
        return built

    return inputs


def _workload(job: ExperimentConfig, f: Functions, args: tuple, kwargs: dict) -> workload.Workload:
    return workload.Workload(
        job.workload_name,
        f.fn,
        args,
        job.static_argnums,
        f.numpy_fn,
        workload.to_host(args) if f.numpy_fn else (),
        job.donate_argnums,
        dict(job.mode.compiler_options),
        kwargs,
        workload.to_host(kwargs) if f.numpy_fn else {},
        job.static_argnames,
        tuple(job.mode.donate_argnames),
        f.jit_fn,
        dict(job.workload.carry),
    )


def check_setup_memory(setup: Any, cfg: ExperimentConfig, modes: int) -> None:
    """Refuse a setup whose arrays cannot fit in available memory: one set per mode, one for the check, and the
    copy input_builder holds back to give each of them its own."""
    per_set = workload.setup_bytes(setup, cfg)
    if per_set is not None:
        what = f"workload.setup's arrays ({modes} mode(s), a check and the copy they are copied from)"
        sizing.check_memory("size", cfg.size, per_set * (modes + 2), what)


def raised_at(exc: BaseException, what: str) -> str:
    """`workload.setup raised at mymodels.py:12 in make_params`: the innermost frame of the traceback."""
    tb = exc.__traceback__
    if tb is None:
        return ""
    frame = traceback.extract_tb(tb)[-1]
    return f"{what} raised at {os.path.basename(frame.filename)}:{frame.lineno} in {frame.name}"


Inputs = Callable[..., workload.Workload]  # builds a workload's inputs afresh (workload.setup), or returns the same


def _measure_modes(task: Task, w: workload.Workload, out: dict[str, ModeResult], inputs: Inputs) -> Noise:
    """Each mode's cold first call (and process 0's extras), then every mode sampled in interleaved rounds."""
    before = noise.cpu_times()
    cold = _cold_calls(task, w, out, inputs)
    return _sample(task, cold, out, noise.shares(before, noise.cpu_times()))


def _cold_calls(task: Task, w: workload.Workload, out: dict[str, ModeResult], inputs: Inputs) -> dict[str, ColdCall]:
    """Each mode's cold first call after clear_caches (the first needs none in a fresh process), then the extras."""
    cfg = task.cfg
    order = rotation(list(task.modes or cfg.mode.names), task.process)
    cold = {}
    for position, mode in enumerate(order):
        try:
            own = w if position == 0 else inputs()  # a setup's state (a model that updates itself) is each mode's own
        except PhaseError as exc:
            out[mode] = ModeResult(failure_of(exc.phase, exc.cause))
            continue
        if (position > 0 or not task.fresh) and mode != "numpy":
            jax.clear_caches()  # each mode's first call pays its own compiles
        enter_phase("execute" if mode in ("eager", "numpy") else "trace")
        compiles.on_event = enter_phase if _conn is not None else None  # trace -> lower -> compile -> execute
        try:
            shared = cfg.workload.setup is None  # built once and shared: donation must not consume the originals
            c = cold_call(donor(own) if shared and mode in ("jit", "aot") else own, mode, max(task.calls, 1))
        except PhaseError as exc:
            out[mode] = ModeResult(failure_of(exc.phase, exc.cause, workload.call_of(own)))
            continue
        finally:
            compiles.on_event = None
        cold[mode] = c
        out[mode] = ModeResult(
            cold_position=position, cold=_cold_record(c), calls=[vars(r) for r in c.records] if task.calls > 1 else []
        )
        if isinstance(c.call, Carry):
            out[mode].extras.donation = c.call.describe()
    if task.extras:
        with workload.on_device(resolve_device(cfg.device)):
            _extras(cfg, inputs(), cold, out)
    return cold


def _sample(
    task: Task, cold: Mapping[str, ColdCall], out: dict[str, ModeResult], cold_share: noise.Shares | None
) -> Noise:
    """Every live (cold-called, not failed) key sampled together in interleaved rounds, then its dispatch time;
    the process's Noise from the cold calls' CPU shares and the counters read around each round."""
    t = task.cfg.timing
    live = {m: c for m, c in cold.items() if out[m].error is None}
    enter_phase("execute")
    counters = {m: CompileCounter() for m in live}
    rounds = measure_rounds(
        {m: c.loop for m, c in live.items()},
        t,
        shift=task.process,
        sampling=counters.__getitem__,
        tick=noise.cpu_times,
    )
    for mode, error in rounds.errors.items():
        out[mode] = ModeResult(failure_of("execute", error))
    for mode, samples in rounds.samples_s.items():
        m = out[mode]
        m.samples_s, m.number, m.stop_reason = samples, rounds.number[mode], rounds.stop_reason
        m.compiles_during_timing = counters[mode].count
        if task.extras:
            c = live[mode]
            try:
                with phase("execute"):
                    m.extras.dispatch_s = float(np.median(dispatch_times(c.call, c.block, t.dispatch_probes)))
            except PhaseError as exc:
                out[mode] = ModeResult(failure_of(exc.phase, exc.cause))
    return noise_of(cold_share, rounds.ticks, t.max_steal)


def noise_of(cold: noise.Shares | None, ticks: list, max_steal: float) -> Noise:
    """The process's Noise record from its cold-call shares and the CPU counters read around each round."""
    per_round = noise.round_steal(ticks)
    sampled = noise.shares(ticks[0], ticks[-1]) if len(ticks) > 1 else None
    known = [s for s in per_round if s is not None]
    overall = sampled.steal if sampled is not None else None
    return Noise(
        steal_cold=cold.steal if cold is not None else None,
        steal=overall,
        run_queue_wait=sampled.run_queue if sampled is not None else None,
        idle=sampled.idle if sampled is not None else None,
        iowait=sampled.iowait if sampled is not None else None,
        round_steal=per_round,
        rounds_under_steal=sum(s > max_steal for s in known) if known else None,
        under_steal=noise.mostly_under_steal(per_round, overall, max_steal),
    )


def pinning() -> dict:
    """The process's CPU affinity and BLAS thread count (a worker limits both at entry when cpu_affinity is set)."""
    from threadpoolctl import threadpool_info

    affinity = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    blas = [pool["num_threads"] for pool in threadpool_info() if pool.get("user_api") == "blas"]
    return {"cpu_affinity": ",".join(map(str, affinity)), "blas_threads": max(blas) if blas else None}


def _measure_variants(
    task: Task,
    variants: Mapping[str, ExperimentConfig],
    loaded: Mapping[str, Functions],
    device: Any,
    result: ProcessResult,
) -> Noise | None:
    """Every variant in this process: its own inputs and cold first calls (variants in an order rotated per
    process, caches cleared between), then all (variant, mode) pairs sampled together in the same rounds."""
    modes = task.modes or task.cfg.mode.names
    cold: dict[str, ColdCall] = {}
    out: dict[str, ModeResult] = {}
    keys: dict[str, tuple[str, str]] = {}
    before = noise.cpu_times()
    for position, name in enumerate(rotation(list(variants), task.process)):
        job, f = variants[name], loaded[name]
        mine = result.variants.setdefault(name, {})
        inputs = input_builder(job, f, device, result)
        try:
            enter_phase("inputs")
            if f.setup is not None and task.process == 0:  # every variant's arrays live at once
                check_setup_memory(f.setup, job, len(modes) * len(variants))
            w = inputs()
        except ConfigError as error:
            result.config_error = ConfigProblem(f"variants.{name}.{error.key}", error.value, error.expected)
            return None
        except PhaseError as exc:
            failed = failure_of(exc.phase, exc.cause)
            if f.setup is not None:
                failed.hint = failed.hint or raised_at(exc.cause, "workload.setup")
            mine.update({mode: ModeResult(failed) for mode in modes})
            continue
        own = dataclasses.replace(task, cfg=job, fresh=task.fresh and position == 0)
        same: Inputs = lambda job=job, w=w: w  # noqa: E731  (specs: one set of inputs, shared by the modes)
        for mode, c in _cold_calls(own, w, mine, inputs if f.setup is not None else same).items():
            key = f"{name}:{mode}"  # unique: mode names hold no colon
            cold[key], keys[key] = c, (name, mode)
    cold_share = noise.shares(before, noise.cpu_times())
    out.update({key: result.variants[name][mode] for key, (name, mode) in keys.items()})
    sampled = _sample(task, cold, out, cold_share)
    for key, (name, mode) in keys.items():
        result.variants[name][mode] = out[key]
    return sampled


def _cold_record(c: ColdCall) -> Cold:
    return Cold(c.first_call_s, c.trace_s, c.lower_s, c.compile_s, c.execute_s, c.compiles)


def donor(w: workload.Workload) -> workload.Workload:
    """w with its own copies of the donated arguments: donation invalidates them, and other modes need the originals."""
    if not w.donate_argnums and not w.donate_argnames:
        return w
    args = tuple(jax.tree.map(workload.copy_leaf, a) if i in w.donate_argnums else a for i, a in enumerate(w.args))
    kwargs = {k: jax.tree.map(workload.copy_leaf, v) if k in w.donate_argnames else v for k, v in w.kwargs.items()}
    return dataclasses.replace(w, args=jax.block_until_ready(args), kwargs=jax.block_until_ready(kwargs))


def _extras(cfg: ExperimentConfig, w: workload.Workload, cold: dict[str, ColdCall], out: dict[str, ModeResult]) -> None:
    """Process 0's extras per mode: finite output, XLA's cost analysis, outputs checked against eager's and NumPy's."""
    reference = None
    jax_modes = [m for m in cold if m != "numpy"]
    shared = {}
    if jax_modes:
        try:
            shared = jaxpr_counts(w.fn, w.args, w.static_argnums, w.kwargs, w.static_argnames)
        except Exception as exc:  # a function plain tracing (and equinox's) cannot follow: no counts, a reason
            shared = {
                "attribution_error": f"could not trace the function to count its ops "
                f"({qualified_name(type(exc))}: {first_line(exc)})"
            }
        shared["op_dispatch_s"] = op_dispatch_s(cfg.dtype)
    for mode, c in cold.items():
        extras = out[mode].extras
        extras.finite_output = finite(c.output)
        if mode != "numpy":
            extras.update(shared)
        try:
            if mode in ("jit", "aot"):
                enter_phase("compile")
                with phase("compile"):
                    extras.update(cost_of(w))
            if not cfg.check:
                continue
            enter_phase("check")
            with phase("check"):
                if mode != "eager":
                    if reference is None:  # eager's first call on fresh inputs, as every mode's first call was
                        reference = (
                            cold["eager"].output
                            if "eager" in cold
                            else jax.block_until_ready(w.fn(*w.args, **w.kwargs))
                        )
                    extras.update(output_error(c.output, reference, cfg.dtype))
                if mode != "numpy" and "numpy" in cold:
                    extras.update(output_error(c.output, cold["numpy"].output, cfg.dtype, against="numpy"))
        except PhaseError as exc:
            out[mode] = ModeResult(failure_of(exc.phase, exc.cause))


def sequence_calls(task: Task, w: workload.Workload, out: dict[str, ModeResult], inputs: Inputs) -> None:
    """The retrace probe: one prepared callable of the mode called with each variant in order.

    Per call: latency, whether it compiled (compile events), trace and compile seconds, and
    the reason JAX gives for a tracing-cache miss (jax_explain_cache_misses).
    """
    cfg = task.cfg
    (mode,) = task.modes
    if not task.fresh:
        jax.clear_caches()  # in-process (isolate=none): the measurement compiled these already
    device = None  # device_put's default: the job's device (jax.default_device)
    callable_ = {"eager": lambda: w.fn, "jit": w.jitted}.get(mode)
    target: Any = callable_() if callable_ else None
    calls = []
    for i, variant in enumerate(cfg.sequence, start=1):
        record: dict[str, Any] = {"call": i, "variant": variant["_label"], "status": "ok"}
        try:
            with phase("inputs"):
                job = variant_cfg(cfg, variant)
                if cfg.workload.setup is not None:
                    built = inputs(job)
                    args, kwargs = built.args, built.kwargs
                else:
                    args = workload.build_args(job, device)
                    args = tuple(
                        variant["_args"][j]["value"] if j in variant.get("python_scalars", []) else a
                        for j, a in enumerate(args)
                    )
                    kwargs = workload.build_kwargs(job, device)
            with misses.captured() as reasons, CompileCounter() as counter:
                start = time.perf_counter_ns()
                try:
                    if mode == "aot":
                        target, (fn_args, fn_kwargs) = _aot(dataclasses.replace(w, args=args, kwargs=kwargs), target)
                        jax.block_until_ready(target[0](*fn_args, **fn_kwargs))
                    else:
                        jax.block_until_ready(target(*args, **kwargs))
                except Exception as exc:
                    raise PhaseError("execute", exc) from exc
                finally:
                    record["call_s"] = (time.perf_counter_ns() - start) / 1e9
            phases = counter.phases()
            record.update(
                compiles=counter.count,
                compiled=counter.count > 0,
                trace_s=phases["trace_s"],
                compile_s=phases["compile_s"],
            )
            record.update(misses.reason(reasons, w.fn) if mode == "jit" else {})
        except PhaseError as exc:
            record.update(failure_of(exc.phase, exc.cause, workload.call_of(w)).as_row())
        calls.append(record)
    out[mode] = ModeResult(calls=calls)


def _aot(w: workload.Workload, compiled: Any) -> tuple[Any, tuple[tuple, dict]]:
    """The Compiled object (built for the first variant) and the arguments it takes; new statics cannot reach it."""
    statics = tuple(w.args[i] for i in sorted(workload.static_positions(w.static_argnums, len(w.args))))
    statics += tuple(w.kwargs[k] for k in sorted(w.static_argnames) if k in w.kwargs)
    if compiled is None:
        compiled = (w.jitted().lower(*w.args, **w.kwargs).compile(), statics)
    elif statics != compiled[1]:
        raise ValueError(
            f"an AOT-compiled function is fixed to the static arguments it was lowered with "
            f"({_show(compiled[1])}); {_show(statics)} needs its own .lower().compile()"
        )
    return compiled, w.aot_inputs()


def _show(values: tuple) -> str:
    return ", ".join(map(repr, values))


def variant_cfg(cfg: ExperimentConfig, variant: dict) -> ExperimentConfig:
    """The job's config with a sequence variant's arguments, kwargs, size, params and dtype."""
    workload = dataclasses.replace(
        cfg.workload,
        args=variant["_args"],
        kwargs=variant.get("_kwargs", cfg.workload.kwargs),
        params=variant.get("_params", cfg.workload.params),
    )
    return dataclasses.replace(cfg, dtype=variant["_dtype"], size=variant.get("_size", cfg.size), workload=workload)


def cache_calls(task: Task, w: workload.Workload, out: dict[str, ModeResult], inputs: Inputs) -> None:
    """Each compiled mode's cold first call with the persistent compilation cache on, and its disk-cache hits."""
    for position, mode in enumerate(task.modes):
        if position > 0 or not task.fresh:
            jax.clear_caches()
        try:
            with CompileCounter() as counter:
                c = cold_call(donor(w if position == 0 else inputs()), mode)
        except PhaseError as exc:
            out[mode] = ModeResult(failure_of(exc.phase, exc.cause, workload.call_of(w)))
            continue
        out[mode] = ModeResult(
            cold=_cold_record(c),
            cache_hits=counter.events[compiles.CACHE_HITS],
            cache_misses=counter.events[compiles.CACHE_MISSES],
        )


KINDS = {"measure": _measure_modes, "sequence": sequence_calls, "cache": cache_calls}


def finite(out: Any) -> bool:
    """No NaN or inf anywhere in the output (non-float leaves count as finite)."""
    for leaf in jax.tree.leaves(out):
        a = np.asarray(_plain(leaf))
        if np.issubdtype(a.dtype, np.inexact) and not np.all(np.isfinite(a)):
            return False
    return True


_warmed: set = set()


def warm_backend(device) -> None:
    """Pay the process's one-time backend start-up before the first cold measurement.

    Without it the first cold call of a process reports compile times inflated by XLA/LLVM
    initialisation that no later compile (and no user's second compile) ever pays.
    """
    key = (device.platform, device.id)
    if key in _warmed:
        return
    x = jax.device_put(np.linspace(0.0, 1.0, 16, dtype=np.float32).reshape(4, 4), device)
    jax.block_until_ready((jax.jit(lambda v: jax.numpy.sin(v) @ v)(x), jax.numpy.cos(x) + x))
    _warmed.add(key)


def output_error(result: Any, reference: Any, dtype: str, against: str = "eager") -> dict:
    """Max abs and normwise relative error of result vs reference, and whether they match for dtype.

    NaN in the same places counts as equal; NaN on one side only is a mismatch (errors inf). Trees are
    matched by their leaves' paths (static fields, such as a TrainState's apply_fn, are not compared).
    The fields are named after the reference: max_abs_err_vs_<against>, matches_<against>, and
    check_vs_<against>: in words, why they do not match, or why they could not be compared (matches empty).
    """
    abs_key, rel_key, match_key = f"max_abs_err_vs_{against}", f"max_rel_err_vs_{against}", f"matches_{against}"
    note_key = f"check_vs_{against}"
    got, want = jax.tree_util.tree_flatten_with_path(result)[0], jax.tree_util.tree_flatten_with_path(reference)[0]
    got_paths, want_paths = [jax.tree_util.keystr(p) for p, _ in got], [jax.tree_util.keystr(p) for p, _ in want]
    if got_paths != want_paths:
        return {
            note_key: f"cannot compare: tree structures differ ({_tree_difference(got_paths, want_paths, against)})"
        }
    max_abs, scale = 0.0, 0.0
    for path, (_, a), (_, b) in zip(got_paths, got, want):
        try:
            a, b = _as_numbers(a), _as_numbers(b)
        except (TypeError, ValueError) as exc:
            return {note_key: f"cannot compare: output{path} is not numbers ({type(exc).__name__}: {exc})"}
        if a.shape != b.shape:
            return {note_key: f"cannot compare: output{path} is {list(a.shape)}, {against}'s {list(b.shape)}"}
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        if np.any(nan_a != nan_b):
            return {
                abs_key: float("inf"),
                rel_key: float("inf"),
                match_key: False,
                note_key: f"differs: NaN at other places in output{path}",
            }
        max_abs = max(max_abs, float(np.max(np.abs(np.where(nan_a, 0, a - b)), initial=0.0)))
        scale = max(scale, float(np.max(np.abs(np.where(nan_b, 0, b)), initial=0.0)))
    rel = max_abs / scale if scale > 0 else (0.0 if max_abs == 0 else float("inf"))
    tolerance = TOLERANCE.get(dtype, 1e-4)
    row: dict[str, Any] = {abs_key: max_abs, rel_key: rel, match_key: bool(rel <= tolerance)}
    if rel > tolerance:
        row[note_key] = f"differs: relative error {rel:.3g} above the {dtype} tolerance {tolerance:g}"
    return row


def _tree_difference(got: list[str], want: list[str], against: str) -> str:
    """The first leaf path one tree has and the other lacks, e.g. "output['b'] is missing from eager's"."""
    extra = next((p for p in got if p not in want), None)
    if extra is not None:
        return f"output{extra} is not in {against}'s"
    missing = next((p for p in want if p not in got), None)
    if missing is not None:
        return f"{against}'s output{missing} is missing"
    return f"the same {len(got)} leaves in another order"


def _plain(leaf: Any) -> Any:
    """A typed PRNG key as its integer data (NumPy cannot hold key dtypes); anything else as it is."""
    if isinstance(leaf, jax.Array) and workload.is_key(leaf):
        return jax.random.key_data(leaf)
    return leaf


def _as_numbers(x: Any) -> np.ndarray:
    x = np.asarray(_plain(x))
    return x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)


def resolve_device(dc: DeviceConfig):
    """The jax.Device the config names, or a ConfigError listing what this machine has."""
    try:
        devices = jax.devices() if dc.platform == "auto" else jax.devices(dc.platform)
    except RuntimeError:
        raise ConfigError(
            "device.platform",
            dc.platform,
            f"not available on this machine; available: {', '.join(available_platforms())}, auto",
        ) from None
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

    JAX reads jax_cpu_enable_async_dispatch only when the CPU client is created: a fresh
    worker takes any value; in-process (isolate=none) the first job decides and a later job
    asking for the other value is a config error.
    """
    global _cpu_async
    key = "jax_cpu_enable_async_dispatch"
    if _cpu_async is None:
        if cpu_async_dispatch is not None:
            jax.config.update(key, cpu_async_dispatch)
        jax.devices()
        _cpu_async = bool(jax_flag(key))
    elif cpu_async_dispatch is not None and cpu_async_dispatch != _cpu_async:
        raise ConfigError(
            "cpu_async_dispatch",
            cpu_async_dispatch,
            f"this process's CPU client was created with {_cpu_async} and keeps it; "
            "use isolate=process (the default) to vary it",
        )
    return _cpu_async


@contextmanager
def jax_settings(cfg: ExperimentConfig, x64: bool = False) -> Iterator[None]:
    """Set the job's JAX flags (x64, persistent compilation cache) and restore them after."""
    wanted: dict[str, Any] = {
        "jax_enable_x64": x64 or workload.needs_x64(cfg),
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
    # job's compilation_cache_dir would be ignored after any earlier in-process job (private API, jax 0.10).
    from jax._src import compilation_cache

    compilation_cache.reset_cache()
