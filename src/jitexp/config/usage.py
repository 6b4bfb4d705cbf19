"""Every key the user set is used or refused (issue 51): a key the job would ignore, or apply to something other than
what it names, is one ConfigError naming the key, what it would have done and what to write instead.

Pure: a validated ExperimentConfig, the composed config unresolved (what refers to what) and the keys the command
line set; no JAX, no imports of the user's code (a setup's own signature is checked with the arity: imports.py).
Keys legitimately ignored in some jobs are listed in docs/decisions.md ("Every input is used or refused").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from jitexp.config.schema import DTYPES, ExperimentConfig
from jitexp.errors import ConfigError
from jitexp.labels import size_reaches

# JAX transformations that are not a jit: as mode.jit_fn the "jit" row would time them, not a compiled program
NOT_JIT = tuple(
    f"jax.{name}"
    for name in ("checkpoint", "remat", "vmap", "pmap", "grad", "value_and_grad", "jacfwd", "jacrev", "hessian")
)
RANDOM_INITS = ("normal", "uniform")
READS = {"normal": ("scale",), "uniform": ("scale",), "zeros": (), "ones": ("scale",), "arange": ("scale", "start")}
_PARAM_REFERENCE = re.compile(r"params\.([A-Za-z_]\w*)")


def check_used(exp: ExperimentConfig, task: Mapping[str, Any] | None = None, given: Iterable[str] = ()) -> None:
    """Refuse the first key the job would not use as it says. `task`: the composed config, unresolved, without
    Hydra's node (None: the checks that need it are skipped); `given`: the dotted keys the command line set."""
    given = {key.lstrip("+~") for key in given}
    _check_jit_fn(exp)
    _check_compiled_only(exp)
    _check_init_options(exp)
    _check_affinity(exp)
    _check_python_scalars(exp)
    if "seed" in given:
        _check_seed(exp)
    _check_given(exp, given, None if task is None else task.get("dtype"))
    if task is not None:
        _check_params(exp, task)
        if "size" in given:
            _check_size(exp, task)


def _check_jit_fn(exp: ExperimentConfig) -> None:
    if exp.jit_fn in NOT_JIT:
        key = "mode.jit_fn" if exp.mode.jit_fn else "workload.jit_fn"
        raise ConfigError(
            key,
            exp.jit_fn,
            f"is not a jit transformation: the jit and aot rows would time {exp.jit_fn}(fn), uncompiled; write "
            "jax.jit, equinox.filter_jit or flax.nnx.jit, and apply other transformations inside workload.fn",
        )


def _check_compiled_only(exp: ExperimentConfig) -> None:
    """Donation, compiler options, static arguments of the mode and profiles apply to compiled modes only."""
    if exp.mode.jit or exp.mode.aot:
        return
    modes = ",".join(exp.mode.names)
    fix = f"measure a compiled mode beside it (mode=[{modes},jit]) or drop it"
    m = exp.mode
    for key, value in (
        ("mode.donate_argnums", m.donate_argnums),
        ("mode.donate_argnames", m.donate_argnames),
        ("mode.compiler_options", dict(m.compiler_options)),
    ):
        if value:
            raise ConfigError(key, value, f"applies to the compiled modes (jit, aot) and mode={modes} has none; {fix}")
    if exp.profile:
        raise ConfigError("profile", True, f"profiles the compiled modes (jit, aot) and mode={modes} has none; {fix}")
    if exp.cache_probe:
        raise ConfigError(
            "cache_probe", True, f"probes the compiled modes' (jit, aot) disk cache and mode={modes} has none; {fix}"
        )


def _array_specs(exp: ExperimentConfig) -> Iterator[tuple[str, dict]]:
    for i, arg in enumerate(exp.workload.args or []):
        if isinstance(arg, dict) and "value" not in arg:
            yield f"workload.args[{i}]", arg
    for name, arg in exp.workload.kwargs.items():
        if isinstance(arg, dict) and "value" not in arg:
            yield f"workload.kwargs.{name}", arg


def _check_init_options(exp: ExperimentConfig) -> None:
    for key, arg in _array_specs(exp):
        init = arg.get("init", "normal")
        for option in ("scale", "start"):
            if option in arg and option not in READS.get(init, (option,)):
                readers = [name for name, reads in READS.items() if option in reads]
                raise ConfigError(
                    f"{key}.{option}",
                    arg[option],
                    f"init {init} does not read {option} (only {', '.join(readers)} do{'es' if len(readers) == 1 else ''}); "
                    f"drop it, or set {key}.init to one that does",
                )


def _check_seed(exp: ExperimentConfig) -> None:
    if exp.workload.setup is not None:
        return  # a setup gets the seed
    if any(arg.get("init", "normal") in RANDOM_INITS for _, arg in _array_specs(exp)):
        return
    raise ConfigError(
        "seed",
        exp.seed,
        "no input is random (every array argument's init is zeros, ones or arange), so the seed changes nothing; "
        "drop it, or give an argument init: normal",
    )


def _referenced(task: Mapping[str, Any], leave_out: tuple[str, ...]) -> str:
    """The unresolved config as text, without the nodes named (dotted), for finding interpolations."""
    data = json.loads(json.dumps(task, default=str))
    for dotted in leave_out:
        *parents, last = dotted.split(".")
        node = data
        for part in parents:
            node = node.get(part, {}) if isinstance(node, dict) else {}
        if isinstance(node, dict):
            node.pop(last, None)
    return json.dumps(data)


def _check_params(exp: ExperimentConfig, task: Mapping[str, Any]) -> None:
    """A param that no argument, keyword or sequence refers to, in a workload without setup (a setup gets them all
    as keywords, checked against its signature by imports.check_arity), reaches nothing."""
    if exp.workload.setup is not None or not exp.workload.params:
        return
    text = _referenced(task, ("workload.params", "workload.checks", "variants"))
    used = set(_PARAM_REFERENCE.findall(text))
    for name, value in exp.workload.params.items():
        if name not in used:
            import difflib

            close = difflib.get_close_matches(name, [p for p in exp.workload.params if p in used], n=1, cutoff=0.6)
            guess = f"did you mean workload.params.{close[0]}? " if close else ""
            raise ConfigError(
                f"workload.params.{name}",
                value,
                f"{guess}no argument of {exp.workload.fn} refers to it (${{workload.params.{name}}}), so it would "
                "only label the rows; drop it, or use it in workload.args or workload.kwargs",
            )


def _check_size(exp: ExperimentConfig, task: Mapping[str, Any]) -> None:
    """`size` that reaches no argument (fixed shapes, no setup) would only label the rows."""
    if exp.workload.setup is not None:
        return
    if size_reaches(task.get("workload", {})) or not exp.workload.args and not exp.workload.kwargs:
        return  # directly or through a param (`+workload.params.n=${size}`, shape [${workload.params.n}])
    raise ConfigError(
        "size",
        exp.size,
        f"no argument of {exp.workload.fn} refers to ${{size}} (their shapes are fixed), so it would only label the "
        "rows; drop it, or write the shapes in terms of it, e.g. workload.args=[{shape:[${size}]}]",
    )


def _check_affinity(exp: ExperimentConfig) -> None:
    cores = list(exp.cpu_affinity or [])
    twice = next((c for i, c in enumerate(cores) if c in cores[:i]), None)
    if twice is not None:
        raise ConfigError(
            "cpu_affinity",
            cores,
            f"names core {twice} twice, and the workers would run on {len(set(cores))} core(s) with "
            f"{len(cores)} BLAS threads; name each core once: {sorted(set(cores))}",
        )


def _check_python_scalars(exp: ExperimentConfig) -> None:
    """A sequence variant's python_scalars on an argument that is static already changes nothing (a static argument
    is a Python value either way)."""
    n = len(exp.workload.args or [])
    statics = {i % n for i in exp.static_argnums} if n else set()
    for i, item in enumerate(exp.sequence):
        scalars = item.get("python_scalars") or [] if isinstance(item, dict) else []
        static = next((j for j in scalars if isinstance(j, int) and n and j % n in statics), None)
        if static is not None:
            raise ConfigError(
                f"sequence[{i}].python_scalars",
                list(scalars),
                f"argument {static} is static already (static_argnums={list(exp.static_argnums)}), so passing it as a "
                "Python scalar changes nothing; name a traced literal argument, or drop it",
            )


def _has_compiled_mode(exp: ExperimentConfig) -> bool:
    return bool(exp.mode.jit or exp.mode.aot)


def _has_mesh(exp: ExperimentConfig) -> bool:
    if exp.mesh_shape:
        return True
    from jitexp.config.variants import variant_configs

    return any(variant.mesh_shape for variant in variant_configs(exp).values())


def reads_dtype(exp: ExperimentConfig) -> bool:
    """Whether anything the job builds follows its `dtype`: a setup (it gets dtype), an array spec without a dtype of
    its own (its default is ${dtype}) or one that resolved to the job's, a float literal (typed in the job's dtype),
    a sequence item that changes dtype, or no arguments at all (nothing to tell)."""
    w = exp.workload
    if w.setup is not None or not w.args and not w.kwargs:
        return True
    if any(isinstance(item, dict) and "dtype" in item for item in exp.sequence):
        return True
    literals = [a.get("value") for a in w.args or [] if isinstance(a, dict) and "value" in a]
    literals += [v.get("value") if isinstance(v, dict) else v for v in w.kwargs.values()]
    if any(isinstance(v, float) for v in literals):
        return True
    return any("dtype" not in spec or spec["dtype"] == exp.dtype for _, spec in _array_specs(exp))


def own_dtype(exp: ExperimentConfig) -> str | None:
    """The floating dtype the job's arguments have of their own when nothing follows the job's `dtype` and they agree
    on one (an argument's own `dtype: float64` in a float32 job): the truthful label of the rows. None otherwise."""
    if reads_dtype(exp):
        return None
    floats = {str(spec["dtype"]) for _, spec in _array_specs(exp) if spec.get("dtype") in DTYPES}
    return floats.pop() if len(floats) == 1 else None


def _check_given(exp: ExperimentConfig, given: set[str], written_dtype: Any = None) -> None:
    """Keys the command line set that this job would not use (a workload's or preset's own defaults are nobody's
    word: they are checked only when the command line sets them)."""
    modes = ",".join(exp.mode.names)
    compiled = _has_compiled_mode(exp)
    fix = f"measure a compiled mode beside it (mode=[{modes},jit]) or drop it"
    for key in ("mode.jit_fn", "workload.jit_fn"):
        if key in given and not compiled:
            raise ConfigError(key, exp.jit_fn, f"wraps the compiled modes (jit, aot) and mode={modes} has none; {fix}")
    if "device_time" in given and exp.device_time and not compiled:
        raise ConfigError("device_time", True, f"traces the compiled modes (jit, aot) and mode={modes} has none; {fix}")
    if "workload.donate_argnums" in given and exp.workload.donate_argnums and not compiled:
        raise ConfigError(
            "workload.donate_argnums",
            list(exp.workload.donate_argnums),
            f"applies to the compiled modes (jit, aot) and mode={modes} has none; {fix}",
        )
    if "check" in given and exp.check and exp.mode.names == ("eager",):
        raise ConfigError(
            "check",
            True,
            "compares the other modes' outputs with eager's, and mode=eager is the only one; drop it, or measure "
            "another mode beside it (mode=[eager,jit])",
        )
    if "workload.donate_argnums" in given and exp.workload.donate_argnums and exp.mode.donate_argnums is not None:
        raise ConfigError(
            "workload.donate_argnums",
            list(exp.workload.donate_argnums),
            f"is in force only with mode.donate_argnums=null, and mode.donate_argnums={list(exp.mode.donate_argnums)} "
            "wins; write mode.donate_argnums=null too, or set mode.donate_argnums instead",
        )
    if "workload.numpy_fn" in given and exp.workload.numpy_fn and not exp.mode.numpy:
        raise ConfigError(
            "workload.numpy_fn",
            exp.workload.numpy_fn,
            f"is the twin measured by mode numpy, and mode={modes} has none; add it (mode=[{modes},numpy]) or drop it",
        )
    if not _has_mesh(exp):
        if "device.count" in given and exp.device.count > 1 and exp.distributed.processes == 1:
            raise ConfigError(
                "device.count",
                exp.device.count,
                f"gives each worker {exp.device.count} devices, and without mesh.shape the job runs on one of them; "
                f"set mesh.shape too (e.g. 'mesh.shape={{data:{exp.device.count}}}'), or drop it",
            )
        for key in ("workload.shardings", "workload.out_shardings", "mesh.axis_types"):
            if key in given:
                raise ConfigError(
                    key, None, "applies to a mesh, and the job has none (one device); set mesh.shape too, or drop it"
                )
    platform = exp.device.platform
    if "device.premapped_buffer_bytes" in given and platform in ("cpu", "gpu"):
        raise ConfigError(
            "device.premapped_buffer_bytes",
            exp.device.premapped_buffer_bytes,
            f"sizes libtpu's pinned host buffer, and device.platform={platform} opens no TPU; drop it, or use device=tpu",
        )
    if "cpu_async_dispatch" in given and exp.cpu_async_dispatch is not None and platform in ("gpu", "tpu"):
        raise ConfigError(
            "cpu_async_dispatch",
            exp.cpu_async_dispatch,
            f"sets the CPU client's dispatch, and device.platform={platform} measures on no CPU; drop it, or use "
            "device=cpu",
        )
    for key in ("timing.open_retries", "timing.open_wait_s"):
        if key in given and platform == "cpu":
            raise ConfigError(
                key,
                None,
                "retries a device another process holds, and a CPU is never held; drop it (it applies to gpu and tpu)",
            )
    t = exp.timing
    if "timing.cold_processes" in given and t.cold_processes is not None and t.cold_processes > t.max_processes:
        raise ConfigError(
            "timing.cold_processes",
            t.cold_processes,
            f"counts processes that measure the cold first calls, and the job starts {t.max_processes} at most "
            f"(timing.max_processes); write at most {t.max_processes}, or raise timing.max_processes",
        )
    if "timing.interleave" in given and t.interleave == "processes" and len(exp.mode.names) < 2:
        raise ConfigError(
            "timing.interleave",
            t.interleave,
            f"alternates the modes between processes, and mode={modes} is one (every process measures it either "
            "way); drop it, or measure two modes (mode=[eager,jit])",
        )
    local = exp.isolate == "none" or exp.distributed.processes > 1
    where = "isolate=none" if exp.isolate == "none" else f"distributed.processes={exp.distributed.processes}"
    if "timing.prepare_next" in given and t.prepare_next and exp.isolate == "none":
        raise ConfigError(
            "timing.prepare_next", True, "forks the next worker process, and isolate=none starts none; drop it"
        )
    if "compilation_cache" in given and exp.compilation_cache and local:
        raise ConfigError(
            "compilation_cache",
            True,
            f"is the job's cache for its fresh worker processes, and {where} has none of its own; drop it",
        )
    if "cache_probe" in given and exp.cache_probe and exp.isolate == "none":
        raise ConfigError(
            "cache_probe", True, "compares two fresh worker processes, and isolate=none starts none; drop it"
        )
    if "compilation_cache_dir" in given and exp.compilation_cache_dir and not exp.compilation_cache:
        if not exp.cache_probe:
            raise ConfigError(
                "compilation_cache_dir",
                exp.compilation_cache_dir,
                "is where the job's compilation cache lives, and compilation_cache=false turns it off; drop one of "
                "them",
            )
    if "dtype" in given and written_dtype not in (None, exp.dtype):  # convert labelled the rows by the arguments
        own = sorted({str(spec.get("dtype")) for _, spec in _array_specs(exp)})
        raise ConfigError(
            "dtype",
            None,
            f"no argument of {exp.workload.fn} follows it (their dtypes are their own: {', '.join(own)}), so it would "
            "only label the rows; drop it, or write the arguments' dtype as ${dtype}",
        )
