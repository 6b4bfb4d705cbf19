"""On a TPU (marker `tpu`, skipped where none is present; run through the device tool: docs/benchmarks.md): the default
device is the chip, a row has device time beside wall time, the measured peaks and the chip's memory, and a job's
processes hand the chip over. The same paths run on the CPU in test_runner_processes.py and tests/inprocess."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from helpers import command

pytestmark = pytest.mark.tpu


def run_on_chip(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    # the suite's CPU pin removed (tests/conftest.py); PYTHONPATH kept: on the TPU machine jitexp is installed there
    env = {k: v for k, v in os.environ.items() if k != "JAX_PLATFORMS"}
    proc = subprocess.run([command("jitexp"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def test_a_job_without_a_device_override_runs_on_the_chip_and_says_so(tmp_path):
    proc = run_on_chip(["workload=add_one", "mode=jit", "timing=quick", f"hydra.run.dir={tmp_path}/run"], tmp_path)
    assert "TPU" in proc.stdout.splitlines()[0]  # the job line names the device kind
    row = pd.read_csv(tmp_path / "run" / "results.csv").iloc[0]
    assert row["platform"] == "tpu" and row["device_kind"].startswith("TPU")
    assert 0 < row["device_s"] < row["median_s"] and row["host_overhead_s"] > 0
    assert row["peak_flops_per_s"] > 1e13 and row["peak_bytes_per_s"] > 1e11
    assert row["device_peak_bytes"] > 0 and row["tpu_premapped_buffer_bytes"] == 268435456
    # a quick job's rounds are too short for /proc/stat's ticks; a host without the counters says so instead
    assert row["unavailable"].startswith(
        ("noise: not measured (the rounds lasted", "noise: not available on this host")
    )


def test_a_jobs_processes_hand_the_chip_over(tmp_path):
    args = ["workload=add_one", "mode=jit", "timing=quick", "timing.processes=3", "timing.max_processes=3"]
    run_on_chip([*args, f"hydra.run.dir={tmp_path}/run"], tmp_path)
    row = pd.read_csv(tmp_path / "run" / "results.csv").iloc[0]
    assert row["status"] == "ok" and row["n_processes"] == 3
    assert row["prepared_processes"] == 2  # processes 1 and 2 were forked while the one before held the chip
    procs = pd.read_csv(tmp_path / "run" / "processes.csv")
    assert (procs["device_open_s"] > 0).all()
    # each program compiled once a job: process 0 measured the cold call, the later ones read the job's cache
    assert procs.loc[procs["process"] == 0, "cold_position"].notna().all()
    later = procs[procs["process"] > 0]
    assert (
        later["cold_position"].isna().all() and (later["cache_hits"] > 0).all() and (later["cache_misses"] == 0).all()
    )
    assert (procs["compiles_in_warmup"] == 0).all() and (procs["compiles_in_sampling"] == 0).all()
    assert (procs["phase_other_s"] < 0.05 * procs["process_wall_s"]).all()  # every second of a process named
    assert row["first_call_processes"] == 1
