"""`jitexp.measure(fn, *args)`: the CLI's engine on a function object and argument values, and its `Measurement`.

The call becomes an ExperimentConfig validated as a composed one is (`config.from_dict`), with the
function and arguments in a `records.Payload` in place of import paths (`jitexp.worker.payload`), and runs
through `runner.run`: fresh worker processes, interleaved paired modes, the same statistics and rows.
Importing this module imports no JAX; a call imports JAX only if the caller's objects already did.
"""

from __future__ import annotations

import functools
import html
import inspect
import keyword
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, fields
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jitexp.analysis.formatting.answer import failure_text
from jitexp.config import DTYPES, MODES, PLATFORMS, ExperimentConfig, TimingConfig, from_dict
from jitexp.errors import ConfigError, python_hint
from jitexp.labels import GIVEN, MEASURED_SETUP, SIZE, shapes_label
from jitexp.records import JobResult, Payload

if TYPE_CHECKING:
    import pandas as pd

MEASURED_MODES = tuple(m for m in MODES if m != "numpy")  # numpy needs a declared twin, which a function object lacks
SETUP_LABEL = MEASURED_SETUP  # workload.setup of a measured function: its inputs come from the payload
FIRST_CALL = ("first_call_s", "trace_s", "lower_s", "compile_s", "execute_s")
# the keyword a jitexp.measure mistake names, for the config key that check_* and validate name
_KEYS = {
    "workload.static_argnums": "static_argnums",
    "workload.static_argnames": "static_argnames",
    "mode.donate_argnums": "donate_argnums",
    "workload.carry": "carry",
    "workload.jit_fn": "jit_fn",
    "workload.name": "name",
}


def measure(
    fn: Callable,
    *args: Any,
    kwargs: Mapping[str, Any] | None = None,
    modes: Sequence[str] | str = ("eager", "jit"),
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    donate_argnums: int | Sequence[int] = (),
    carry: Mapping[int, int] | None = None,
    jit_fn: Callable | str | None = None,
    timing: str | Mapping[str, Any] = "default",
    isolate: str = "process",
    device: str | None = None,
    name: str | None = None,
    size: int | None = None,
) -> Measurement:
    """Measure fn(*args, **kwargs) in each mode on the CLI's engine; failures are error rows, mistakes ValueErrors.

    kwargs are fn's own keyword arguments; the options mean what the CLI's keys of the same name
    mean (docs/configuration.md). modes: names, or one string of them ("jit", "eager,jit", as the magic's -m).
    timing: a preset (default, quick, rigorous) or a mapping of timing keys over the default preset.
    device: cpu, gpu, tpu, auto or e.g. gpu:1 (default: where the first array argument lives, else auto).
    name and size label the rows (default: fn's qualified name, and the arguments' shapes in short,
    `input_shapes`; the `size` column then holds the element count of the largest array argument).
    """
    cfg, payload = prepare(
        fn,
        *args,
        kwargs=kwargs,
        modes=modes,
        static_argnums=static_argnums,
        static_argnames=static_argnames,
        donate_argnums=donate_argnums,
        carry=carry,
        jit_fn=jit_fn,
        timing=timing,
        isolate=isolate,
        device=device,
        name=name,
        size=size,
    )
    from jitexp.engine.runner import run

    return Measurement(labelled(run(cfg, payload=payload), fn, args, kwargs or {}, size))


def labelled(result: JobResult, fn: Callable, args: Sequence, kwargs: Mapping[str, Any], size: int | None) -> JobResult:
    """result with its rows labelled by the arguments measure was given (given_inputs), and its hints in measure's
    keywords (errors.python_hint: `static_argnums=1`, not the command line's `mode.static_argnums=[1]`)."""
    for row in result.rows:
        row.update(given_inputs(fn, args, kwargs, size))
        if isinstance(row.get("hint"), str):
            row["hint"] = python_hint(row["hint"])
    return result


def given_inputs(fn: Callable, args: Sequence, kwargs: Mapping[str, Any], size: int | None) -> dict[str, str]:
    """The `inputs` and `input_shapes` columns of measure's rows: the arguments label them (`f32[128,32]
    +params`), unless the caller named a size, which then labels them as a CLI job's size does."""
    return {"inputs": SIZE if size is not None else GIVEN, "input_shapes": shapes_label(fn, args, kwargs)}


def prepare(
    fn: Callable,
    *args: Any,
    kwargs: Mapping[str, Any] | None = None,
    modes: Sequence[str] | str = ("eager", "jit"),
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    donate_argnums: int | Sequence[int] = (),
    carry: Mapping[int, int] | None = None,
    jit_fn: Callable | str | None = None,
    timing: str | Mapping[str, Any] = "default",
    isolate: str = "process",
    device: str | None = None,
    name: str | None = None,
    size: int | None = None,
) -> tuple[ExperimentConfig, Payload]:
    """measure()'s validated config and payload, without running them (the pytest plugin runs them itself)."""
    if not callable(fn):
        raise ConfigError("fn", _short(fn), "a callable: the function to measure, e.g. jitexp.measure(f, x)")
    if kwargs is not None and not isinstance(kwargs, Mapping):
        raise ConfigError("kwargs", _short(kwargs), "a mapping of fn's keyword arguments, e.g. kwargs={'lr': 0.1}")
    kwargs = dict(kwargs or {})
    _check_call(fn, args, kwargs)
    chosen = tuple(m.strip() for m in modes.split(",")) if isinstance(modes, str) else tuple(modes)
    for mode in chosen:
        if mode not in MEASURED_MODES:
            raise ConfigError("modes", mode, MEASURED_MODES)
    if not chosen:
        raise ConfigError("modes", [], MEASURED_MODES)
    if isolate not in ("process", "none"):
        raise ConfigError("isolate", isolate, ("process", "none"))
    if jit_fn is not None and not isinstance(jit_fn, str) and not callable(jit_fn):
        raise ConfigError("jit_fn", _short(jit_fn), "a jit transformation: jax.jit, equinox.filter_jit, flax.nnx.jit")
    from jitexp.worker.payload import pack

    payload, found = pack(fn, args, kwargs, jit_fn if callable(jit_fn) else None, pickled=isolate == "process")
    platform, index = _device(device, args, kwargs)
    workload = {
        "fn": _label(getattr(_target(fn), "__module__", None), function_name(fn)),
        "name": name or function_name(fn),
        "args": None,
        "setup": SETUP_LABEL,
        "static_argnums": _ints(static_argnums),
        "static_argnames": [static_argnames] if isinstance(static_argnames, str) else list(static_argnames),
        "carry": dict(carry or {}),
        "jit_fn": jit_fn if isinstance(jit_fn, str) else public_path(jit_fn) if jit_fn is not None else "jax.jit",
        "description": "a function object measured by jitexp.measure",
    }
    spec = {
        "workload": workload,
        "mode": {**{m: True for m in chosen}, "donate_argnums": _ints(donate_argnums)},
        "device": {"platform": platform, "index": index},
        "timing": timing_keys(timing),
        "size": size if size is not None else max((int(a.size) for a in found), default=1) or 1,
        "dtype": _dtype(found),
        "isolate": isolate,
    }
    try:
        cfg = from_dict(spec)
    except ConfigError as error:
        key = _KEYS.get(error.key, error.key)
        raise ConfigError(key, error.value, error.expected) from None
    _check_wraps(fn, jit_fn, cfg)
    return cfg, payload


def _check_call(fn: Callable, args: Sequence, kwargs: Mapping[str, Any]) -> None:
    """fn callable with the arguments given, where its signature can be read: said before any worker starts, as the
    command line's preflight does (measure(f) of a two-argument f ran every mode's workers to a TypeError each)."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature to read (a builtin): the call says
        return
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        given = f"{len(args)} argument{'s' if len(args) != 1 else ''}" + (
            f" and keywords {', '.join(kwargs)}" if kwargs else ""
        )
        raise ConfigError("args", given, f"{function_name(fn)}{signature} cannot be called with them ({exc})") from None


def _check_wraps(fn: Callable, jit_fn: Callable | str | None, cfg: ExperimentConfig) -> None:
    """jax.jit (or jit_fn) refusing the function, said before any worker starts: a generator function, a static or
    donated position it does not have (config.imports.jit_refusal)."""
    from jitexp.config.imports import import_fn, jit_options_in_force, jit_refusal
    from jitexp.labels import prejitted_refusal

    compiled = cfg.mode.jit or cfg.mode.aot
    # jax.jit only where JAX is loaded already (a JAX function's caller): the workers would import it, not this check
    loaded = callable(jit_fn) or cfg.jit_fn.partition(".")[0] in sys.modules
    wrapper = (jit_fn if callable(jit_fn) else import_fn(cfg.jit_fn, "jit_fn")) if compiled and loaded else None
    options = jit_options_in_force(cfg)
    mistake = jit_refusal(fn, wrapper, options)
    if mistake is not None:
        key, expected = mistake
        raise ConfigError(key, function_name(fn) if key == "fn" else options[key], expected)
    how = (
        "pass the function it wraps (fn.__wrapped__: jitexp applies the jit itself), or time the compiled call "
        "alone: modes='jit'"
    )
    prejitted = prejitted_refusal(fn, cfg.mode.names, how)
    if prejitted is not None:  # issue 57: `jit 1.02x slower than eager` compared a program with itself
        raise ConfigError("fn", function_name(fn), prejitted)


def timing_presets() -> dict[str, dict[str, Any]]:
    """The timing presets jitexp ships (conf/timing/*.yaml), by name, each laid over TimingConfig's defaults
    as Hydra lays it over the schema (`default` is those defaults: its file names no value of its own)."""
    from omegaconf import OmegaConf

    defaults = asdict(TimingConfig())
    folder = resources.files("jitexp.conf").joinpath("timing")
    presets = {}
    for entry in folder.iterdir():
        if entry.name.endswith(".yaml"):
            loaded = OmegaConf.to_container(OmegaConf.create(entry.read_text(encoding="utf-8")))
            presets[entry.name[: -len(".yaml")]] = {**defaults, **(loaded if isinstance(loaded, dict) else {})}
    return dict(sorted(presets.items()))


def timing_keys(timing: str | Mapping[str, Any]) -> dict[str, Any]:
    """The timing keys of a preset name, or of a mapping laid over the default preset; mistakes name the choices."""
    presets = timing_presets()
    if isinstance(timing, str):
        if timing not in presets:
            raise ConfigError("timing", timing, tuple(presets))
        return presets[timing]
    if not isinstance(timing, Mapping):
        raise ConfigError("timing", _short(timing), f"a preset ({', '.join(presets)}) or a mapping of timing keys")
    known = [f.name for f in fields(TimingConfig)]
    for key, value in timing.items():
        if key not in known:
            raise ConfigError(f"timing.{key}", value, "no such timing key; valid keys: " + ", ".join(known))
    return {**presets["default"], **timing}


def function_name(fn: Callable) -> str:
    """The workload name of a function object: its qualified name (`make.<locals>.loss`, `<lambda>`, `MLP`)."""
    target = _target(fn)
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    return str(name) if isinstance(name, str) else type(target).__qualname__


def public_path(obj: Any) -> str:
    """The shortest import path that reaches obj (`equinox.filter_jit`, not `equinox._jit.filter_jit`), for labels."""
    module = getattr(obj, "__module__", None) or ""
    name = getattr(obj, "__name__", None) or type(obj).__name__
    parts = module.split(".")
    for i in range(1, len(parts) + 1):
        candidate = sys.modules.get(".".join(parts[:i]))
        if candidate is not None and getattr(candidate, name, None) is obj:
            return f"{'.'.join(parts[:i])}.{name}"
    return _label(module, getattr(obj, "__qualname__", name))


def _target(fn: Callable) -> Any:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn


def _label(module: str | None, qualname: str) -> str:
    """`module.qualname` as a dotted path of identifiers (`__main__.make.locals.loss`): a label, never imported."""
    parts = [re.sub(r"\W", "_", p).strip("_") or "fn" for p in f"{module or '__main__'}.{qualname}".split(".")]
    parts = [p if (p.isidentifier() and not keyword.iskeyword(p)) else f"_{p}" for p in parts]
    return ".".join(parts)


def _ints(value: int | Sequence[int]) -> list[int]:
    return [value] if isinstance(value, int) else list(value)


def _dtype(found: list) -> str:
    """The row's dtype: that of the largest floating array argument (float32 when there is none)."""
    floats = [a for a in found if getattr(a.dtype, "kind", "") == "f" or str(a.dtype) == "bfloat16"]
    name = str(max(floats, key=lambda a: a.nbytes).dtype) if floats else "float32"
    return name if name in DTYPES else "float32"


def _device(device: str | None, args: Sequence, kwargs: Mapping) -> tuple[str, int]:
    """(platform, index) of `cpu`, `gpu:1`, ...; None: the device of the first jax.Array argument, else auto (the
    accelerator where there is one, as the CLI's default)."""
    if device is None:
        return _device_of_arrays(args, kwargs)
    platform, _, index = device.partition(":")
    if platform not in PLATFORMS or (index and not index.isdigit()):
        raise ConfigError("device", device, "cpu, gpu, tpu or auto, with :INDEX for one of several (gpu:1)")
    return platform, int(index or 0)


def _device_of_arrays(args: Sequence, kwargs: Mapping) -> tuple[str, int]:
    if "jax" not in sys.modules:
        return "auto", 0
    import jax

    for leaf in jax.tree.leaves((tuple(args), dict(kwargs))):
        if isinstance(leaf, jax.Array):
            first = sorted(leaf.devices(), key=lambda d: d.id)[0]
            return first.platform, jax.devices(first.platform).index(first)
    return "auto", 0


def _short(value: Any) -> Any:
    """value for an error line: itself when its repr is short, else its repr cut to 60 characters."""
    text = repr(value)
    return value if len(text) <= 60 else text[:57] + "..."


class Measurement:
    """What jitexp.measure measured: the rows of results.csv (and the job's other CSVs), verdicts, the cold call."""

    def __init__(self, result: JobResult):
        self.result = result

    @property
    def rows(self) -> pd.DataFrame:
        """One row per mode with the results.csv columns."""
        from jitexp.store.csvio import to_frame

        return to_frame(self.result.rows)

    @property
    def samples(self) -> pd.DataFrame:
        """samples.csv: every timed sample."""
        from jitexp.store.csvio import to_frame
        from jitexp.store.schema import SAMPLE_COLUMNS

        return to_frame(self.result.samples, SAMPLE_COLUMNS)

    @property
    def processes(self) -> pd.DataFrame:
        """processes.csv: one row per worker process and mode (cold first calls)."""
        from jitexp.store.csvio import to_frame
        from jitexp.store.schema import PROCESS_COLUMNS

        return to_frame(self.result.processes, PROCESS_COLUMNS)

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(str(r["mode"]) for r in self.result.rows)

    @property
    def ok(self) -> bool:
        """Every mode measured (no error row)."""
        return all(r.get("status") == "ok" for r in self.result.rows)

    @property
    def errors(self) -> list[str]:
        """Each failed mode as one line: `jit failed in trace: TypeError: ...`."""
        return [failure_text(r) for r in self.result.rows if r.get("status") != "ok"]

    def row(self, mode: str = "jit") -> dict[str, Any]:
        """The results.csv row of one mode, as a dict."""
        for row in self.result.rows:
            if row["mode"] == mode:
                return row
        raise ConfigError("mode", mode, self.modes)

    def median_s(self, mode: str = "jit") -> float:
        """The mode's steady-state median seconds per call."""
        return float(self._ok(mode)["median_s"])

    def speedup(self, mode: str = "jit") -> float:
        """How many times faster than the baseline mode (the first measured) the mode's steady state is."""
        row = self._ok(mode)
        if row.get("speedup") is None:
            raise ValueError(f"{mode} has no speedup: it is {self._alone(mode)}")
        return float(row["speedup"])

    def verdict(self, mode: str = "jit") -> str:
        """faster, slower or no significant difference, against the baseline mode (see speedup)."""
        row = self._ok(mode)
        if row.get("verdict") is None:
            raise ValueError(f"{mode} has no verdict: it is {self._alone(mode)}")
        return str(row["verdict"])

    def first_call(self, mode: str = "jit") -> dict[str, float]:
        """The cold first call in a fresh process and its parts (trace + lower + compile + execute = first_call_s)."""
        row = self._ok(mode)
        return {key: float(row[key]) for key in FIRST_CALL if row.get(key) is not None}

    def save(self, folder: str | Path, *, overwrite: bool = False) -> Path:
        """Write the job's CSVs into folder (as a CLI job does), for jitexp-report and jitexp-compare. A folder that
        holds results already (a command-line run's, an earlier save's) is refused, unless overwrite=True replaces
        them (every result file there, a sweep's job folders included)."""
        from jitexp.store.folders import clear_results, held_results, write_job

        folder = Path(folder)
        held = held_results(folder)
        if held and not overwrite:
            shown = ", ".join(held[:3]) + (f", ... ({len(held) - 3} more)" if len(held) > 3 else "")
            raise ConfigError(
                "folder",
                str(folder),
                f"already holds results ({shown}); save(folder, overwrite=True) replaces them, or save into another "
                "folder",
            )
        clear_results(folder)
        write_job(self.result, folder)
        return folder

    def __repr__(self) -> str:
        """The CLI's one-line answer: each mode's time with its CI, then the verdicts, compile and pay-off."""
        from jitexp.analysis.formatting.answer import job_summary

        return job_summary(self.result.rows)

    def _repr_html_(self) -> str:
        """A small table for Jupyter: per mode its time, cold first call, compile and verdict."""
        from jitexp.analysis.formatting.block import interval_text
        from jitexp.analysis.formatting.phrases import speedup_phrase
        from jitexp.analysis.formatting.values import format_seconds

        cells = []
        for row in self.result.rows:
            if row.get("status") != "ok":
                cells.append((row["mode"], "-", "-", "-", failure_text(row)))
                continue
            against = (
                speedup_phrase(
                    row["mode"],
                    row["baseline_mode"],
                    row["speedup"],
                    row["speedup_ci_low"],
                    row["speedup_ci_high"],
                    row["verdict"],
                    one_process=row.get("ci_scope") == "within_process",
                )
                if row.get("speedup") is not None
                else ""
            )
            cells.append(
                (
                    row["mode"],
                    f"{format_seconds(row['median_s'])} (95% CI {interval_text(row['ci95_low_s'], row['ci95_high_s'])})",
                    format_seconds(row.get("first_call_s")),
                    format_seconds(row.get("compile_s")),
                    against,
                )
            )
        head = ("mode", "per call", "first call", "compile", "verdict")
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in cells_) + "</tr>" for cells_ in cells
        )
        return (
            f"<p><code>{html.escape(repr(self))}</code></p><table><thead><tr>"
            + "".join(f"<th>{h}</th>" for h in head)
            + f"</tr></thead><tbody>{body}</tbody></table>"
        )

    def _ok(self, mode: str) -> dict[str, Any]:
        row = self.row(mode)
        if row.get("status") != "ok":
            raise ValueError(failure_text(row))
        return row

    def _alone(self, mode: str) -> str:
        return "the baseline mode" if mode == self.modes[0] else "measured without a baseline mode"
