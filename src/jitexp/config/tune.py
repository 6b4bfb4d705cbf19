"""hydra/sweeper=tune's keys (`tune.*`): the objective's vocabulary and the checks, one line each."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from jitexp.config.schema import ExperimentConfig
from jitexp.errors import ConfigError

OBJECTIVES = ("steady", "first_call", "compile", "time_for_calls=N", "device_memory")
_CALLS = re.compile(r"time_for_calls\s*=\s*(\d+)")


@dataclass(frozen=True)
class Objective:
    """One thing a trial minimises: a time in seconds (per example where the job says how many) or bytes."""

    name: str  # steady, first_call, compile, time_for_calls, device_memory
    calls: int = 0  # time_for_calls: the steady calls after the first

    @property
    def label(self) -> str:
        return f"time_for_calls={self.calls}" if self.name == "time_for_calls" else self.name

    @property
    def is_time(self) -> bool:
        return self.name != "device_memory"


def parse_objective(text: Any, key: str = "tune.objective") -> Objective:
    """One objective from its name; a ConfigError naming the valid ones."""
    word = str(text).strip()
    found = _CALLS.fullmatch(word)
    if found:
        if int(found.group(1)) < 1:
            raise ConfigError(key, text, "time_for_calls=N needs N >= 1 steady calls after the first")
        return Objective("time_for_calls", int(found.group(1)))
    if word in OBJECTIVES and "=" not in word:
        return Objective(word)
    raise ConfigError(key, text, f"valid choices: {', '.join(OBJECTIVES)} (a list of two: a Pareto front)")


def parse_objectives(value: Any) -> list[Objective]:
    """tune.objective as a list of one or two objectives."""
    if isinstance(value, (list, tuple)):
        if not 1 <= len(value) <= 2:
            raise ConfigError("tune.objective", list(value), "one objective, or a list of two (a Pareto front)")
        found = [parse_objective(v, f"tune.objective[{i}]") for i, v in enumerate(value)]
        if len(found) == 2 and found[0] == found[1]:
            raise ConfigError("tune.objective", list(value), "two different objectives (the same one twice is one)")
        return found
    return [parse_objective(value)]


def baseline_overrides(value: Any) -> dict[str, Any]:
    """tune.baseline as {dotted key: value}: null is {}, a mapping is flattened, a list holds key=value texts."""
    if value is None:
        return {}
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if isinstance(v, dict) and v:
                out.update({f"{k}.{kk}": vv for kk, vv in baseline_overrides(v).items()})
            else:
                out[str(k)] = v
        return out
    if isinstance(value, (list, tuple)):
        out = {}
        for item in value:
            key, eq, text = str(item).partition("=")
            if not eq or not key.strip():
                raise ConfigError("tune.baseline", list(value), f"{item!r} is no key=value override")
            out[key.strip().lstrip("+")] = text
        return out
    raise ConfigError("tune.baseline", value, "null (the config as given), {key: value, ...} or [key=value, ...]")


def validate_tune(cfg: ExperimentConfig) -> None:
    """Refuse a tune key that cannot work, before anything runs."""
    tune = cfg.tune
    parse_objectives(tune.objective)
    if tune.trials < 1:
        raise ConfigError("tune.trials", tune.trials, "must be >= 1")
    if tune.confirm_processes != 0 and tune.confirm_processes < 6:
        raise ConfigError(
            "tune.confirm_processes",
            tune.confirm_processes,
            "must be >= 6 (fewer pairs cannot reach a 95% interval), or 0: no confirmation",
        )
    if tune.runoff < 0 or tune.runoff == 1:
        raise ConfigError("tune.runoff", tune.runoff, "must be 0 (no runoff) or >= 2 trials measured again")
    if tune.seed is not None and tune.seed < 0:
        raise ConfigError("tune.seed", tune.seed, "must be >= 0, or null for a fresh seed")
    if tune.examples is not None and tune.examples < 1:
        raise ConfigError("tune.examples", tune.examples, "must be >= 1 (examples one call holds), or null")
    baseline_overrides(tune.baseline)
