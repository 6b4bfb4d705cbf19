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
    # setup's arguments are seen only in the worker: a spec naming none of them is one line there too
    proc = run_cli(
        [
            "workload=dp_train_step",
            "device.count=2",
            "mesh.shape={data:2}",
            "workload.shardings={7:[data]}",
            "timing=quick",
        ],
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "jitexp: error: workload.shardings.7=['data'] is invalid; names no argument: positions [0, 4), keywords (none)"
    ]


def test_shard_map_matmul_psums_by_hand_over_the_mesh_its_arguments_carry(tmp_path):
    argv = ["workload=shard_map_matmul", "size=32", "device.count=2", "mesh.shape={model:2}", "mode=[eager,jit]"]
    proc = run_cli([*argv, "timing=quick", "hydra.run.dir=sm"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    jit = pd.read_csv(tmp_path / "sm" / "results.csv").set_index("mode").loc["jit"]
    assert (jit["status"], jit["all_reduce_count"], jit["collectives"]) == ("ok", 1, 1)  # the psum
    assert bool(jit["matches_eager"])


def test_the_retrace_probe_shards_its_arguments_and_a_batch_the_mesh_cannot_split_is_that_calls_error(tmp_path):
    # without setup a variant's shapes are checked before anything runs (one line); setup's only in the worker
    argv = ["workload=shard_map_matmul", "device.count=2", "mesh.shape={model:2}", "mode=jit", "size=32"]
    proc = run_cli([*argv, "sequence=[{size: 32}, {size: 33}]", "timing=quick"], cwd=tmp_path)
    assert proc.returncode == 2 and "dimension 1 of argument 0 (33) is not divisible by model (2)" in proc.stderr
    argv = ["workload=dp_train_step", "device.count=2", "mesh.shape={data:2}", "mode=jit", "size=16"]
    proc = run_cli(
        [*argv, "sequence=[{batch: 8}, {batch: 5}, {batch: 4}]", "timing=quick", "hydra.run.dir=seq"], cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    calls = pd.read_csv(tmp_path / "seq" / "calls.csv")
    probe = calls[calls["probe"] == "sequence"]
    assert probe["status"].tolist() == ["ok", "error", "ok"]
    bad = probe.iloc[1]
    assert bad["error_phase"] == "inputs" and "[5, 32]) is not divisible by data (2)" in bad["error_message"]
