"""Hydra callbacks: write a sweep's job list when it starts, gather its CSVs when it ends."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

log = logging.getLogger("jitexp")
BASIC_SWEEPER = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"

# The sweep the driver runs now and how it ended, for cli.main (Ctrl-C, exit codes).
current: dict[str, Any] = {}


def sweep_jobs(config: DictConfig) -> list[list[str]] | None:
    """Every job's overrides, in order, as the basic sweeper expands them (None for other sweepers)."""
    if config.hydra.sweeper.get("_target_") != BASIC_SWEEPER:
        return None
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    params = [f"{k}={v}" for k, v in (config.hydra.sweeper.get("params") or {}).items()]
    task = list(OmegaConf.to_container(config.hydra.overrides.task, resolve=False))
    parsed = OverridesParser.create().parse_overrides(params + task)
    return [job for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]


class GatherResults(Callback):
    """jobs.csv when a multirun starts; hydra.sweep.dir/results.csv and a one-screen summary when it ends."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        from .results import write_manifest

        root = Path(config.hydra.sweep.dir)
        jobs = sweep_jobs(config)
        current.clear()
        current.update(root=root, fail_on_error=bool(config.get("fail_on_error", False)), ended=False)
        if jobs is not None:
            write_manifest(root, jobs)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        frame, state = gather_and_summarise(Path(config.hydra.sweep.dir))
        current.update(ended=True, state=state, n_errors=int((frame["status"] == "error").sum()) if len(frame) else 0)


def gather_and_summarise(root: Path) -> tuple[Any, Any]:
    """Write the sweep's gathered results.csv and print its summary: rows, jobs that never finished."""
    from .report import format_sweep_summary
    from .results import RESULTS_CSV, gather_state

    frame, state = gather_state(root)
    print(format_sweep_summary(frame, state))
    print(f"\n{state.describe(len(frame))}; gathered in {root / RESULTS_CSV}")
    return frame, state
