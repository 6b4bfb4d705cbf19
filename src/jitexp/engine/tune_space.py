"""hydra/sweeper=tune's search space, read from Hydra's own sweep syntax: `choice(...)`, `a,b,c`, `range(...)`,
`interval(...)`, `int(interval(...))`, `tag(log, ...)`, in hydra.sweeper.params or on the command line."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, cast

from jitexp.errors import ConfigError

SWEEPER_TARGET = "hydra_plugins.jitexp_tune.tune_sweeper.TuneSweeper"
EXTRA = "pip install 'jitexp[tune]'"


OPEN = ("mode.compiler_options.", "workload.kwargs.")  # mappings whose new entries a trial adds (+key=value)


def added(dimension: Dimension, present: bool) -> Dimension:
    """The dimension written `+key=value` when the config lacks the key and it is an entry of an open mapping (an XLA
    option); another missing key stays as written, so that a typo is refused by name rather than added."""
    if present or dimension.add or not dimension.key.startswith(OPEN):
        return dimension
    return replace(dimension, add=True)


def is_tune(sweeper: Any) -> bool:
    """Whether hydra.sweeper is jitexp's tune sweeper."""
    target = str((sweeper or {}).get("_target_") or "")
    return target.endswith("jitexp_tune.tune_sweeper.TuneSweeper")


@dataclass(frozen=True)
class Dimension:
    """One searched key: its choices (categorical), or integer/float bounds (log: searched on a log scale)."""

    key: str
    add: bool  # written `+key=...`: a key the config lacks (a compiler option)
    choices: tuple[Any, ...] | None = None
    low: float | None = None
    high: float | None = None
    step: int | None = None  # integer dimensions: int(interval) step 1, range(a,b,s) step s
    log: bool = False

    @property
    def size(self) -> int | None:
        """How many points it holds; None when continuous."""
        if self.choices is not None:
            return len(self.choices)
        if self.step is not None and self.low is not None and self.high is not None:
            return int((self.high - self.low) // self.step) + 1
        return None

    def decode(self, value: Any) -> Any:
        """A value Optuna gives back as the searched value (a list's text as the list)."""
        if self.choices is None:
            return value
        return next((v for v in self.choices if encode(v) == value), value)

    def first(self) -> Any:
        """A representative point (the preflight validates the job there)."""
        if self.choices is not None:
            return self.choices[0]
        return int(self.low) if self.step is not None else self.low  # type: ignore[arg-type]


@dataclass(frozen=True)
class Space:
    """The searched keys, and the command line's other task overrides (fixed in every trial)."""

    dimensions: tuple[Dimension, ...]
    fixed: tuple[str, ...]


def read_space(params: Mapping[str, Any] | None, task: Sequence[str], parser: Any) -> Space:
    """The search space of hydra.sweeper.params and the command line's sweep overrides (a key searched twice takes
    the later); the other overrides are fixed in every trial, before its searched values (a fixed value of a
    searched key is the baseline's: `workload.params.unroll=1` beside `...unroll=choice(1,2,4)`)."""
    texts = [f"{k}={v}" for k, v in flat(params or {}).items()] + list(task)
    found: dict[str, Dimension] = {}
    fixed: list[str] = []
    for text in texts:
        try:
            [o] = parser.parse_overrides([text])
        except Exception as exc:
            key, _, value = text.partition("=")
            lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
            raise ConfigError(
                key, value, f"malformed search space ({lines[-1] if lines else type(exc).__name__})"
            ) from exc
        key = o.get_key_element().lstrip("+~")
        if o.is_sweep_override():
            found.pop(key, None)
            found[key] = _dimension(key, o.get_key_element().startswith("+"), o.value(), text)
        else:
            fixed.append(text)
    if not found:
        raise ConfigError(
            "hydra.sweeper.params",
            None,
            "searches no key: give one, e.g. 'hydra.sweeper.params.workload.params.unroll=choice(1,2,4,8)' or "
            "workload.params.unroll=choice(1,2,4,8)",
        )
    added = {t.partition("=")[0].lstrip("+") for t in fixed if t.startswith("+")}
    dimensions = tuple(replace(d, add=False) if d.key in added else d for d in found.values())
    return Space(dimensions, tuple(fixed))


def flat(params: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """hydra.sweeper.params with nested mappings as dotted keys (`hydra.sweeper.params.a.b=...` nests them)."""
    out: dict[str, Any] = {}
    for k, v in params.items():
        if isinstance(v, Mapping):
            out.update(flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _dimension(key: str, add: bool, sweep: Any, text: str) -> Dimension:
    from hydra.core.override_parser.types import ChoiceSweep, Glob, IntervalSweep, RangeSweep

    log = "log" in (getattr(sweep, "tags", None) or set())
    if isinstance(sweep, ChoiceSweep):
        values = tuple(sweep.list)
        if len({encode(v) for v in values}) != len(values):
            raise ConfigError(key, text.partition("=")[2], "names a value twice; give each choice once")
        return Dimension(key, add, choices=values)
    if isinstance(sweep, RangeSweep):
        start, stop, step = cast(Any, (sweep.start, sweep.stop, sweep.step))
        if not step or (stop - start) / step <= 0:
            raise ConfigError(key, text.partition("=")[2], "selects no value")
        if all(isinstance(v, int) for v in (start, stop, step)) and step > 0:
            last = start + ((stop - 1 - start) // step) * step
            return Dimension(key, add, low=start, high=last, step=step, log=log)
        count = math.ceil((stop - start) / step)
        return Dimension(key, add, choices=tuple(round(start + i * step, 12) for i in range(count)))
    if isinstance(sweep, IntervalSweep):
        low, high = cast(Any, (sweep.start, sweep.end))
        if not high > low or (log and low <= 0):
            raise ConfigError(key, text.partition("=")[2], "needs low < high (and low > 0 with tag(log, ...))")
        whole = isinstance(low, int) and isinstance(high, int)
        return Dimension(key, add, low=low, high=high, step=1 if whole else None, log=log)
    if isinstance(sweep, Glob):
        raise ConfigError(key, text.partition("=")[2], "glob() is not searched; list the options with choice(...)")
    raise ConfigError(key, text.partition("=")[2], "search with choice(...), range(...) or interval(...)")


_BARE = re.compile(r"[A-Za-z_][\w./-]*|-?\d+(\.\d+)?([eE]-?\d+)?")


def encode(value: Any) -> Any:
    """A choice as Optuna's categorical takes it: a list or mapping (`donate_argnums=choice([],[0,1])`) as its text."""
    return value_text(value) if isinstance(value, (list, dict)) else value


def value_text(value: Any) -> str:
    """A value as Hydra's override grammar reads it back unchanged."""
    if isinstance(value, list):
        return "[" + ",".join(value_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{value_text(v)}" for k, v in value.items()) + "}"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if _BARE.fullmatch(text) and text not in ("true", "false", "null"):
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def variants_text(named: Mapping[str, Mapping[str, Any]]) -> str:
    """The `variants` override's value, `{a:{key:value,...},b:{...}}`, each value as Hydra reads it back."""
    inner = (",".join(f"{k}:{value_text(v)}" for k, v in params.items()) for params in named.values())
    return "{" + ",".join(f"{name}:{{{body}}}" for name, body in zip(named, inner)) + "}"


def override(dimension: Dimension, value: Any) -> str:
    """The trial's override for one searched key."""
    return f"{'+' if dimension.add else ''}{dimension.key}={value_text(value)}"


_PARAMS_OVERRIDE = re.compile(r"\+{0,2}(hydra\.sweeper\.params\.[^=]+)=(.*)", re.S)


def quoted_params(argv: Sequence[str]) -> list[str]:
    """`hydra.sweeper.params.KEY=choice(1,2)` as `++hydra.sweeper.params.KEY='choice(1,2)'`: Hydra refuses a sweep
    of its own config and a new key without a +, and the sweeper reads the text (as the Optuna sweeper's users write
    it)."""
    out = []
    for text in argv:
        found = _PARAMS_OVERRIDE.fullmatch(text)
        if found:
            value = found.group(2).strip()
            if value and value[0] not in "'\"":
                value = "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
            text = f"++{found.group(1)}={value}"
        out.append(text)
    return out
