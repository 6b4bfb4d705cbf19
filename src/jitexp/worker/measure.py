"""How one process measures: each mode's cold first call, then interleaved rounds; the sequence and cache probes."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from functools import partial
from typing import Any

import jax
import numpy as np

from jitexp import noise
from jitexp.config import ExperimentConfig
from jitexp.errors import ConfigError, Failure, PhaseError, failure_of, phase
from jitexp.records import Cold, ConfigProblem, ModeResult, Noise, ProcessResult, Task
from jitexp.worker import channel, clock, compiles, diskcache, distributed, factors, misses, sharding, workload
from jitexp.worker.backend import resolve_device
from jitexp.worker.blas import blas_probe
from jitexp.worker.channel import enter_phase
from jitexp.worker.checks import extras
from jitexp.worker.compiles import CompileCounter
from jitexp.worker.fit import fit_probe
from jitexp.worker.inputs import (
    Functions,
    Handed,
    Inputs,
    check_setup_memory,
    donor,
    input_builder,
    raised_at,
    variant_cfg,
)
from jitexp.worker.modes import Carry, ColdCall, cold_call
from jitexp.worker.profiling import device_time, profile_calls
from jitexp.worker.shallow import Shallow, shared
from jitexp.worker.timing import dispatch_times, measure_rounds, rotation


def _measure_modes(task: Task, handed: Handed, out: dict[str, ModeResult], inputs: Inputs) -> Noise:
    """Each mode's cold first call (and process 0's extras), then every mode sampled in interleaved rounds."""
    before = noise.cpu_times()
    cold = _cold_calls(task, handed.take(), out, inputs)  # the inputs as built go with it: each mode holds its own
    return _sample(task, cold, out, noise.shares(before, noise.cpu_times()))


def _cold_calls(task: Task, w: workload.Workload, out: dict[str, ModeResult], inputs: Inputs) -> dict[str, ColdCall]:
    """Each mode's first call, then the extras. A process that measures cold calls (task.cold) clears JAX's caches
    before each mode but the first (a fresh process needs none) and compiles it into an empty persistent cache of its
    own (worker.diskcache); any other process takes its programs from the job's cache and clears nothing, so no
    program it has is compiled again.

    The inputs as built are shared by the modes (donor copies what a mode donates) until the last call that needs
    them: the last mode's cold call takes them as they are, or the extras; then they, and the cold calls' outputs the
    extras read, are let go, so that the timed rounds hold what a user's loop holds (docs/decisions.md, "Issue 59:
    what the timed job holds")."""
    cfg = task.cfg
    order = rotation(list(task.modes or cfg.mode.names), task.process)
    extra = task.extras and not factors.off("extras")
    cold = {}
    for position, mode in enumerate(order):
        try:
            with clock.phase("setup"):
                own = w if position == 0 else inputs()  # a setup's state (a model updating itself): each mode's own
        except PhaseError as exc:
            out[mode] = distributed.dropped(cfg, exc)
            continue
        shared = inputs.shares and (position < len(order) - 1 or extra)  # a later call takes the same inputs
        if not shared:
            inputs.release()
        measured = task.cold and mode != "numpy"
        enter_phase("execute" if mode in ("eager", "numpy") else "trace")
        compiles.on_event = enter_phase if channel.conn is not None else None  # trace -> lower -> compile -> execute
        try:
            with clock.phase("first_call"):
                if measured and (position > 0 or not task.fresh):
                    jax.clear_caches()  # each mode's first call pays its own compiles
                with diskcache.own_empty(task.cache_dir) if measured else nullcontext():
                    mine = donor(own) if shared and mode in ("jit", "aot") else own  # donation consumes what it takes
                    c = cold_call(mine, mode, max(task.calls, 1), keep_output=extra)
        except PhaseError as exc:
            out[mode] = distributed.dropped(cfg, exc, workload.call_of(own))
            continue
        finally:
            compiles.on_event = None
        cold[mode] = c
        out[mode] = ModeResult(
            cold_position=position if task.cold else None,
            cold=_cold_record(c) if task.cold else None,
            calls=[vars(r) for r in c.records] if task.calls > 1 else [],
        )
        if isinstance(c.call, Carry):
            out[mode].extras.donation = c.call.describe()
    if extra:
        with workload.on_device(resolve_device(cfg.device)):
            with clock.phase("setup"):
                fresh = inputs()
            extras(cfg, fresh, cold, out)
    inputs.release()
    for c in cold.values():
        c.output = None  # the extras' alone: not held through the rounds
    return cold


def _shallow_runner(task: Task) -> Shallow | None:
    """The thread the timed calls are made on (worker.shallow), or None: on the worker's own thread.

    None in the caller's own process (isolate=none), so that its thread-local JAX settings (a `with
    jax.default_matmul_precision(...)` around jitexp.measure) hold in the rounds as in the cold call; and None where
    JAX's thread-local trace context differs on the other thread (a `jax.set_mesh` at a module's import, a config
    context left open): jit keys its cache on it, so the rounds would trace and time another program."""
    if factors.off("shallow_stack") or task.cfg.isolate != "process":
        return None
    runner = shared()
    return runner if runner.call(_trace_context, None) == _trace_context(None) else None


def _trace_context(_: object) -> Any:
    from jax._src.config import trace_context  # what jit's cache is keyed on, beside the arguments

    return trace_context()


def _ticks(runner: Shallow | None) -> Callable[[], Any] | None:
    """The CPU counters read around each round: the calling thread's CPU and run-queue wait (read from the main
    thread, so that no extra handoff to the shallow thread comes between samples)."""
    if factors.off("ticks"):
        return None
    if runner is None:
        return noise.cpu_times
    return partial(noise.cpu_times, thread=runner.native_id)


def _sample(
    task: Task, cold: Mapping[str, ColdCall], out: dict[str, ModeResult], cold_share: noise.Shares | None
) -> Noise:
    """Every live (cold-called, not failed) key sampled together in interleaved rounds, then its dispatch time;
    the process's Noise from the cold calls' CPU shares and the counters read around each round."""
    t = task.cfg.timing
    live = {m: c for m, c in cold.items() if out[m].error is None}
    enter_phase("execute")
    counters = {m: CompileCounter() for m in live}
    runner = _shallow_runner(task)
    agree = distributed.agree if task.cfg.distributed.processes > 1 else None  # every rank makes rank 0's calls
    rounds = measure_rounds(
        {m: c.loop if runner is None else partial(runner.call, c.loop) for m, c in live.items()},
        t,
        shift=task.process,
        sampling=counters.__getitem__,
        tick=_ticks(runner),
        agree=agree,
        warming=lambda: clock.phase("warmup"),
        sampled=lambda: clock.phase("sampling"),
        quiet_gc=not factors.off("gc_disable"),
        settle=not factors.off("settle"),
        settle_short=not factors.off("short_settle"),
        collect_first=not factors.off("early_collect"),
    )
    rounds.last_output.clear()  # the last samples' outputs: not held while the probes below call again
    for mode, error in rounds.errors.items():
        out[mode] = ModeResult(failure_of("execute", error))
    for mode, samples in rounds.samples_s.items():
        m = out[mode]
        m.samples_s, m.number, m.stop_reason = samples, rounds.number[mode], rounds.stop_reason
        m.compiles_during_timing = counters[mode].count
        if task.extras:
            c = live[mode]
            try:
                with phase("execute"), clock.phase("dispatch_probe"):
                    probes = dispatch_probes(t.dispatch_probes, float(np.median(samples)))
                    if agree is not None:  # counted from the rank's own median
                        probes = int(agree(np.array([probes]))[0])
                    times = partial(dispatch_times, c.call, c.block)
                    m.extras.dispatch_s = float(
                        np.median(times(probes) if runner is None else runner.call(times, probes))
                    )
            except PhaseError as exc:
                out[mode] = distributed.dropped(task.cfg, exc)
                continue
            if mode.rsplit(":", 1)[-1] in ("jit", "aot"):  # a variant's key is variant:mode
                with clock.phase("device_time"):
                    m.extras.update(_device_time(task.cfg, c, float(np.median(samples))))
            elif mode.rsplit(":", 1)[-1] == "numpy":  # its BLAS threads against one: a stall is no verdict
                with phase("execute"), clock.phase("dispatch_probe"):
                    m.extras.update(blas_probe(c.call, float(np.median(samples))))
    return noise_of(cold_share, rounds.ticks, t.max_steal)


DISPATCH_PROBE_S = 0.1  # the dispatch probe's calls last about this long at most (3 calls at least)


def dispatch_probes(asked: int, per_call_s: float) -> int:
    """timing.dispatch_probes, fewer for a long call: about DISPATCH_PROBE_S of calls, 3 at least (a 25 ms call's 10
    probes took 0.5 s, longer than the process's sampling budget)."""
    return max(min(asked, 3), min(asked, int(DISPATCH_PROBE_S / max(per_call_s, 1e-9))))


def _device_time(cfg: ExperimentConfig, c: ColdCall, per_call_s: float) -> dict[str, Any]:
    """device_time=true: the steady loop's device time (worker.profiling.device_time), or why there is none."""
    if not cfg.device_time:
        return {"device_time_error": "device_time=false"}
    if cfg.distributed.processes > 1:  # every task would have to run the traced calls' collectives alike
        return {"device_time_error": "not traced when a process spans several SLURM tasks"}
    return device_time(c.loop, per_call_s)


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
        accounted=len(ticks) > 1 and all(t is not None for t in ticks),
    )


def measure_variants(
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
        own = dataclasses.replace(task, cfg=variants[name], fresh=task.fresh and position == 0)
        mine = result.variants.setdefault(name, {})
        built = _variant_inputs(task, variants[name], loaded[name], device, result, name, len(variants))
        if built is None:
            return None
        if isinstance(built, Failure):
            mine.update({mode: ModeResult(built) for mode in modes})
            continue
        for mode, c in _cold_calls(own, built[0].take(), mine, built[1]).items():
            key = f"{name}:{mode}"  # unique: mode names hold no colon
            cold[key], keys[key] = c, (name, mode)
    cold_share = noise.shares(before, noise.cpu_times())
    out.update({key: result.variants[name][mode] for key, (name, mode) in keys.items()})
    sampled = _sample(task, cold, out, cold_share)
    for key, (name, mode) in keys.items():
        result.variants[name][mode] = out[key]
    return sampled


def _variant_inputs(
    task: Task, job: ExperimentConfig, f: Functions, device: Any, result: ProcessResult, name: str, variants: int
) -> tuple[Handed, Inputs] | Failure | None:
    """A variant's inputs as built and its Builder; the failure of its modes where building failed; None (and
    result.config_error) for a config mistake."""
    inputs = input_builder(job, f, device, result, name)
    try:
        enter_phase("inputs")
        if f.setup is not None and task.process == 0:  # every variant's arrays live at once
            check_setup_memory(f.setup, job, len(task.modes or task.cfg.mode.names) * variants)
        return Handed(inputs()), inputs
    except ConfigError as error:
        result.config_error = ConfigProblem(f"variants.{name}.{error.key}", error.value, error.expected)
        return None
    except PhaseError as exc:
        failed = failure_of(exc.phase, exc.cause)
        if f.setup is not None:
            failed.hint = failed.hint or raised_at(exc.cause, "workload.setup")
        return failed


def _cold_record(c: ColdCall) -> Cold:
    return Cold(c.first_call_s, c.trace_s, c.lower_s, c.compile_s, c.execute_s, c.compiles)


def sequence_calls(task: Task, handed: Handed, out: dict[str, ModeResult], inputs: Inputs) -> None:
    """The retrace probe: one prepared callable of the mode called with each variant in order.

    Per call: latency, whether it compiled (compile events), trace and compile seconds, and
    the reason JAX gives for a tracing-cache miss (jax_explain_cache_misses).
    """
    cfg, w = task.cfg, handed.take()
    (mode,) = task.modes
    if not task.fresh:
        jax.clear_caches()  # in-process (isolate=none): the measurement compiled these already
    device = None  # device_put's default: the job's device (jax.default_device)
    callable_ = {"eager": lambda: w.fn, "jit": w.jitted}.get(mode)
    target: Any = callable_() if callable_ else None
    mesh = sharding.make_mesh(cfg, resolve_device(cfg.device))  # the probe's arguments sharded as the job's are
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
                    if mesh is not None:
                        args, kwargs = sharding.shard_inputs(job, mesh, args, kwargs)
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
        except ConfigError as exc:  # a variant's shape the mesh cannot split: that call's error, the probe goes on
            record.update(failure_of("inputs", exc, workload.call_of(w)).as_row())
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


def cache_calls(task: Task, handed: Handed, out: dict[str, ModeResult], inputs: Inputs) -> None:
    """Each compiled mode's cold first call with the persistent compilation cache on, and its disk-cache hits."""
    w = handed.take()
    for position, mode in enumerate(task.modes):
        if position > 0 or not task.fresh:
            jax.clear_caches()
        try:
            with CompileCounter() as counter:
                c = cold_call(donor(w if position == 0 else inputs()), mode, keep_output=False)
        except PhaseError as exc:  # on a rank of a distributed job: the step ends (the others would wait in it)
            out[mode] = distributed.dropped(task.cfg, exc, workload.call_of(w))
            continue
        out[mode] = ModeResult(
            cold=_cold_record(c),
            cache_hits=counter.events[compiles.CACHE_HITS],
            cache_misses=counter.events[compiles.CACHE_MISSES],
        )


KINDS = {
    "measure": _measure_modes,
    "sequence": sequence_calls,
    "cache": cache_calls,
    "profile": profile_calls,
    "fit": fit_probe,  # experiment=fit: compile, XLA's estimate against the limit, one call if within it
}
