"""A sweep through a real SLURM cluster (hydra/launcher=jitexp_slurm); runs when `sinfo` shows a node.

Start one on a Debian machine with `sudo bash scripts/slurm_cluster.sh` (.ci/run does).
"""

from __future__ import annotations

import pytest

from helpers import read, run_cli

pytestmark = [pytest.mark.slurm, pytest.mark.serial]  # a cluster's jobs time things


def submitit_installed() -> bool:
    import importlib.util

    return importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is not None


@pytest.mark.skipif(not submitit_installed(), reason="needs the slurm extra (hydra-submitit-launcher)")
def test_a_sweep_with_a_crashing_job_gathers_every_row_through_slurm(tmp_path):
    (tmp_path / "faults.py").write_text(
        "import os\nimport jax.numpy as jnp\n\ndef ok(x):\n    return jnp.sin(x)\n\ndef aborts(x):\n    os.abort()\n"
        "\ndef also_ok(x):\n    return jnp.cos(x)\n"  # a third point of its own: a repeated point is refused
    )
    out = tmp_path / "sweep"
    proc = run_cli(
        [
            "-m",
            "hydra/launcher=jitexp_slurm",
            "hydra.launcher.partition=debug",
            "mode=jit",
            "timing=quick",
            "workload=custom",
            "workload.args=[{shape:[4]}]",
            "workload.fn=faults.ok,faults.aborts,faults.also_ok",
            f"hydra.sweep.dir={out}",
        ],
        cwd=tmp_path,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    df = read(out / "results.csv")
    assert list(df["workload"]) == ["ok", "aborts", "also_ok"]
    assert list(df["status"]) == ["ok", "error", "ok"] and df.loc[1, "error_type"] == "SIGABRT"
    assert "3 jobs: 3 rows" in proc.stdout
    script = next(out.glob(".submitit/*/*submission.sh")).read_text()
    assert "#SBATCH --exclusive" in script and "#SBATCH --ntasks-per-node=1" in script
    assert "#SBATCH --time=4" in script  # (timing.job_time_s + timing.timeout_s) / 60, rounded up, + 1
