"""More than one device (issue 25), the paths the README's own run (test_readme.py, devices-commands) does not take:
a sharded workload without a mesh runs on one device, and a sharding that does not fit setup's arrays is one line."""

from __future__ import annotations

import pandas as pd

from helpers import run_cli


def test_without_a_mesh_the_shardings_are_unused_one_device_no_collectives(tmp_path):
    proc = run_cli(["workload=tp_mlp", "size=32", "mode=jit", "timing=quick", "hydra.run.dir=one"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    one = pd.read_csv(tmp_path / "one" / "results.csv", keep_default_na=False).iloc[0]
    assert (one["status"], one["device_count"], one["mesh"], one["shardings"]) == ("ok", 1, "", "")
    assert (one["collectives"], one["collective_bytes"], one["all_reduce_count"]) == (0, 0, 0)


def test_a_sharding_that_does_not_fit_setups_arrays_is_one_line_from_the_worker(tmp_path):
    proc = run_cli(
        ["workload=dp_train_step", "device.count=4", "mesh.shape={data:4}", "workload.params.batch=6", "timing=quick"],
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "jitexp: error: workload.shardings.2=['data'] is invalid; dimension 0 of an array of argument 2 ([6, 32]) "
        "is not divisible by data (4)"
    ]


def test_shard_map_matmul_psums_by_hand_over_the_mesh_its_arguments_carry(tmp_path):
    argv = ["workload=shard_map_matmul", "size=32", "device.count=2", "mesh.shape={model:2}", "mode=[eager,jit]"]
    proc = run_cli([*argv, "timing=quick", "hydra.run.dir=sm"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    jit = pd.read_csv(tmp_path / "sm" / "results.csv").set_index("mode").loc["jit"]
    assert (jit["status"], jit["all_reduce_count"], jit["collectives"]) == ("ok", 1, 1)  # the psum
    assert bool(jit["matches_eager"])
