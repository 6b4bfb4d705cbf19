"""Issue 59's planted temporary, end to end: a function version that holds one more 512x512 float32 array (1 MiB) as a
temporary fails `jitexp-compare --fail-on temp_bytes` with the exact bytes, and the same code measured again passes.
XLA's memory analysis is exact for a program on a given jax and backend, so the gate needs no statistics here."""

from __future__ import annotations

from pathlib import Path

from helpers import run_cli

BASE = "import jax.numpy as jnp\n\n\ndef step(x):\n    return jnp.sort(x, axis=0) @ x\n"
# the second sort's result is a temporary of 512 x 512 x 4 bytes that no fusion can drop
NEW = "import jax.numpy as jnp\n\n\ndef step(x):\n    return (jnp.sort(x, axis=0) @ x) + (jnp.sort(x, axis=1) @ x)\n"


def measured(root: Path, name: str, source: str) -> Path:
    """One quick jit job of `planted.step` written as `source`, in its own folder (so each imports its own version)."""
    here = root / name
    here.mkdir()
    (here / "planted.py").write_text(source)
    out = root / f"run_{name}"
    args = [
        "workload=custom",
        "workload.fn=planted.step",
        "workload.args=[{shape:[512,512]}]",
        "mode=jit",
        "timing=quick",
        "timing.processes=1",
        "timing.max_processes=1",
        "check=false",
        "progress=false",
        f"hydra.run.dir={out}",
    ]
    proc = run_cli(args, cwd=here)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out


def test_a_planted_temporary_fails_the_gate_in_exact_bytes_and_the_same_code_passes(tmp_path):
    base, again, new = (measured(tmp_path, n, s) for n, s in (("base", BASE), ("again", BASE), ("new", NEW)))
    grown = run_cli([str(base), str(new), "--fail-on", "temp_bytes", "--no-plot"], cwd=tmp_path, name="jitexp-compare")
    assert grown.returncode == 1, grown.stdout[-2000:]
    assert "temp_bytes 1,048,576 -> 2,097,152 bytes (+1,048,576, +100%)" in grown.stdout
    assert "gate: fail (1 more memory)" in grown.stdout
    same = run_cli([str(base), str(again), "--fail-on", "temp_bytes", "--no-plot"], cwd=tmp_path, name="jitexp-compare")
    assert same.returncode == 0, same.stdout[-2000:]
    assert "gate: pass" in same.stdout
