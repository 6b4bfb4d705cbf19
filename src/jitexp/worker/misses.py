"""Why a jitted call traced again: JAX's own cache-miss explanations, captured and put in words.

JAX logs a "TRACING CACHE MISS" warning per miss when jax_explain_cache_misses is on; the
first one of a call is about the outermost function, the one the user called.
"""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import jax

from jitexp.worker.jaxinfo import jax_flag

LOGGER = "jax._src.interpreters.partial_eval"
WEAK_TYPE_HINT = (
    "a Python scalar is weakly typed and traces apart from a typed one: pass jnp.float32(x) "
    "(or the array's dtype), or make the argument static"
)
_STATIC = re.compile(r"at input path \[0\]\[(\d+)\], now .*?Static\(val=(.*?)\) and before .*?Static\(val=(.*?)\)")


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("TRACING CACHE MISS"):
            self.messages.append(message)


@contextmanager
def captured() -> Iterator[list[str]]:
    """Turn on jax_explain_cache_misses and collect its messages (not printed) for the block."""
    logger = logging.getLogger(LOGGER)
    handler, propagate = _Collect(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    previous = jax_flag("jax_explain_cache_misses")
    jax.config.update("jax_explain_cache_misses", True)
    try:
        yield handler.messages
    finally:
        jax.config.update("jax_explain_cache_misses", previous)
        logger.removeHandler(handler)
        logger.propagate = propagate


def reason(messages: list[str], fn: Callable) -> dict:
    """miss_reason (and a hint for a weak-type retrace) from the first miss message of a call; {} for a cache hit."""
    if not messages:
        return {}
    lines = [ln.strip() for ln in messages[0].splitlines()[1:] if ln.strip()]
    if any(ln.startswith("never seen function") for ln in lines):
        return {"miss_reason": "first call"}
    body = (
        lines[lines.index("all previously seen cache keys differ. For the closest previous key:") + 1 :]
        if "all previously seen cache keys differ. For the closest previous key:" in lines
        else lines
    )
    text = " ".join(ln.lstrip("* ") for ln in body)
    static = _STATIC.search(text)
    if static:
        index, now, before = static.groups()
        return {
            "miss_reason": f"different value of static argument {_arg_name(fn, int(index))} ({now}, before {before})"
        }
    text = re.sub(r"https?://\S+", "", text).strip()
    out = {"miss_reason": text}
    if "weak_type=True" in text:
        out["hint"] = WEAK_TYPE_HINT
    return out


def _arg_name(fn: Callable, index: int) -> str:
    try:
        return list(inspect.signature(fn).parameters)[index]
    except (TypeError, ValueError, IndexError):
        return str(index)
