"""Issue 57, item 2, through the installed `jitexp` and real worker processes: a pre-jitted function refused in one
line by the preflight's child (the forkserver imports it, not the driver), and a fixed-shape job's results.csv
without a size. The rules and in-process jobs: tests/unit/test_labels_true.py, tests/inprocess/test_labels_true.py."""

from __future__ import annotations

import textwrap

import pandas as pd

from helpers import run_cli

CODE = textwrap.dedent("""
    import jax
    import jax.numpy as jnp


    def scale(x, n):
        return jnp.sin(x) * n


    jitted = jax.jit(scale)
""")
FIXED = ["workload=custom", "workload.args=[{shape:[64]},{value:10}]", "timing=quick"]


def test_a_pre_jitted_function_is_refused_in_one_line_and_its_jit_alone_is_named(tmp_path):
    (tmp_path / "ltcode.py").write_text(CODE)
    refused = run_cli([*FIXED, "workload.fn=ltcode.jitted", f"hydra.run.dir={tmp_path / 'a'}"], cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr[-2000:]
    assert refused.stderr.strip() == (
        "jitexp: error: workload.fn='ltcode.jitted' is invalid; is already wrapped in jax.jit, so its eager row would "
        "time the compiled program (one cached call), not op-by-op dispatch; name the function it wraps (jitexp "
        "applies jax.jit itself; keep the jit decorator off it), or time the compiled call alone: mode=jit"
    )
    out = tmp_path / "b"
    timed = run_cli([*FIXED, "workload.fn=ltcode.jitted", "mode=jit", f"hydra.run.dir={out}"], cwd=tmp_path)
    assert timed.returncode == 0, timed.stderr[-2000:]
    rows = pd.read_csv(out / "results.csv")
    assert rows[["mode", "prejitted", "inputs", "input_shapes"]].values.tolist() == [
        ["jit", "jax.jit", "fixed", "f32[64] i32[]"]
    ]
    assert rows["size"].isna().all()  # a fixed-shape job has no size (it read size=1000)
    assert "jitted f32[64] i32[] float32 cpu prejitted=jax.jit" in timed.stdout + timed.stderr
