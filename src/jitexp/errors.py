"""Error kinds jitexp reports: config mistakes (one line, exit 2) and failed case phases (a row)."""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from jitexp.labels import is_array

PHASES = ("open", "inputs", "trace", "lower", "compile", "execute", "check")
DEVICE_BUSY = "DeviceBusy"  # error_type of a process refused the device at open (another process holds it)


def device_busy(message: str) -> bool:
    """JAX's open of a device held by another process: libtpu's "The TPU is already in use by process with pid N"."""
    return "already in use" in message


class ConfigError(ValueError):
    """A user mistake in the config: names the key, the bad value and the valid choices (and the file, if one set it)."""

    def __init__(self, key: str, value: object, expected: str | Iterable[str], source: str | None = None):
        if not isinstance(expected, str):
            expected = "valid choices: " + ", ".join(str(c) for c in expected)
        self.key, self.value, self.expected, self.source = key, value, expected, source
        shown = f"{key}={value!r} is invalid" if value is not None else f"{key} is invalid"
        super().__init__(f"{source + ': ' if source else ''}{shown}; {expected}")


class PhaseError(Exception):
    """An exception raised while running one phase of a case; the case becomes a status=error row."""

    def __init__(self, phase: str, cause: BaseException):
        assert phase in PHASES, phase
        self.phase, self.cause = phase, cause
        super().__init__(f"{phase}: {qualified_name(type(cause))}: {first_line(cause)}")


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a job after `finished` of its processes finished: `result` is the job's rows from those processes
    alone (stop_reason `interrupted`), for the caller to keep before it stops, or None where they make no rows alone
    (processes that pair up); anyone else sees a KeyboardInterrupt."""

    def __init__(self, result: Any, finished: int) -> None:
        super().__init__()
        self.result, self.finished = result, finished


class phase:
    """Context manager that tags any exception raised inside it with the phase name."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> Literal[False]:
        if exc is not None and interrupted(exc):
            raise KeyboardInterrupt from exc
        # a config mistake found inside a phase (a sharding that does not fit the arrays setup made) stays one
        if exc is not None and isinstance(exc, Exception) and not isinstance(exc, (PhaseError, ConfigError)):
            raise PhaseError(self.name, exc) from exc
        return False


@dataclass
class Failure:
    """Why a case (or a whole process) failed: the outcome columns of a status=error row."""

    error_phase: str
    error_type: str
    error_message: str
    hint: str

    def as_row(self) -> dict[str, Any]:
        return {"status": "error", **dataclasses.asdict(self)}

    def line(self) -> str:
        """ "phase: Type: message": how a distributed rank's last stderr line carries its failure to the driver
        (read back by `line_parts`)."""
        return f"{self.error_phase}: {self.error_type}: {self.error_message}"


def line_parts(line: str) -> tuple[str, str, str] | None:
    """(phase, type, message) of a `Failure.line()`, or None when the line is not one."""
    stage, kind, message = (line.split(": ", 2) + ["", ""])[:3]
    return (stage, kind, message) if stage.isidentifier() and kind and message else None


Call = tuple[Callable, tuple, Mapping[str, Any]]  # a function, its positional and its keyword arguments


def failure_of(phase_name: str, exc: BaseException, call: Call | None = None) -> Failure:
    """The failure of a case that raised `exc` in a phase: class, first line, hint (naming the knob for the
    very argument, when the failed call is given)."""
    return Failure(phase_name, qualified_name(type(exc)), first_line(exc), hint_for(exc, call))


def qualified_name(cls: type) -> str:
    """`jax.errors.TracerBoolConversionError`, `ValueError`: the public name of an exception class.

    A private class (`numpy._core._exceptions._ArrayMemoryError`) is named by its first public
    base (`MemoryError`), the name a user can catch and search for.
    """
    module = cls.__module__
    if module == "builtins":
        return cls.__qualname__
    if module.split(".")[0] in ("jax", "jaxlib") and "._" in module:
        jax_errors = sys.modules.get("jax.errors")  # loaded with jax, which raised it; the driver imports no JAX
        if getattr(jax_errors, cls.__name__, None) is cls:
            return f"jax.errors.{cls.__name__}"
    if _private(cls):
        public = next((base for base in cls.__mro__[1:] if not _private(base)), None)
        if public is not None and public is not object:
            return qualified_name(public)
    return f"{module}.{cls.__qualname__}"


def _private(cls: type) -> bool:
    return cls.__name__.startswith("_") or any(part.startswith("_") for part in cls.__module__.split("."))


def first_line(exc: BaseException) -> str:
    """The message's first line; for an exception that crossed a host callback, the original one's line."""
    cause = callback_cause(exc)
    if cause is not None:
        return cause[1]
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


_EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*)(: .*)?$")


def callback_cause(exc: BaseException) -> tuple[str, str] | None:
    """(class name, last line) of the exception raised inside a host callback, from the traceback
    JAX embeds in its JaxRuntimeError ("CpuCallback error calling callback: Traceback ..."); else None."""
    text = str(exc)
    if "Traceback (most recent call last)" not in text:
        return None
    for line in reversed(text.strip().splitlines()):
        match = _EXCEPTION_LINE.match(line.strip())
        if match and (match.group(2) or match.group(1).endswith(("Error", "Exception", "Interrupt", "Exit"))):
            return match.group(1).rsplit(".", 1)[-1], line.strip()
    return None


def interrupted(exc: BaseException) -> bool:
    """A Ctrl-C that surfaced as an error (JAX wraps one raised inside a callback): an interrupt, not a result."""
    cause = callback_cause(exc)
    return cause is not None and cause[0] == "KeyboardInterrupt"


_STATIC = "make the argument static (mode.static_argnums)"  # {static}, until the argument is known
_HINTS = {
    "TracerBoolConversionError": (
        "value-dependent Python control flow under jit: use jax.lax.cond / jnp.where, or {static}"
    ),
    "TracerIntegerConversionError": (
        "a traced value was used as a Python int (range(), indexing): {static}, or use jax.lax.fori_loop"
    ),
    "ConcretizationTypeError": (
        "a concrete Python value was needed from a traced one (float(), .item(), shapes): "
        "{static}, or keep the value traced"
    ),
    "TracerArrayConversionError": ("NumPy was called on a traced value: use jax.numpy inside jitted code"),
    "UnexpectedTracerError": ("a tracer escaped its trace (stored in a global or closure): return values instead"),
    "NonConcreteBooleanIndexError": (
        "boolean indexing x[mask] has a data-dependent shape under jit: use jnp.where(mask, x, 0), "
        "or give the result a fixed size (jnp.nonzero(mask, size=...))"
    ),
    "NoAotError": (
        "this jit_fn has no ahead-of-time path: measure mode=[eager,jit], or use a jit_fn with .lower "
        "(jax.jit, equinox.filter_jit, flax.nnx.jit)"
    ),
}


def hint_for(exc: BaseException, call: Call | None = None) -> str:
    """A one-line suggestion for known jit failures, else an empty string.

    With the failed call (fn, args, kwargs), a hint that says to make an argument static names the
    knob for that argument as it was passed: `mode.static_argnums=[1]`, or `mode.static_argnames=[cfg]`
    for a keyword.
    """
    if getattr(exc, "hint", ""):  # an exception of jitexp's own that knows what to change (modes.CarryError)
        return str(exc.hint)  # type: ignore[attr-defined]
    for cls in type(exc).__mro__:
        if cls.__name__ in _HINTS:
            return _hint(cls.__name__, str(exc), call)
    cause = callback_cause(exc)
    if cause is not None:
        if cause[0] in _HINTS:
            return _hint(cause[0], cause[1], None)
        if "MemoryError" in cause[0]:
            return "out of host memory inside a host callback: use a smaller size"
        return "raised inside a host callback (jax.pure_callback / io_callback); the message is the callback's own"
    if isinstance(exc, MemoryError):
        return "out of host memory: use a smaller size or dtype, or fewer processes (timing.processes)"
    message = str(exc)
    if "as an abstract array" in message:  # "Error interpreting argument to f as an abstract array ... at path s."
        path = re.search(r"at path (\S+?)\.?(\s|$)", message)
        if path is None:
            return (
                "an argument is not an array JAX can trace (a string, an object): make it static (mode.static_argnums)"
            )
        if call is not None and _holds_arrays(path.group(1), call):
            return (
                f"a leaf ({path.group(1)}) is not an array JAX can trace (a function, a string) and sits among "
                "arrays: mode.jit_fn=equinox.filter_jit traces the arrays and holds the rest static"
            )
        return (
            f"an argument ({path.group(1)}) is not an array JAX can trace (a string, an object): "
            f"make it static: {static_knob(path.group(1), call)}"
        )
    if "Non-hashable static arguments" in message:
        return "a static argument must be hashable (int, float, str, tuple): pass arrays as traced arguments"
    if "RESOURCE_EXHAUSTED" in message or "Out of memory" in message:
        return "out of device memory: use a smaller size"
    return ""


_DEPENDS_ON = re.compile(r"depends on the value of the argument (\S+?)\.?(\s|$)")


def _hint(name: str, message: str, call: Call | None) -> str:
    """A _HINTS entry, its {static} naming the argument JAX's message blames when that one can be static."""
    blamed = _DEPENDS_ON.search(message)
    static = _STATIC
    if blamed is not None and call is not None and _hashable_value(blamed.group(1), call):
        static = f"make {_name(blamed.group(1)) or 'it'} static ({static_knob(blamed.group(1), call)})"
    return _HINTS[name].format(static=static)


def static_knob(path: str, call: Call | None) -> str:
    """The override that makes the argument at JAX's `path` (`cfg`, `c[0]`, `d['k']`) static, as it was passed:
    `mode.static_argnames=[cfg]` for a keyword, `mode.static_argnums=[1]` for a position (from fn's signature)."""
    name = _name(path)
    if name is None:
        return "mode.static_argnums"
    if call is not None:
        fn, args, kwargs = call
        if name in kwargs:
            return f"mode.static_argnames=[{name}]"
        position = _position(fn, name, path, len(args))
        if position is not None:
            return f"mode.static_argnums=[{position}]"
    return f"mode.static_argnums=[<position of {name}>] (mode.static_argnames=[{name}] if passed by keyword)"


# a hint's command-line knobs as jitexp.measure's keywords: the same advice where the job came from Python
_PYTHON_KNOBS = (
    (re.compile(r"mode\.static_argnums=\[(\d+)\]"), r"static_argnums=\1"),
    (re.compile(r"mode\.static_argnums=\[(<position of \w+>)\]"), r"static_argnums=\1"),
    (re.compile(r"mode\.static_argnames=\[(\w+)\]"), r'static_argnames="\1"'),
    (re.compile(r"mode\.jit_fn=([\w.]+)"), r'jit_fn="\1"'),
)


def python_hint(hint: str) -> str:
    """A hint written for the command line (`mode.static_argnums=[1]`) in jitexp.measure's keywords
    (`static_argnums=1`), for rows measured from Python."""
    for pattern, keyword in _PYTHON_KNOBS:
        hint = pattern.sub(keyword, hint)
    return hint


def _name(path: str) -> str | None:
    """The argument's name at the head of JAX's path (`cfg` of `cfg.scale`, `c` of `c[0]`), None if none."""
    match = re.match(r"\w+", path)
    return match.group(0) if match else None


def _position(fn: Callable, name: str, path: str, n_args: int) -> int | None:
    """The position of fn's parameter `name` among n_args positional arguments (into *args: `c[2]`), else None."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return None
    for i, p in enumerate(params):
        if p.name != name:
            continue
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and i < n_args:
            return i
        index = re.match(r"\w+\[(\d+)\]", path)
        if p.kind is p.VAR_POSITIONAL and index is not None and i + int(index.group(1)) < n_args:
            return i + int(index.group(1))
    return None


def _argument(path: str, call: Call) -> tuple[bool, Any]:
    """(found, value) of the argument at JAX's `path` in the call: a keyword's value, or a position's."""
    name = _name(path)
    if name is None:
        return False, None
    fn, args, kwargs = call
    if name in kwargs:
        return True, kwargs[name]
    position = _position(fn, name, path, len(args))
    return (False, None) if position is None else (True, args[position])


def _hashable_value(path: str, call: Call) -> bool:
    """Whether the argument at `path` could be static: a hashable Python value, or a 0-d array (a config's
    `{value: 3}` is one until it is made static)."""
    found, value = _argument(path, call)
    if not found:
        return False
    if is_array(value):
        return tuple(value.shape) == ()
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _holds_arrays(path: str, call: Call) -> bool:
    """Whether the argument at `path` is a pytree holding arrays (an equinox module, a dict of params and a
    name): static would need it hashable, and its arrays are not."""
    found, value = _argument(path, call)
    jax = sys.modules.get("jax")  # the call failed under jit: JAX is loaded; the driver imports none
    if not found or jax is None:
        return False
    return any(is_array(leaf) for leaf in jax.tree_util.tree_leaves(value))
