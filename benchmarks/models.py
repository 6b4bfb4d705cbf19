"""Real models under jitexp: training steps per step, and whether a carried step is measured as a hand loop would.

Needs the models extra (`pip install ".[models]"`). Three tables:
1. mlp_train_step and eqx_mlp_grad at two sizes (timing=default, one paired job each): eager and
   jit per step, jit with the carried state donated (mlp_train_step), the speedup with its CI,
   compile time, break-even steps. Informational (no target).
2. accuracy: the carried jit mlp_train_step measured by jitexp (two runs) against a hand-written
   loop in 8 fresh processes (`params, opt_state, loss = step(params, opt_state, batch, lr, remat)`,
   blocked each step, batches of >= 10 ms, median of 30), interleaved jitexp, 4 loops, jitexp, 4
   loops. Target: jitexp's median within +-5% of the loops' median (benchmarks/accuracy.py's rule).
3. harness overhead on a carried step of a tiny model, in one process: jitexp's own timed path
   (`modes.make_call` -> a Carry, `modes.loop_for`) against the hand loop,
   alternating sample by sample with the same calls per sample. Target: ratio of medians <= 1.05.

    python benchmarks/models.py [--sizes 32,128] [--skip-table]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
ACCURACY_SIZE = 64
TINY_SIZE = 8
HAND_LOOP = """
import sys, time
import jax
import numpy as np
sys.path.insert(0, {here!r})
from models import hand_step
step, (params, opt_state, batch, lr, remat) = hand_step({size})
def once(params, opt_state):
    params, opt_state, loss = step(params, opt_state, batch, lr, remat)
    jax.block_until_ready((params, opt_state, loss))
    return params, opt_state
params, opt_state = once(params, opt_state)
start = time.perf_counter(); params, opt_state = once(params, opt_state); one = time.perf_counter() - start
number = max(1, int(0.01 / one))
for _ in range(3):
    params, opt_state = once(params, opt_state)
times = []
for _ in range(30):
    start = time.perf_counter_ns()
    for _ in range(number):
        params, opt_state = once(params, opt_state)
    times.append((time.perf_counter_ns() - start) / 1e9 / number)
print(np.median(times))
"""


def hand_step(size: int):
    """The jitted mlp_train_step and its arguments, built by the workload's own setup (same seed, same knobs)."""
    import jax

    import jitexp
    from jitexp.config import import_fn
    from jitexp.worker.workload import run_setup

    cfg = jitexp.compose(["workload=mlp_train_step", f"size={size}", "mode=jit"])
    args, _ = run_setup(import_fn(cfg.workload.setup), cfg)
    return jax.jit(import_fn(cfg.workload.fn), static_argnums=cfg.static_argnums), args


def jitexp_job(folder: Path, *overrides: str) -> pd.DataFrame:
    proc = subprocess.run(
        [sys.executable, "-m", "jitexp", *overrides, f"hydra.run.dir={folder}"], capture_output=True, text=True
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    return pd.read_csv(folder / "results.csv")


def step_table(sizes: list[int], tmp: Path) -> None:
    """Table 1: per-step times, speedups, compile and break-even of the two model workloads."""
    print(
        f"{'workload':16} {'size':>5} {'eager':>10} {'jit':>10} {'jit+donate':>10} {'speedup (95% CI)':>24} "
        f"{'donate/jit':>10} {'compile':>9} {'break-even':>10}"
    )
    for workload in ("mlp_train_step", "eqx_mlp_grad"):
        for size in sizes:
            base = ["timing=default", f"workload={workload}", f"size={size}"]
            rows = jitexp_job(tmp / f"{workload}_{size}", *base, "mode=[eager,jit]").set_index("mode")
            donated = "-"
            ratio = "-"
            if workload == "mlp_train_step":  # the same job with the carried state donated
                d = jitexp_job(tmp / f"{workload}_{size}_d", *base, "mode=[eager,jit]", "mode.donate_argnums=null")
                d = d.set_index("mode")
                donated = f"{d.loc['jit', 'median_s'] * 1e6:8.1f}us"
                ratio = f"{d.loc['jit', 'speedup'] / rows.loc['jit', 'speedup']:10.3f}"
            jit = rows.loc["jit"]
            ci = f"{jit['speedup']:.1f}x ({jit['speedup_ci_low']:.1f}-{jit['speedup_ci_high']:.1f})"
            print(
                f"{workload:16} {size:5d} {rows.loc['eager', 'median_s'] * 1e6:8.1f}us {jit['median_s'] * 1e6:8.1f}us "
                f"{donated:>10} {ci:>24} {ratio:>10} {jit['compile_s'] * 1e3:7.0f}ms {jit['break_even_calls']:10.0f}"
            )


def hand_loop_process(size: int) -> float:
    code = HAND_LOOP.format(here=str(HERE), size=size)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(proc.stdout.strip().splitlines()[-1])


def accuracy(tmp: Path) -> bool:
    """Table 2: the carried jit step by jitexp against 8 hand-loop processes, interleaved."""
    medians, loops = [], []
    for half in range(2):
        row = jitexp_job(
            tmp / f"acc_{half}", "timing=default", "workload=mlp_train_step", f"size={ACCURACY_SIZE}", "mode=jit"
        ).iloc[0]
        medians.append(row)
        loops += [hand_loop_process(ACCURACY_SIZE) for _ in range(4)]
    reference = float(np.median(loops))
    ours = float(np.median([r["median_s"] for r in medians]))
    covers = sum(r["ci95_low_s"] <= reference <= r["ci95_high_s"] for r in medians)
    ratio = ours / reference
    ok = abs(ratio - 1) <= 0.05
    print(f"\n{'case':28} {'jitexp':>10} {'hand x8':>10} {'ratio':>6} {'target':>8} {'CI covers':>9}  ok")
    print(
        f"{'mlp_train_step ' + str(ACCURACY_SIZE) + ' jit carried':28} {ours * 1e6:8.1f}us {reference * 1e6:8.1f}us "
        f"{ratio:6.3f} {'1+-0.05':>8} {covers:>5} of 2  {'yes' if ok else 'NO'}"
    )
    print(
        f"  jitexp runs {[round(float(r['median_s']) * 1e6, 1) for r in medians]} us, "
        f"hand loops {[round(v * 1e6, 1) for v in loops]} us"
    )
    return ok


def overhead(samples: int) -> bool:
    """Table 3: jitexp's Carry path against the hand loop, alternating in one process."""
    import jax

    from jitexp.config import import_fn
    from jitexp.worker.modes import block_for, loop_for, make_call
    from jitexp.worker.timing import calibrate, gc_disabled
    from jitexp.worker.workload import Workload, copy_leaf

    step, args = hand_step(TINY_SIZE)
    fn = import_fn("jitexp.workloads.models.mlp_train_step")
    w = Workload(
        "mlp_train_step",
        fn,
        tuple(jax.tree.map(copy_leaf, args)),
        (3, 4),
        carry={0: 0, 1: 1},
    )
    call = make_call(w, "jit")
    out = call()
    loop = loop_for(call, out, block_for(out))
    params, opt_state, batch, lr, remat = args

    def hand(number: int) -> float:
        nonlocal params, opt_state
        start = time.perf_counter_ns()
        for _ in range(number):
            params, opt_state, loss = step(params, opt_state, batch, lr, remat)
            jax.block_until_ready((params, opt_state, loss))
        return (time.perf_counter_ns() - start) / 1e9 / number

    number = calibrate(loop, 0.01).number
    a, b = [], []
    with gc_disabled():
        for _ in range(samples):
            a.append(loop(number)[0])
            b.append(hand(number))
    ratio = float(np.median(a) / np.median(b))
    ok = ratio <= 1.05
    print(f"\n{'case':28} {'jitexp path':>11} {'hand loop':>10} {'ratio':>6} {'target':>7}  ok")
    print(
        f"{'mlp_train_step ' + str(TINY_SIZE) + ' carried':28} {np.median(a) * 1e6:9.1f}us {np.median(b) * 1e6:8.1f}us "
        f"{ratio:6.3f} {'<=1.05':>7}  {'yes' if ok else 'NO'}"
    )
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="32,128")
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--skip-table", action="store_true")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.2f}\n")
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_table:
            step_table([int(s) for s in args.sizes.split(",")], Path(tmp))
        ok = accuracy(Path(tmp))
    ok = overhead(args.samples) and ok
    print(f"\n{'all targets met' if ok else 'a target was missed'}; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
