"""distributed.processes=N on the local SLURM cluster: each measuring process is one srun step of N tasks joined by
jax.distributed (CPU collectives over gloo), one global mesh; a rank that dies or hangs is an error row.

Runs when `sinfo` shows a node (.ci/run starts one with scripts/slurm_cluster.sh).
"""

from __future__ import annotations

import re
import subprocess
import time

import pytest

from helpers import read, run_cli

pytestmark = [
    pytest.mark.slurm,
    pytest.mark.serial,  # two ranks on two cores, and a timeout
]

RANKS = """import os
import sys

import jax


def total(x):
    return (x * 2).sum()


def rank_one_dies(x):
    if jax.process_index() == 1:
        print("rank 1 gives up here", file=sys.stderr, flush=True)
        os._exit(3)
    return (x * 2).sum()


def raises(x):
    raise ValueError("no sharded step today")


def rank_one_hangs(x):
    if jax.process_index() == 1:
        import time

        time.sleep(600)
    return (x * 2).sum()
"""


@pytest.fixture(autouse=True)
def idle_cluster():
    """The node free of earlier tests' jobs (test_slurm's exclusive ones): a step waiting for it counts against
    timing.timeout_s."""
    deadline = time.monotonic() + 120
    while subprocess.run(["squeue", "-h"], capture_output=True, text=True, timeout=30).stdout.strip():
        if time.monotonic() > deadline:
            pytest.fail("the SLURM queue did not drain in 120 s")
        time.sleep(1)


def test_a_data_parallel_step_over_two_slurm_tasks_records_the_mesh_and_its_all_reduce(tmp_path):
    proc = run_cli(
        [
            "workload=dp_train_step",
            "mode=jit",
            "distributed.processes=2",
            "mesh.shape={data:2}",
            "timing=quick",
            "size=64",
            "hydra.run.dir=out",
        ],
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    row = read(tmp_path / "out" / "results.csv").iloc[0]
    assert row["status"] == "ok", row.get("error_message")
    # one device per process and a mesh of two: only two processes joined into one can hold it
    assert (row["distributed_processes"], row["device_count"], row["mesh"]) == (2, 1, "data=2")
    assert row["shardings"] == "2:P('data')"
    assert row["all_reduce_count"] >= 1 and row["all_reduce_bytes"] > 0  # the gradients, reduced across processes
    assert bool(row["matches_eager"])  # the sharded output, gathered from both ranks, is eager's
    assert not list(tmp_path.glob(".jitexp-ranks-*"))  # the steps' folders are removed


def test_a_rank_that_dies_or_hangs_is_an_error_row_and_the_sweep_goes_on(tmp_path):
    (tmp_path / "ranks.py").write_text(RANKS)
    proc = run_cli(
        [
            "-m",
            "workload=custom",
            "workload.fn=ranks.total,ranks.rank_one_dies,ranks.raises,ranks.rank_one_hangs",
            "workload.args=[{shape:[8]}]",
            "workload.shardings={0:[data]}",
            "mode=jit",
            "distributed.processes=2",
            "mesh.shape={data:2}",
            "timing=quick",
            "timing.min_sample_time_s=0.02",  # calibration takes several tries: each one agreed with rank 0
            "timing.timeout_s=15",
            "hydra.sweep.dir=sweep",
        ],
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    df = read(tmp_path / "sweep" / "results.csv")
    shown = df[["workload", "status", "error_type", "error_message"]].to_string()
    assert list(df["status"]) == ["ok", "error", "error", "error"], shown
    died, raised, hung = df.iloc[1], df.iloc[2], df.iloc[3]
    assert died["error_type"] == "exit 3"
    assert died["error_message"] == "rank 1 of 2: rank 1 gives up here"
    # every rank raises in trace: the step ends with the first rank srun reports, in the worker's own words
    assert (raised["error_phase"], raised["error_type"]) == ("trace", "ValueError")
    assert re.fullmatch(r"rank [01] of 2: no sharded step today", raised["error_message"])
    assert hung["error_type"] == "Timeout" and "timing.timeout_s=15" in hung["error_message"]
    left = subprocess.run(["squeue", "-h", "-s"], capture_output=True, text=True, timeout=30).stdout
    assert "jitexp" not in left  # no step of the sweep outlives it
