"""What a rank of a distributed step shares with the others while it measures: rank 0's values on every rank
(`agree`), an array spread over the processes gathered whole (`gathered`), and a failed mode that ends the step
rather than leave the other ranks waiting in its collectives (`dropped`).

The rank's main, `python -m jitexp.worker.rank FOLDER` (started by `srun`, jitexp.engine.slurm_tasks), runs the
plain worker's measurement (worker.entry), which uses these; nothing in worker/ imports the rank's main.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from jitexp.config import ExperimentConfig
from jitexp.errors import PhaseError, failure_of
from jitexp.records import ModeResult


def agree(values: np.ndarray) -> np.ndarray:
    """Rank 0's values on every rank (jax.experimental.multihost_utils.broadcast_one_to_all); also a barrier."""
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.broadcast_one_to_all(values))


def gathered(leaf: jax.Array) -> np.ndarray:
    """An array spread over several processes, whole, on every rank (a collective: every rank calls it)."""
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.process_allgather(leaf, tiled=True))


def dropped(cfg: ExperimentConfig, exc: PhaseError, call: Any = None) -> ModeResult:
    """The error result of a mode that failed; on a rank of a distributed job the PhaseError again: a mode dropped
    on one rank only would leave the others waiting in its collectives, so the step ends."""
    if cfg.distributed.processes > 1:
        raise exc
    return ModeResult(failure_of(exc.phase, exc.cause, call))
