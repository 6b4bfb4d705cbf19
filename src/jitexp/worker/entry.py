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
from typing import Any

from jitexp.config import variant_configs
from jitexp.errors import DEVICE_BUSY, ConfigError, Failure, PhaseError, failure_of, phase
from jitexp.labels import setup_kind
from jitexp.records import ConfigProblem, ProcessResult, Task
from jitexp.worker import channel, clock, diskcache, factors, fit, memory, payload, probes, sharding, workload
from jitexp.worker.backend import (
    BUSY_HINT,
    DeviceBusy,
    before_open,
    jax_settings,
    pinning,
    premapped,
    resolve_device,
    start_backends,
    warm_backend,
)
from jitexp.worker.channel import enter_phase
from jitexp.worker.compiles import CACHE_HITS, CACHE_MISSES, CompileCounter
from jitexp.worker.inputs import (
    Functions,
    Handed,
    check_setup_memory,
    import_functions,
    input_builder,
    raised_at,
    variant_cfg,
)
from jitexp.worker.jaxinfo import environment
from jitexp.worker.measure import KINDS, measure_variants
from jitexp.worker.peaks import peaks


def entry(task: Task, conn: Any) -> None:
    """Worker-process entry point: measure, reporting each phase, then send the plain result through conn."""
    if task.sys_path:
        sys.path[:] = task.sys_path
    if task.cwd:
        os.chdir(task.cwd)
    if task.cfg.cpu_affinity:
        from threadpoolctl import threadpool_limits

        os.sched_setaffinity(0, task.cfg.cpu_affinity)  # before JAX sizes its thread pools
        threadpool_limits(len(task.cfg.cpu_affinity), user_api="blas")  # NumPy's BLAS threads: as many
    channel.conn = conn
    try:
        result = measure_process(task)
    except KeyboardInterrupt:  # raised inside the workload (a callback): the driver stops the run
        conn.send(("interrupt", None))
        return
    conn.send(("result", result))
    conn.close()


def measure_process(task: Task) -> ProcessResult:
    """Every phase of one process's measurement; failures become error fields, never exceptions."""
    clock.reset()
    with CompileCounter() as counter:
        result = _measure_process(task)
    result.phases, result.phase_compiles = dict(clock.seconds), dict(clock.compiled)
    if task.cache_dir is not None:
        result.cache_hits, result.cache_misses = counter.events[CACHE_HITS], counter.events[CACHE_MISSES]
    result.ended = clock.stamp()
    result.measure_s = result.ended - (result.began or result.ended)
    return result


def _measure_process(task: Task) -> ProcessResult:
    cfg = task.cfg
    result = ProcessResult(task.process)
    variants = variant_configs(cfg) if task.kind == "measure" else {}
    try:
        factors.switched_off()  # a bad JITEXP_WORKER_OFF name is the job's one-line config error
        by_path = task.payload is None  # else jitexp.measure's payload brings fn, jit_fn and the inputs ("inputs")
        with clock.phase("imports"):
            loaded = (
                {name: import_functions(job, name) for name, job in (variants or {"": cfg}).items()} if by_path else {}
            )
        result.setup_kinds = {name: setup_kind(f.setup) for name, f in loaded.items() if f.setup is not None}
        channel.wait_for_go(task)  # a prepared worker: until the device is free (engine.handover)
        result.began = clock.stamp()
        clock.reset()  # a prepared worker's imports ran while the process before measured: not this process's time
        result.process = task.process
        with clock.phase("open"):
            opening = time.perf_counter()
            before_open(cfg.device)
            sharding.request_devices(cfg.device)
            result.cpu_async_dispatch = start_backends(cfg.cpu_async_dispatch)
            device = resolve_device(cfg.device)
            result.device_open_s = time.perf_counter() - opening
        channel.opened(device.platform)
        sharding.check_count(cfg.device, device)
    except ConfigError as error:
        result.config_error = ConfigProblem(error.key, error.value, error.expected)
        return result
    except DeviceBusy as busy:  # another process holds the device: the driver tries again (timing.open_retries)
        result.error = Failure("open", DEVICE_BUSY, str(busy), BUSY_HINT)
        return result
    result.platform, result.device_kind = device.platform, device.device_kind
    cache = task.cache_dir if task.kind in ("measure", "profile", "cache") else None
    kept = task.kind in ("measure", "profile") and not factors.off("inputs_folder")
    workload.input_folder = diskcache.inputs_folder(task.cache_dir) if kept else None
    with jax_settings(
        next(iter(variants.values()), cfg),
        x64=(task.payload is not None and task.payload.x64)
        or (task.kind == "sequence" and any(workload.needs_x64(variant_cfg(cfg, v)) for v in cfg.sequence)),
        cache_dir=cache,  # the cold calls switch to empty caches of their own (measure._cold_calls)
    ):
        with clock.phase("warm_backend"):
            # the one-time start-up a cold call must not pay; elsewhere the warm-up pays it
            if task.cold and not factors.off("warm_backend"):
                warm_backend(device)
            result.environment = {**environment(), **pinning(), **premapped(device)}
        if task.kind == "measure" and not factors.off("host_probe"):
            with clock.phase("host_probe"):
                result.noise.host_probe = probes.host_probe()
        rss_before = memory.reset_peak_rss()
        if variants:
            sampled = measure_variants(task, variants, loaded, device, result)
        else:
            f: Functions | None = None
            try:
                enter_phase("inputs")
                with clock.phase("setup"):
                    if task.payload is not None:  # unpickled here, under the job's device and JAX settings
                        with phase("inputs"):
                            fn, jit_fn, setup = payload.unpack(task.payload, cfg.jit_fn, workload.placement(device))
                        f = Functions(fn, None, setup, jit_fn)
                    else:
                        f = loaded[""]
                        if f.setup is not None and task.process == 0:  # same shapes everywhere: once per job
                            check_setup_memory(f.setup, cfg, len(task.modes or cfg.mode.names))
                        if task.kind == "fit" and fit.over_before_inputs(cfg, f, device, result):
                            return result  # experiment=fit: over the limit on the shapes alone, nothing built
                    inputs = input_builder(cfg, f, device, result)
                    handed = Handed(inputs())  # the kind takes it: nothing here holds the inputs past their use
            except ConfigError as error:
                result.config_error = ConfigProblem(error.key, error.value, error.expected)
                return result
            except PhaseError as exc:
                result.error = failure_of(exc.phase, exc.cause)
                if by_path and f is not None and f.setup is not None:
                    result.error.hint = result.error.hint or raised_at(exc.cause, "workload.setup")
                return result
            # The steady state runs outside any device context (the inputs carry the device); the probes inside.
            timed = task.kind in ("measure", "profile")  # the steady loop as measured: no device context around it
            with workload.on_device(device) if not timed else contextlib.nullcontext():
                sampled = KINDS[task.kind](task, handed, result.modes, inputs)
        if sampled is not None:
            result.noise = dataclasses.replace(sampled, host_probe=result.noise.host_probe)
        with clock.phase("memory"):
            result.peak_rss_growth_bytes, result.device_peak_bytes = memory.growth(rss_before, device)
        if task.kind == "measure" and task.extras and cfg.roofline:  # after the memory figures: not the job's
            with clock.phase("peaks"):
                result.peaks, result.peaks_error, result.peaks_measured = peaks(
                    device, cfg.dtype, fresh=cfg.roofline == "fresh"
                )
    return result
