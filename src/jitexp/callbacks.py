"""Hydra callbacks: gather a sweep's job CSVs into one results.csv when the sweep ends."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback
from omegaconf import DictConfig

from .results import RESULTS_CSV, gather

log = logging.getLogger("jitexp")


class GatherResults(Callback):
    """On multirun end: write hydra.sweep.dir/results.csv and print a one-screen summary."""

    def on_multirun_end(self, config: DictConfig, **kwargs: Any) -> None:
        from .report import format_sweep_summary

        root = Path(config.hydra.sweep.dir)
        frame = gather(root)
        print(format_sweep_summary(frame))
        print(f"\n{len(frame)} row(s) gathered in {root / RESULTS_CSV}")
