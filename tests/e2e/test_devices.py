"""More than one device (issue 25), the paths the mesh guide's own run (docs/howto/mesh.md's devices-commands,
run by test_howto_examples.py) does not take:
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
        "jitexp: error: workload.shardings.7=['data'] is invalid; names no argument: positions [0, 5), keywords (none)"
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
    # the probe is what this test is about: check=false spares the check's eager step (~3 s; test_howto_examples' devices)
    argv = ["workload=dp_train_step", "device.count=2", "mesh.shape={data:2}", "mode=jit", "size=16", "check=false"]
    proc = run_cli(
        [*argv, "sequence=[{batch: 8}, {batch: 5}, {batch: 4}]", "timing=quick", "hydra.run.dir=seq"], cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    calls = pd.read_csv(tmp_path / "seq" / "calls.csv")
    probe = calls[calls["probe"] == "sequence"]
    assert probe["status"].tolist() == ["ok", "error", "ok"]
    bad = probe.iloc[1]
    assert bad["error_phase"] == "inputs" and "[5, 32]) is not divisible by data (2)" in bad["error_message"]


MEGATRON = """import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P


def layer(x, params):
    return jax.nn.gelu(x @ params["up"]) @ params["down"]


def setup(size, dtype, seed, **_):
    rng = np.random.default_rng(seed)
    x = jnp.asarray(rng.standard_normal((size, 16), dtype=np.float32))
    up = jnp.asarray(rng.standard_normal((16, 64), dtype=np.float32))
    return x, {"up": up, "down": jnp.asarray(rng.standard_normal((64, 16), dtype=np.float32))}


def megatron(x, params):
    return {1: {"up": P(None, "model"), "down": P("model", None)}}


def half_the_tree(x, params):
    return {1: {"up": P(None, "model")}}


def by_columns(x, params):
    return P(None, "model")
"""


def test_shardings_from_a_function_place_a_setups_params_leaf_by_leaf(tmp_path):
    """workload.shardings naming a function: a pytree of PartitionSpecs over setup's params dict (issue 25)."""
    (tmp_path / "tp.py").write_text(MEGATRON)
    common = ["workload=custom", "workload.fn=tp.layer", "workload.setup=tp.setup", "device.count=2"]
    common += ["mesh.shape={model:2}", "mode=jit", "timing=quick", "size=8"]
    # one sweep: without out_shardings, then jit's out_shardings as a list (every output leaf) and as a function
    outs = "workload.out_shardings=null,[model,null],tp.by_columns"
    proc = run_cli(["-m", *common, "workload.shardings=tp.megatron", outs, "hydra.sweep.dir=out"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [pd.read_csv(tmp_path / "out" / str(job) / "results.csv", keep_default_na=False).iloc[0] for job in range(3)]
    row = rows[0]
    assert (row["status"], row["mesh"], row["shardings"]) == ("ok", "model=2", "tp.megatron")
    # up split by columns, down by rows: one all-reduce of the output (replicated params would need none)
    assert (row["all_reduce_count"], row["all_gather_count"]) == (1, 0)
    assert row["matches_eager"] in (True, "True")
    assert row["output_sharding"] == "P()"  # XLA's choice: the all-reduced output, replicated
    for row, (out, spec) in zip(
        rows[1:], [("[model,null]", "P('model', None)"), ("tp.by_columns", "P(None, 'model')")]
    ):
        assert (row["status"], row["output_sharding"]) == ("ok", spec)
        assert row["shardings"] == f"tp.megatron out:{spec if out.startswith('[') else out}"
    proc = run_cli([*common, "workload.shardings=tp.half_the_tree"], cwd=tmp_path)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("jitexp: error: workload.shardings.1={'up': P(None, 'model')} is invalid; a PartitionSpec")
