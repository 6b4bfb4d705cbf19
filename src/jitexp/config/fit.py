"""experiment=fit's keys: which key is searched, and the bounds, checked before anything runs (one line each)."""

from __future__ import annotations

import dataclasses
from typing import Any

from jitexp.config.schema import ExperimentConfig, FitConfig
from jitexp.errors import ConfigError

PARAMS = "workload.params."


def fit_choices(cfg: ExperimentConfig) -> list[str]:
    """The keys fit.key may name for this workload: size and each integer param."""
    ints = [
        f"{PARAMS}{name}"
        for name, value in cfg.workload.params.items()
        if isinstance(value, int) and not isinstance(value, bool)
    ]
    return ["size", *ints]


def key_value(cfg: ExperimentConfig, key: str) -> Any:
    """The value the config gives the searched key (size, or a workload param)."""
    if key == "size":
        return cfg.size
    return cfg.workload.params.get(key[len(PARAMS) :])


def validate_fit(cfg: ExperimentConfig) -> None:
    """Refuse a fit key set without fit.key, a key that is no integer of the job, and bounds that cannot hold."""
    fit = cfg.fit
    defaults = FitConfig()
    if fit.key is None:
        for f in dataclasses.fields(FitConfig):
            value = getattr(fit, f.name)
            if f.name != "key" and value != getattr(defaults, f.name):
                raise ConfigError(
                    f"fit.{f.name}", value, "is used only with fit.key (experiment=fit, which sets fit.key=size)"
                )
        return
    choices = fit_choices(cfg)
    if fit.key not in choices:
        raise ConfigError("fit.key", fit.key, f"an integer key of this job: {', '.join(choices)}")
    for name in ("max", "step"):
        if getattr(fit, name) < 1:
            raise ConfigError(f"fit.{name}", getattr(fit, name), "must be >= 1")
    if fit.start is not None and not 1 <= fit.start <= fit.max:
        raise ConfigError("fit.start", fit.start, f"must lie in [1, fit.max={fit.max}]")
    if fit.memory_bytes is not None and fit.memory_bytes < 1:
        raise ConfigError("fit.memory_bytes", fit.memory_bytes, "a number of bytes > 0 (null: the device's memory)")
    start = fit.start if fit.start is not None else key_value(cfg, fit.key)
    if not 1 <= start <= fit.max:
        raise ConfigError(
            "fit.max", fit.max, f"must be >= the first value probed, {fit.key}={start} (or set fit.start)"
        )
    if not (cfg.mode.jit or cfg.mode.aot):
        raise ConfigError("mode", list(cfg.mode.names), "experiment=fit compiles the program: select jit or aot")
    for key, value, why in (
        ("isolate", cfg.isolate != "process" and cfg.isolate, "each probe runs in a fresh process: isolate=process"),
        ("variants", cfg.variants and list(cfg.variants), "a fit searches one version of the job: no variants"),
        ("envs", cfg.envs and list(cfg.envs), "a fit searches in one environment: no envs"),
        ("distributed.processes", cfg.distributed.processes > 1 and cfg.distributed.processes, "one process: 1"),
    ):
        if value:
            raise ConfigError(key, value, f"{why} (fit.key is set)")
