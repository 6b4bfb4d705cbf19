"""experiment=tune_matmul_tpu on a TPU (the `tpu` marker: skipped without one; benchmarks/tune_tpu.sh runs the whole
study): the chip's compiler takes the searched option, so no trial fails, and the trials ran on the chip."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from helpers import command

pytestmark = [
    pytest.mark.tpu,
    pytest.mark.skipif(importlib.util.find_spec("optuna") is None, reason="needs the tune extra (optuna)"),
]


def test_the_matmul_study_runs_its_trials_on_the_chip(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}  # the suite's CPU pin removed
    args = ["experiment=tune_matmul_tpu", "size=1024", "tune.trials=3", "tune.confirm_processes=0", "progress=false"]
    proc = subprocess.run(
        [command("jitexp"), *args, f"hydra.sweep.dir={tmp_path}/study"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=500,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    trials = pd.read_csv(tmp_path / "study" / "trials.csv")
    assert len(trials) == 3 and (trials.state == "complete").all(), trials.to_string()  # no 'No such compile option'
    rows = pd.read_csv(tmp_path / "study" / "results.csv")
    assert (rows.platform == "tpu").all() and rows.compiler_options.str.contains("xla_tpu_scoped_vmem_limit_kib").all()
    assert trials.best.sum() == 1 and "tune: best of 3 trials on steady" in proc.stdout
