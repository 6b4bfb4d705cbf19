"""In a worker process a job's timed calls are made two frames deep, as a user's script makes them (issue 61:
jaxlib walks the caller's stack at every call). JITEXP_WORKER_OFF=shallow_stack, which puts them back ~15 frames
deep, is not tested here: workers inherit the environment of the forkserver the first job started (the benchmark's
arm deep_stack runs each job as its own `python -m jitexp`)."""

from __future__ import annotations

from helpers import depth_job
from jitexp import compose, run


def test_the_rounds_call_the_function_two_frames_deep(tmp_path):
    assert depth_job(tmp_path, "process") == 3  # the function, the timed loop, the shallow thread's `_serve`


def test_a_mesh_set_at_the_modules_import_holds_in_the_rounds(tmp_path, monkeypatch):
    # jax.set_mesh is thread-local: on the shallow thread with_sharding_constraint would find no mesh and fail
    (tmp_path / "meshfns.py").write_text(
        "import jax\n"
        "from jax.sharding import PartitionSpec as P\n"
        "jax.set_mesh(jax.make_mesh((1,), ('x',), axis_types=(jax.sharding.AxisType.Auto,)))\n"
        "def plus_one(x):\n"
        "    return jax.lax.with_sharding_constraint(x + 1, P('x'))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    row = run(
        compose(
            ["timing=quick", "workload=custom", "workload.fn=meshfns.plus_one", "mode=jit"]
            + ["workload.args=[{shape:[8]}]"]
        )
    ).row
    assert row["status"] == "ok", row.get("error_message")
    assert row["compiles_during_timing"] == 0
