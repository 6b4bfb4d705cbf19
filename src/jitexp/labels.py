"""What a case's label says about its inputs: `size=N` where `size` built them, else what did (issue 23).

Rows say how their arguments were built in the `inputs` column: `size` (the workload's `args`, or a
setup function that takes `size`), `setup` (a setup function without a `size` parameter: its params,
already in the label, say what it built), `fixed` (args specs that do not refer to `${size}`: their shapes label
them, and the row's `size` is empty) or `given` (jitexp.measure's argument values: `input_shapes`
says them in short, e.g. `f32[128,32] f32[128,1] +params`). A row without the column (an older run)
is labelled by size, as before. Nothing here imports JAX, nor any other jitexp module (errors, formatting,
rows, tables, plots, api and the worker import it).
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

SIZE, SETUP, GIVEN, FIXED = "size", "setup", "given", "fixed"  # the values of the `inputs` column
MEASURED_SETUP = "jitexp.worker.payload.unpack"  # the workload.setup of jitexp.measure's jobs (api.SETUP_LABEL)
MAX_SHAPES = 3  # array shapes an input_shapes label spells out; the rest are counted


def inputs_kind(setup: str | None, reported: str | None = None, size_built: bool = True) -> str:
    """The `inputs` value of a job whose `workload.setup` is `setup` (None: the args specs, built from size, or
    FIXED where `size_built` is false: no spec refers to ${size}, see size_reaches). For a setup function,
    `reported` is what the worker found (`setup_kind` of the function it imported): the driver never imports the
    user's module. Unknown (the worker failed before importing it): the size, as before."""
    if setup is None:
        return SIZE if size_built else FIXED
    if setup == MEASURED_SETUP:
        return GIVEN
    return reported or SIZE


def setup_kind(setup: Callable) -> str:
    """SIZE where the setup function names a `size` parameter, else SETUP (one taking only `**kw` ignores it)."""
    try:
        return SIZE if "size" in inspect.signature(setup).parameters else SETUP
    except (TypeError, ValueError):  # no signature to read (a builtin): labelled by size, as before
        return SIZE


def inputs_columns(
    setup: str | None, reported: str | None = None, shapes: str | None = None, size_built: bool = True
) -> dict[str, str | None]:
    """The row columns saying how a job's inputs were built (rows.identity_row's, from workload.setup, the
    worker's `reported` setup_kind and whether size reached the args specs) and what they were: `shapes`,
    shapes_label of the arguments the worker built (None where no worker built them: every process failed before);
    jitexp.measure labels its own rows the same way from the arguments it was given (api.given_inputs)."""
    return {"inputs": inputs_kind(setup, reported, size_built), "input_shapes": shapes or None}


SIZE_BUILT = "_size_built"  # config.to_config's attribute on an ExperimentConfig: size_reaches of its workload


def size_built(cfg: Any) -> bool:
    """Whether size built a job's inputs (config.to_config says so on the config; a config made otherwise, a
    variant's or a test's, is taken to, as before)."""
    return bool(getattr(cfg, SIZE_BUILT, True))


_REFERENCE = re.compile(r"\$\{([^{}$]*)")  # an interpolation's body up to a nested one: `mul:` of ${mul:${size},2}


def size_reaches(workload: Mapping[str, Any]) -> bool:
    """Whether `${size}` reaches a workload's arguments: its `args` or `kwargs`, unresolved (OmegaConf's container
    with resolve=False), refer to size, directly or through a param whose own value does
    (`+workload.params.n=${size}` with `shape: [${workload.params.n}]`). A workload with a setup: True (the setup
    is called with size; setup_kind says whether it takes it). Where it does not, the default size labels nothing
    (issue 57: a fixed `shape: [4096]` read `size=1000`)."""
    if workload.get("setup") is not None:
        return True
    params = workload.get("params") or {}

    def refers(node: Any, seen: frozenset[str]) -> bool:
        for body in _REFERENCE.findall(str(node)):
            for token in re.findall(r"[\w.]+", body):
                if token.lstrip(".") == "size":
                    return True
                if token.startswith("workload.params."):
                    name = token[len("workload.params.") :].split(".")[0]
                    if name in params and name not in seen and refers(params[name], seen | {name}):
                        return True
        return False

    return refers([workload.get("args"), workload.get("kwargs")], frozenset())


def short_dtype(dtype: Any) -> str:
    """`f32`, `bf16`, `i32`, `u8`, `c64`, `bool`: a dtype as JAX prints it in a shape (`f32[128,32]`)."""
    name = str(getattr(dtype, "name", dtype))
    match = re.fullmatch(r"(bfloat|float|uint|int|complex)(\d+)", name)
    if match is None:
        return name
    return {"bfloat": "bf", "float": "f", "uint": "u", "int": "i", "complex": "c"}[match[1]] + match[2]


def is_array(value: Any) -> bool:
    """An array leaf (NumPy, JAX, a host copy): it has a shape and a dtype."""
    return hasattr(value, "shape") and hasattr(value, "dtype")


def shapes_label(fn: Callable | None, args: Sequence, kwargs: Mapping[str, Any]) -> str:
    """Given arguments in short: each array argument's `f32[128,32]` in order (the first MAX_SHAPES, then
    `+N arrays`), then `+name` for each other argument (a pytree of parameters, a Python value), named by
    fn's signature or its keyword; e.g. `f32[128,32] f32[128,1] +params`."""
    names = _parameter_names(fn, len(args))
    items = [*zip(names, args), *kwargs.items()]
    shapes = [f"{short_dtype(v.dtype)}[{','.join(str(int(d)) for d in v.shape)}]" for _, v in items if is_array(v)]
    others = [f"+{name}" for name, v in items if not is_array(v)]
    shown = shapes[:MAX_SHAPES] + ([f"+{len(shapes) - MAX_SHAPES} arrays"] if len(shapes) > MAX_SHAPES else [])
    return " ".join(shown + others)


_FLOATING = re.compile(r"bfloat16|float\d+(_\w+)?|complex\d+")
_INTEGRAL = re.compile(r"u?int\d+|bool")


def args_dtype(dtypes: Sequence[str]) -> str:
    """The dtype the arguments have, from their array leaves' dtype names in order: the floating ones, each once,
    joined by `+` (`float16+float32` for mixed arguments); where none floats, the integer ones (`int32`); "" where
    there is no such array (a typed key, Python values only). A row's dtype says this where it differs from the job's
    (issue 57: mixed specs, a setup returning other dtypes)."""
    chosen = [d for d in dtypes if _FLOATING.fullmatch(d)] or [d for d in dtypes if _INTEGRAL.fullmatch(d)]
    return "+".join(dict.fromkeys(chosen))


def prejitted(fn: Any) -> str:
    """The jit a function already comes wrapped in, by its type (no JAX here): `jax.jit` for a jax.jit-wrapped
    function (jaxlib's PjitFunction), `equinox.filter_jit`, `flax.nnx.jit`, or the wrapper's module and class for
    another object with `lower` and `__wrapped__` (the jax.stages.Wrapped protocol); "" for a plain function."""
    kind = type(fn)
    module, name = getattr(kind, "__module__", "") or "", kind.__name__
    if name == "PjitFunction" or module.startswith("jax") and name == "Wrapped":
        return "jax.jit"
    if not (callable(getattr(fn, "lower", None)) and callable(getattr(fn, "__wrapped__", None))):
        return ""
    top = module.split(".")[0]
    return {"equinox": "equinox.filter_jit", "flax": "flax.nnx.jit"}.get(top, f"{top}.{name}")


def prejitted_refusal(fn: Any, modes: Sequence[str], how: str) -> str | None:
    """Why a function already wrapped in a jit cannot be measured with eager (None where it can): eager would time
    the compiled program, one cached call, not op-by-op dispatch, and `jit 1.13x faster than eager` would compare a
    program with itself (issue 57). `how`: what to write instead, in the words of the caller's interface."""
    wrapper = prejitted(fn)
    if not wrapper or "eager" not in modes:
        return None
    return (
        f"is already wrapped in {wrapper}, so its eager row would time the compiled program (one cached call), not "
        f"op-by-op dispatch; {how}"
    )


def _parameter_names(fn: Callable | None, n: int) -> list[str]:
    """The names of fn's first n positional parameters (`*args` ones as `args[i]`), `arg<i>` where unknown."""
    names: list[str] = []
    try:
        params = list(inspect.signature(fn).parameters.values()) if fn is not None else []
    except (TypeError, ValueError):
        params = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind is p.VAR_POSITIONAL:
            names.extend(f"{p.name}[{i}]" for i in range(n - len(names)))
    return (names + [f"arg{i}" for i in range(len(names), n)])[:n]


def built_by(row: Mapping[str, Any]) -> str | None:
    """What built a case's inputs where `size` did not: the given arguments' `input_shapes`, or "" for a
    setup without `size` (its params, already in the label, say what it built); None where size did, or
    where the row does not say (an older run, given inputs whose shapes no one filled in)."""
    kind, shapes = row.get("inputs"), row.get("input_shapes")
    kind = kind if isinstance(kind, str) else None  # NaN or pandas' NA from a CSV: not said
    if kind == SETUP:
        return ""
    if kind in (GIVEN, FIXED) and isinstance(shapes, str) and shapes:  # else None, or NaN from a CSV
        return shapes
    if kind == FIXED:  # no arguments at all, or no worker built them: nothing to say, and size did not build them
        return ""
    return None


def size_meaning(size: Any, shapes: Any) -> str:
    """What `size` is in a row's input_shapes: each dimension equal to size written `size` (`f32[size,256]`,
    `f32[size,size] f32[size,size]`); "" where no dimension is the size or the row has no shapes."""
    if not isinstance(shapes, str) or not shapes or isinstance(size, bool):
        return ""
    try:
        n = str(int(float(size)))
    except (TypeError, ValueError):
        return ""

    def dims(match: re.Match) -> str:
        return "[" + ",".join("size" if d == n else d for d in match[1].split(",")) + "]"

    text = re.sub(r"\[([\d,]+)\]", dims, shapes)
    return text if "[size" in text or ",size" in text else ""


def size_text(row: Mapping[str, Any], sep: str = "=") -> str:
    """A case's label for its inputs: `size=1000` where size built them, else what did (see built_by)."""
    what = built_by(row)
    if what is not None:
        return what
    size = row.get("size")
    if isinstance(size, float) and math.isfinite(size) and size.is_integer():  # 1000.0 after a CSV's NaN
        size = int(size)
    return f"size{sep}{size}"


def joined(rows: Sequence[Mapping[str, Any]], text: Callable[[Mapping[str, Any]], str]) -> str:
    """Every distinct text of the rows, in order, joined by `/` (`float32/bfloat16`), as a job's one line shows it."""
    return "/".join(t for t in dict.fromkeys(text(r) for r in rows) if t)
