"""Hydra callbacks: write a sweep's job list when it starts, gather its CSVs when it ends."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, cast

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

log = logging.getLogger("jitexp")

# The sweep the driver runs now and how it ended, for cli.main (Ctrl-C, exit codes).
current: dict[str, Any] = {}


class GatherResults(Callback):
    """jobs.csv when a multirun starts; hydra.sweep.dir/results.csv and a one-screen summary when it ends."""

    def on_multirun_start(self, config: DictConfig, **kwargs: Any) -> None:
        from hydra.core.global_hydra import GlobalHydra

        from jitexp.engine.compose import sweep_jobs
        from jitexp.engine.interrupts import held
        from jitexp.store.folders import write_manifest

        held.release()  # the sweep's config is composed: a Ctrl-C from here on is Python's own (held since cli.main)

        root = Path(config.hydra.sweep.dir)
        current.clear()
        current.update(root=root, fail_on_error=bool(config.get("fail_on_error", False)), ended=False)
        overrides = cast(list, OmegaConf.to_container(config.hydra.overrides.task, resolve=False))
        # the running app's config loader: glob() of a group lists the group's options through it
        loader = GlobalHydra.instance().config_loader() if GlobalHydra.instance().is_initialized() else None
        jobs = sweep_jobs(config.hydra.sweeper, overrides, loader)
        if jobs is not None:
            write_manifest(root, jobs)

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        frame, state = gather_and_summarise(Path(config.hydra.sweep.dir))
        current.update(ended=True, state=state, n_errors=failing_rows(frame))


def failing_rows(frame: Any) -> int:
    """What fail_on_error counts: error rows, and rows whose time is no speedup (a result that differs from the
    baseline's, no work measured, outputs that cannot be compared: analysis.speedups.NOT_WORK_VERDICTS)."""
    from jitexp.analysis.speedups import NOT_WORK_VERDICTS

    if not len(frame):
        return 0
    failed = frame["status"] == "error"
    for column in ("verdict", "verdict_vs_numpy"):
        if column in frame:
            failed |= frame[column].isin(NOT_WORK_VERDICTS)
    return int(failed.sum())


def gather_and_summarise(root: Path) -> tuple[Any, Any]:
    """Write the sweep's gathered results.csv and print its summary: rows, jobs that never finished."""
    from jitexp.report.run.terminal import format_sweep_summary
    from jitexp.store.folders import RESULTS_CSV, gather_state

    frame, state = gather_state(root)
    print(format_sweep_summary(frame, state))
    print(f"\n{state.describe(len(frame))}; gathered in {root / RESULTS_CSV}")
    return frame, state
