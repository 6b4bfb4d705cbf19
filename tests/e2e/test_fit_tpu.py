"""experiment=fit on a TPU (the `tpu` marker: skipped without one; benchmarks/fit_tpu.sh runs the full searches):
the limit is the chip's own allocator's, and the allocator's peak stands beside XLA's estimate."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from helpers import command

pytestmark = pytest.mark.tpu

ONES = "workload.args=[{shape:[${size},${size}],dtype:${dtype},init:ones},{shape:[${size},${size}],dtype:${dtype},init:ones}]"


def test_a_matmul_search_on_the_chip(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}  # the suite's CPU pin removed
    args = ["experiment=fit", "workload=matmul", "dtype=bfloat16", "size=8192", "fit.max=32768", "fit.time=false"]
    proc = subprocess.run(
        [command("jitexp"), *args, ONES, "timing=quick", f"hydra.run.dir={tmp_path}/run"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    probes = pd.read_csv(tmp_path / "run" / "fit.csv")
    assert list(probes.value) == [8192, 16384, 32768] and probes.fits.all()  # 6 GiB at most: every one fits
    assert (probes.platform == "tpu").all() and (probes.limit_bytes > 15 * 2**30).all()  # the chip's bytes_limit
    arrays = 3 * probes.value**2 * 2  # two bf16 inputs and the product
    assert (probes.estimate_bytes >= arrays).all() and (probes.device_peak_bytes >= arrays).all()
    assert "none up to fit.max=32768" in proc.stdout and "device_peak_bytes" in proc.stdout
