"""experiment=fit's probe (task kind "fit"): compile the job at one value, read XLA's memory analysis, and only when
that estimate is within the limit call it twice, each output dropped before the next call, as the timed job's calls
hold what a user's loop holds (its arguments, and the output being made: docs/decisions.md, "Issue 59: what the timed
job holds"); what happened goes back as one record (the driver's fit.csv row).

The estimate is what XLA allocates for the program: arguments + outputs + temporaries - aliased (donated) bytes, or
XLA's `peak_memory_in_bytes` where that is larger. On the CPU (jax 0.10.2) the peak leaves the temporaries out: an MLP
training step at batch 62290 read peak 8.39 MB against 70.3 MB of temporaries, so the peak alone would call a job
that needs 78 MB one of 8 MB (docs/decisions.md, "Issue 59: the largest size that fits").

The inputs are built before (worker.entry, as for every job): an allocator that cannot hold them fails the probe
there, as out of memory in `inputs`. The limit is fit.memory_bytes, else the accelerator allocator's bytes_limit,
else (a CPU) the memory available now plus the arguments already built (XLA's peak counts them).
"""

from __future__ import annotations

import time
from typing import Any

import jax

from jitexp.analysis.fit_search import is_oom
from jitexp.config import ExperimentConfig
from jitexp.errors import failure_of, qualified_name
from jitexp.machine import available_memory
from jitexp.records import ModeResult, ProcessResult, Task
from jitexp.worker import clock, workload
from jitexp.worker.backend import resolve_device
from jitexp.worker.channel import enter_phase
from jitexp.worker.inputs import Functions, Handed, Inputs

MEMORY_FIELDS = ("argument", "output", "temp", "alias", "generated_code")


def fit_probe(task: Task, handed: Handed, out: dict[str, ModeResult], inputs: Inputs) -> None:
    """Compile, compare XLA's estimate with the limit, and within it call twice, each output dropped before the next
    call as the timed job drops it (once for a donating program): out[mode].calls[0] says which."""
    cfg, w = task.cfg, handed.take()
    mode = _mode(cfg)
    record: dict[str, Any] = {}
    call = workload.call_of(w)
    try:
        with clock.phase("first_call"):
            enter_phase("compile")
            compiled = w.jitted().lower(*w.args, **w.kwargs).compile()
    except Exception as exc:
        record["limit_bytes"] = limit_bytes(cfg.fit.memory_bytes, resolve_device(cfg.device), 0)
        out[mode] = ModeResult(failure_of("compile", exc, call), calls=[record])
        return
    record.update(memory_of(compiled))
    estimate = record.get("estimate_bytes")
    limit = record["limit_bytes"] = limit_bytes(
        cfg.fit.memory_bytes, resolve_device(cfg.device), record.get("argument_size_bytes") or 0
    )
    if estimate is not None and limit is not None and estimate > limit:
        record["over_limit"] = True  # not run: the driver's reason `estimate`
        out[mode] = ModeResult(calls=[record])
        return
    try:
        with clock.phase("first_call"):
            enter_phase("execute")
            args, kwargs = w.aot_inputs()
            started = time.perf_counter()
            jax.block_until_ready(compiled(*args, **kwargs))  # dropped at once, as the timed loop drops it
            record["call_s"] = time.perf_counter() - started
            if not record.get("alias_size_bytes"):
                # a steady call of the timed loop: its arguments alive (a carried state's are the previous call's
                # outputs, the originals gone) and its own output. A donating program consumed its arguments instead
                jax.block_until_ready(compiled(*args, **kwargs))
    except Exception as exc:
        out[mode] = ModeResult(failure_of("execute", exc, call), calls=[record])
        return
    out[mode] = ModeResult(calls=[record])


def over_before_inputs(cfg: ExperimentConfig, f: Functions, device: Any, result: ProcessResult) -> bool:
    """True (and the probe's record in result.modes) when XLA's estimate of the job compiled on its arguments' shapes
    alone is over the limit: nothing is built. Array specs only (not a setup, a payload or a mesh), and nothing is
    decided where that compile fails (the probe then builds the inputs as a job does)."""
    if f.setup is not None or cfg.mesh_shape or cfg.workload.args is None:
        return False
    try:
        statics = workload.static_positions(cfg.static_argnums, len(cfg.workload.args))
        place = workload.placement(device)
        args = tuple(_shape_of(spec, i in statics, cfg, place, i) for i, spec in enumerate(cfg.workload.args))
        kwargs = {
            name: _shape_of(
                spec if isinstance(spec, dict) else {"value": spec}, name in cfg.static_argnames, cfg, place, 1000 + j
            )
            for j, (name, spec) in enumerate(cfg.workload.kwargs.items())
        }
        w = workload.Workload(
            cfg.workload_name, f.fn, args, cfg.static_argnums, donate_argnums=cfg.donate_argnums,
            compiler_options=dict(cfg.mode.compiler_options), kwargs=kwargs, static_argnames=cfg.static_argnames,
            donate_argnames=tuple(cfg.mode.donate_argnames), jit_fn=f.jit_fn,
        )  # fmt: skip
        with clock.phase("first_call"):
            record = memory_of(w.jitted().lower(*args, **kwargs).compile())
    except Exception as exc:
        if not is_oom(qualified_name(type(exc)), str(exc)):
            return False  # decided with the inputs built, as a job fails
        # XLA's compiler itself found no room (a TPU's "Ran out of memory in memory space hbm"): nothing built
        limit = limit_bytes(cfg.fit.memory_bytes, device, 0)
        result.modes[_mode(cfg)] = ModeResult(failure_of("compile", exc), calls=[{"limit_bytes": limit}])
        return True
    estimate = record.get("estimate_bytes")
    limit = record["limit_bytes"] = limit_bytes(cfg.fit.memory_bytes, device, 0)
    if estimate is None or limit is None or estimate <= limit:
        return False
    record["over_limit"] = True  # compiled on the shapes alone: no input built, nothing run
    result.modes[_mode(cfg)] = ModeResult(calls=[record])
    return True


def _mode(cfg: ExperimentConfig) -> str:
    """The mode a probe compiles: jit, or aot where the job names aot alone."""
    return "jit" if cfg.mode.jit or not cfg.mode.aot else "aot"


def _shape_of(spec: dict, static: bool, cfg: ExperimentConfig, place: Any, stream: int) -> Any:
    """An argument as lowering needs it: an array spec's shape and dtype (on the job's device), a literal built."""
    if "value" in spec:
        return workload._build(spec, static, cfg, place, stream)
    sharding = None if place is None else jax.sharding.SingleDeviceSharding(place)
    return jax.ShapeDtypeStruct(tuple(spec["shape"]), jax.numpy.dtype(spec.get("dtype", cfg.dtype)), sharding=sharding)


def memory_of(compiled: Any) -> dict[str, Any]:
    """XLA's memory analysis of a compiled program as fit.csv fields; the peak, where the jaxlib has none, as
    arguments + outputs + temporaries - aliased (empty where the backend gives no analysis)."""
    compiled = getattr(compiled, "compiled", compiled) if not hasattr(compiled, "memory_analysis") else compiled
    try:
        memory = compiled.memory_analysis()
    except Exception:
        return {}
    if memory is None:
        return {}
    row: dict[str, Any] = {
        f"{name}_size_bytes": getattr(memory, f"{name}_size_in_bytes", None) for name in MEMORY_FIELDS
    }
    row["peak_memory_bytes"] = getattr(memory, "peak_memory_in_bytes", None)  # newer jaxlibs only
    parts = [row["argument_size_bytes"], row["output_size_bytes"], row["temp_size_bytes"]]
    if all(part is not None for part in parts):
        allocated = sum(int(part) for part in parts) - int(row["alias_size_bytes"] or 0)
        row["estimate_bytes"] = max(allocated, row["peak_memory_bytes"] or 0)
    else:
        row["estimate_bytes"] = row["peak_memory_bytes"]
    return {k: int(v) for k, v in row.items() if v is not None}


def limit_bytes(configured: int | None, device: Any, built: int) -> int | None:
    """fit.memory_bytes, else the accelerator allocator's bytes_limit, else the host's available memory plus the
    `built` bytes of arguments this process already holds (None where nothing says)."""
    if configured:
        return int(configured)
    if device.platform != "cpu":
        try:
            stats = device.memory_stats() or {}
        except Exception:
            stats = {}
        if "bytes_limit" in stats:
            return int(stats["bytes_limit"])
    available = available_memory()
    return None if available is None else available + built
