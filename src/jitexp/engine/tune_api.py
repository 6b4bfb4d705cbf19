"""jitexp.tune(overrides): a tune study from Python, as `jitexp -m hydra/sweeper=tune OVERRIDES` runs it (in a child
process: Hydra's multirun owns its process), its trials and confirmation read back from the sweep folder."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from jitexp.engine.tune import TRIALS_CSV, VERDICT_TXT


@dataclass
class TuneResult:
    """A finished (or stopped) study: its folder, trials.csv as a frame, the confirmation's line, the exit code."""

    folder: Path
    trials: pd.DataFrame = field(default_factory=pd.DataFrame)
    verdict: str = ""
    returncode: int = 0

    @property
    def best(self) -> dict[str, Any] | None:
        """The best trial's searched values, {dotted key: value} (None when no trial succeeded)."""
        if self.trials.empty or "best" not in self.trials:
            return None
        rows = self.trials[self.trials["best"].astype(str).str.lower() == "true"]
        if rows.empty:
            return None
        row = rows.iloc[0]
        return {c[len("param_") :]: row[c] for c in self.trials.columns if c.startswith("param_")}


def tune(
    overrides: Sequence[str] = (),
    *,
    folder: str | os.PathLike | None = None,
    resume: bool = False,
    verbose: bool = True,
) -> TuneResult:
    """`jitexp.tune(["workload=rnn_scan", "workload.params.unroll=choice(1,2,4,8)", "tune.trials=8"])`: the study
    of `jitexp -m hydra/sweeper=tune OVERRIDES` into `folder` (default: outputs/multirun/<time>_tune). Mistakes are
    the preflight's ConfigError, raised here before anything runs; verbose=False keeps the study's lines quiet."""
    from jitexp.engine import preflight
    from jitexp.engine.tune_space import quoted_params

    where = Path(folder) if folder is not None else Path("outputs/multirun") / time.strftime("%Y-%m-%d_%H-%M-%S_tune")
    args = quoted_params(["-m", "hydra/sweeper=tune", *overrides, f"hydra.sweep.dir={where}"])
    if resume:
        args.append("resume=true")
    preflight.check(args)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    }
    out = None if verbose else subprocess.DEVNULL
    proc = subprocess.run([sys.executable, "-m", "jitexp", *args], env=env, stdout=out, stderr=out, check=False)
    trials = pd.read_csv(where / TRIALS_CSV) if (where / TRIALS_CSV).is_file() else pd.DataFrame()
    verdict = (where / VERDICT_TXT).read_text().strip() if (where / VERDICT_TXT).is_file() else ""
    return TuneResult(where, trials, verdict, proc.returncode)
