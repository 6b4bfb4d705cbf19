"""Time to an answer (issue 48): each command's whole wall time, run as a user runs it, beside a plain process.

Each case runs the command as a fresh `python -m jitexp ...` process (from the README's install) and reads the job
line's split; beside it, in the same run, a plain process (import JAX, open the device, a jitted x+1, exit): the
floor any fresh process pays here. Prints one row per case: wall, target, wall / target (<= 1 meets it), the plain
process, and the job line's split. Run on the machine whose figures you want (the TPU through the device tool).

    python benchmarks/job_time.py [--cases main,add_one,...] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONV = [
    "workload=custom",
    "workload.name=conv_step",
    "workload.fn=job_time_fns.step",
    "workload.setup=job_time_fns.make",
    "size=64",
]
CASES: dict[str, tuple[list[str], float]] = {  # name: (jitexp arguments, target seconds on the TPU v5e)
    "main": ([], 25.0),
    "add_one": (["workload=add_one", "mode=jit"], 18.0),
    "matmul_8192": (["workload=matmul", "size=8192", "dtype=bfloat16", "mode=jit"], 30.0),
    "conv_step": ([*CONV, "mode=[eager,jit]"], 45.0),
    "sweep_5": (["-m", "size=256,512,1024,2048,4096"], 130.0),
}
CPU_TARGETS = {"main": 10.0}
PLAIN = (
    "import jax, jax.numpy as jnp; x = jnp.ones(1000); f = jax.jit(lambda v: v + 1); "
    "[f(x).block_until_ready() for _ in range(100)]"
)


def run(args: list[str], out: Path, name: str) -> tuple[float, str]:
    """The command's wall seconds and the answer block's `job` line (the split: `job  624 ms: setup 268 ms, ...`,
    its wrapped continuation joined; a sweep's last one)."""
    env = {**os.environ, "PYTHONPATH": f"{HERE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    folder = out / name
    where = ["hydra.sweep.dir=" + str(folder)] if "-m" in args else ["hydra.run.dir=" + str(folder)]
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "jitexp", *args, *where], capture_output=True, text=True, env=env, cwd=out
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        return wall, f"FAILED ({proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}"
    found = re.findall(r"^  job +(.*(?:\n {12}\S.*)*)", proc.stdout, flags=re.MULTILINE)
    return wall, (" ".join(found[-1].split()) if found else "")


def plain() -> float:
    """A plain process's wall seconds, with the host buffer jitexp gives its workers on a TPU (256 MiB)."""
    env = {"TPU_PREMAPPED_BUFFER_SIZE": str(256 * 2**20), **os.environ}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", PLAIN], capture_output=True, check=True, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--out", default=None)
    parser.add_argument("--cpu", action="store_true", help="the CPU's targets (CPU_TARGETS), on the CPU")
    options = parser.parse_args()
    out = Path(options.out or tempfile.mkdtemp(prefix="jitexp-job-time-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"{'case':<12} {'wall s':>7} {'target':>7} {'ratio':>6} {'plain s':>8}  split")
    for name in options.cases.split(","):
        args, target = CASES[name]
        if options.cpu:
            target = CPU_TARGETS.get(name, float("nan"))
            args = [*args, "device=cpu"]
        floor = plain()
        wall, split = run(args, out, name)
        ratio = wall / target
        print(f"{name:<12} {wall:7.1f} {target:7.0f} {ratio:6.2f} {floor:8.1f}  {split}", flush=True)


if __name__ == "__main__":
    main()
