"""The machine's noise through a real job: without steal accounting (a fake /proc/stat in the workers) the columns
are empty while the host probe and the workers' pinning are recorded; pinning to a missing core is one line, exit 2."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from helpers import run_cli
from jitexp import noise


@pytest.mark.slow
def test_a_job_without_steal_accounting_has_empty_columns_and_records_the_probe_and_pinning(tmp_path):
    fake = tmp_path / "stat"
    fake.write_text("cpu  1 2 3 4 5 6 7\n")  # an old kernel: no steal field
    out = tmp_path / "run"
    core = sorted(os.sched_getaffinity(0))[-1]
    proc = run_cli(
        ["workload=add_one", "size=64", "timing=quick", f"cpu_affinity=[{core}]", f"hydra.run.dir={out}"],
        cwd=tmp_path,
        env={noise.STAT_ENV: str(fake)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = pd.read_csv(out / "results.csv")
    assert rows["steal_median"].isna().all() and rows["steal_max"].isna().all()
    assert (rows["n_steal_replaced"] == 0).all()
    for name in noise.PROBE_COLUMNS:
        assert (rows[name] > 0).all(), name
    assert rows["cpu_affinity"].astype(str).tolist() == [str(core)] * len(rows)
    assert (rows["blas_threads"] == 1).all()  # the NumPy twin's BLAS follows the pinned cores
    procs = pd.read_csv(out / "processes.csv")
    assert procs["steal"].isna().all() and (procs["host_probe_dispatch_s"] > 0).all()
    assert "steal" in pd.read_csv(out / "samples.csv").columns


def test_cpu_affinity_naming_a_core_this_machine_lacks_is_one_line(tmp_path):
    proc = run_cli(["timing=quick", "cpu_affinity=[4096]", f"hydra.run.dir={tmp_path / 'run'}"], cwd=tmp_path)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "cpu_affinity" in lines[0] and "4096" in lines[0], proc.stderr
