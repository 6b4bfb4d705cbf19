"""Error kinds jitexp reports: config mistakes (one line, exit 2) and failed case phases (a row)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

PHASES = ("inputs", "trace", "lower", "compile", "execute", "check")


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


class phase:
    """Context manager that tags any exception raised inside it with the phase name."""

    def __init__(self, name: str):
        self.name = name

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: Any, exc: BaseException | None, tb: Any) -> Literal[False]:
        if exc is not None and interrupted(exc):
            raise KeyboardInterrupt from exc
        if exc is not None and isinstance(exc, Exception) and not isinstance(exc, PhaseError):
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


def failure_of(phase_name: str, exc: BaseException) -> Failure:
    """The failure of a case that raised `exc` in a phase: class, first line, hint."""
    return Failure(phase_name, qualified_name(type(exc)), first_line(exc), hint_for(exc))


def qualified_name(cls: type) -> str:
    """`jax.errors.TracerBoolConversionError`, `ValueError`: the public name of an exception class.

    A private class (`numpy._core._exceptions._ArrayMemoryError`) is named by its first public
    base (`MemoryError`), the name a user can catch and search for.
    """
    module = cls.__module__
    if module == "builtins":
        return cls.__qualname__
    if module.split(".")[0] in ("jax", "jaxlib") and "._" in module:
        import jax.errors

        if getattr(jax.errors, cls.__name__, None) is cls:
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


_HINTS = {
    "TracerBoolConversionError": (
        "value-dependent Python control flow under jit: use jax.lax.cond / jnp.where, "
        "or make the argument static (mode.static_argnums)"
    ),
    "TracerIntegerConversionError": (
        "a traced value was used as a Python int (range(), indexing): make that argument "
        "static (mode.static_argnums=[i]) or use jax.lax.fori_loop"
    ),
    "ConcretizationTypeError": (
        "a concrete Python value was needed from a traced one (float(), .item(), shapes): "
        "make the argument static (mode.static_argnums) or keep the value traced"
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


def hint_for(exc: BaseException) -> str:
    """A one-line suggestion for known jit failures, else an empty string."""
    for cls in type(exc).__mro__:
        if cls.__name__ in _HINTS:
            return _HINTS[cls.__name__]
    cause = callback_cause(exc)
    if cause is not None:
        if cause[0] in _HINTS:
            return _HINTS[cause[0]]
        if "MemoryError" in cause[0]:
            return "out of host memory inside a host callback: use a smaller size"
        return "raised inside a host callback (jax.pure_callback / io_callback); the message is the callback's own"
    if isinstance(exc, MemoryError):
        return "out of host memory: use a smaller size or dtype, or fewer processes (timing.processes)"
    message = str(exc)
    if "as an abstract array" in message:  # "Error interpreting argument to f as an abstract array ... at path s."
        path = re.search(r"at path (\w+)", message)
        which = f" ({path.group(1)})" if path else ""
        return (
            f"an argument{which} is not an array JAX can trace (a string, an object): "
            "make it static: mode.static_argnums=[i]"
        )
    if "Non-hashable static arguments" in message:
        return "a static argument must be hashable (int, float, str, tuple): pass arrays as traced arguments"
    if "RESOURCE_EXHAUSTED" in message or "Out of memory" in message:
        return "out of device memory: use a smaller size"
    return ""
