"""Does jitexp report the number the user's own loop sees? Six cases against a plain loop, two ways.

(a) In one process, jitexp's timed region (the loop `modes.loop_for` builds on inputs built by the
    worker's own path) and the plain loop a user writes on their own inputs, alternating sample by
    sample with the same calls per sample: what the harness itself adds. Target: ratio within 1 +- 0.01.
    The flax case runs jitexp's eager sample and jit re-warm before each pair of jit samples (as a
    `mode=[eager,jit]` job's rounds do), jitexp's and the plain loop's in alternating order.
(b) In fresh processes paired by index: jitexp worker process i (`runner.run_task`, the job's own
    path, its median) next to plain-loop process i (forked from the same forkserver, batches of
    >= 10 ms, median of 30), alternating which goes first. The paired ratio (Hodges-Lehmann, its CI
    inverting the Wilcoxon test: `stats.paired_change`). Target: within 1 +- 0.02 with the CI covering 1.
    Both sides come from jitexp's forkserver, so what a worker's surroundings do (the preload, gc.freeze) reaches
    both: (b) tells the worker's code from the plain loop's. benchmarks/user_pairs.py pairs a job with a process a
    user starts (a fresh interpreter, no jitexp import), which is the user's number (docs/decisions.md, issue 61).

Steal and run-queue wait of the whole run are printed (targets hold on a quiet machine: steal < 2%).

    python benchmarks/accuracy.py [--only a|b] [--cases add_one,...] [--pairs 20] [--samples 100]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # accuracy_fns for the flax case, here and in workers

CASES: dict[str, list[str]] = {
    "add_one": ["workload=add_one", "size=1"],
    "elementwise_1e5": ["workload=elementwise_chain", "size=100000"],
    "matmul_256": ["workload=matmul", "size=256"],
    "optax_step": [
        "workload=mlp_train_step",
        "size=64",
        "workload.params.features=256",
        "workload.params.depth=1",
    ],
    "eqx_grad": ["workload=eqx_mlp_grad", "size=64"],
    "flax_cnn_eager_jit": [
        "workload=custom",
        "workload.name=flax_cnn",
        "workload.fn=accuracy_fns.cnn_step",
        "workload.setup=accuracy_fns.setup_cnn",
        "+workload.carry={0: 0}",
        "size=16",
        "mode=[eager,jit]",
    ],
}
# Beside the six: the flax step in a jit-only job, which tells the interleaving's cost from the process's.
EXTRA = {
    "flax_cnn_jit_alone": [*CASES["flax_cnn_eager_jit"][:-1], "mode=jit"],
    "add_one_jit_alone": [*CASES["add_one"], "mode=jit"],
    # the same mode=[eager,jit] job with each mode in processes of its own: its jit processes run jit alone
    "flax_cnn_separate": [*CASES["flax_cnn_eager_jit"], "timing.interleave=processes"],
    "add_one_separate": [*CASES["add_one"], "timing.interleave=processes"],
}
TARGET_A, TARGET_B = 0.01, 0.02


def config(name: str) -> Any:
    import jitexp

    return jitexp.compose([*{**CASES, **EXTRA}[name], "check=false"])


# ---- the user's side: their own inputs and their own loop ------------------------------------------


def user_code(cfg: Any) -> tuple[Any, list, dict]:
    """The jitted function and its inputs as user code has them (jnp arrays, uncommitted; setup's as returned)."""
    import jax
    import jax.numpy as jnp

    from jitexp.worker import workload

    fn = workload.import_fn(cfg.workload.fn)
    options = {"static_argnums": cfg.static_argnums} if cfg.static_argnums else {}
    jit_fn = workload.import_fn(cfg.jit_fn) if cfg.jit_fn else jax.jit
    f = jit_fn(fn, **options)
    if cfg.workload.setup:
        args, kwargs = workload.as_inputs(workload.import_fn(cfg.workload.setup)(**workload.setup_keywords(cfg)), "")
        return f, list(args), kwargs
    rng = np.random.default_rng(cfg.seed)
    args = [
        spec["value"] if "value" in spec else jnp.asarray(workload.make_array(spec, cfg.dtype, rng))
        for spec in cfg.workload.args
    ]
    return f, args, {}


def user_loop(cfg: Any) -> Any:
    """`f(x).block_until_ready()` in a loop, or a training loop feeding the state back: what a user writes."""
    import jax

    f, args, kwargs = user_code(cfg)
    assert not kwargs, "the cases pass positional arguments only"
    carry = tuple(dict(cfg.workload.carry).items())
    single = isinstance(f(*args), jax.Array)
    args = tuple(args) if not carry else args

    def loop(number: int) -> float:
        start = time.perf_counter_ns()
        if carry:
            for _ in range(number):
                out = f(*args)
                for k, i in carry:
                    args[i] = out[k]
                jax.block_until_ready(out)
        elif single:
            for _ in range(number):
                f(*args).block_until_ready()
        else:
            for _ in range(number):
                jax.block_until_ready(f(*args))
        return (time.perf_counter_ns() - start) / 1e9 / number

    return loop


# ---- jitexp's side: the worker's inputs and timed loop ----------------------------------------------


def jitexp_loops(cfg: Any) -> dict[str, Any]:
    """Each mode's timed loop as a jitexp worker builds it (inputs by the worker's path, cold call first)."""
    from jitexp.records import ProcessResult
    from jitexp.worker.backend import resolve_device
    from jitexp.worker.inputs import import_functions, input_builder
    from jitexp.worker.modes import cold_call

    device = resolve_device(cfg.device)
    build = input_builder(cfg, import_functions(cfg), device, ProcessResult(0))
    return {mode: cold_call(build(), mode).loop for mode in cfg.mode.names}


def in_process(name: str, samples: int) -> dict:
    """(a): jitexp's loop and the user's loop alternating sample by sample in this process."""
    from jitexp.worker.timing import calibrate, gc_disabled, rewarm_numbers

    cfg = config(name)
    loops = jitexp_loops(cfg)
    ours, other = loops["jit"], loops.get("eager")
    plain = user_loop(cfg)
    plain(3)
    for loop in loops.values():
        loop(3)  # timing.warmup's calls, as measure_rounds makes them before calibrating
    mine = calibrate(ours, 0.01)
    number = mine.number
    theirs = calibrate(other, 0.01) if other else None
    counts = rewarm_numbers({"jit": mine, "eager": theirs}) if theirs else {"jit": 0, "eager": 0}
    rewarm, eager_rewarm = counts["jit"], counts["eager"]
    a, b = [], []
    with gc_disabled():
        for i in range(samples):
            if other:  # as a mode=[eager,jit] job's round: eager's re-warm and sample, jit's re-warm, both jit samples
                other(eager_rewarm)
                other(theirs.number)
                ours(rewarm)
            if i % 2:
                b.append(plain(number))
                a.append(ours(number)[0])
            else:
                a.append(ours(number)[0])
                b.append(plain(number))
    ratio = float(np.median(a) / np.median(b))
    return {"case": name, "jitexp_s": float(np.median(a)), "plain_s": float(np.median(b)), "ratio": ratio}


# ---- (b): fresh processes, paired -------------------------------------------------------------------


def plain_entry(task: Any, conn: Any) -> None:
    """A fresh process's plain loop (launched like a jitexp worker): 3 warm-up calls, batches of >= 10 ms, 30 of them."""
    from jitexp.records import ModeResult, ProcessResult
    from jitexp.worker.timing import calibrate

    sys.path[:] = task.sys_path
    plain = user_loop(task.cfg)
    plain(3)
    number = calibrate(lambda n: (plain(n), None), 0.01).number
    times = np.asarray([plain(number) for _ in range(30)])
    conn.send(("result", ProcessResult(task.process, modes={"plain": ModeResult(samples_s=times, number=number)})))
    conn.close()


def fresh_pairs(name: str, pairs: int) -> dict:
    """(b): jitexp worker i and plain process i, alternating which starts first."""
    from jitexp.analysis import stats
    from jitexp.engine import runner
    from jitexp.engine.processes import Target, launch
    from jitexp.records import Task

    cfg = config(name)
    ours, theirs = [], []
    for i in range(pairs):
        jobs = [("jitexp", runner.WORKER), ("plain", Target("accuracy", "plain_entry"))]
        for side, target in jobs if i % 2 == 0 else jobs[::-1]:
            # as the runner starts them: with timing.interleave=processes, jit's processes measure jit alone
            modes = ("jit",) if cfg.timing.interleave == "processes" else cfg.mode.names
            task = Task(cfg, i, modes, 1, extras=False)
            result = launch(target, task, 300.0)
            for _ in range(10):  # on a TPU the process before may still hold the chip for a second or two
                if not (result.failed and "already in use" in str(result.error)):
                    break
                time.sleep(2.0)
                result = launch(target, task, 300.0)
            if result.failed:
                raise SystemExit(f"{name} {side} process {i}: {result.failure_line()}")
            mode = result.modes["jit" if side == "jitexp" else "plain"]
            (ours if side == "jitexp" else theirs).append(float(np.median(mode.samples_s)))
    change = stats.paired_change(theirs, ours)
    return {"case": name, "pairs": pairs, "jitexp_s": float(np.median(ours)), "plain_s": float(np.median(theirs))} | {
        k: change[k] for k in ("ratio", "ratio_ci_low", "ratio_ci_high", "p_value")
    }


def cpu_counters() -> tuple[tuple[int, ...] | None, int]:
    from jitexp import noise

    return noise.cpu_times(), time.perf_counter_ns()


def steal_since(before: tuple) -> str:
    from jitexp import noise

    share = noise.shares(before[0], noise.cpu_times())
    return f"CPU steal {share.steal:.1%}" if share is not None else "CPU steal unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["a", "b"])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--runs", type=int, default=1, help="(b) repeated: the target is 4 of 5 runs")
    args = parser.parse_args()
    import jax

    names = args.cases.split(",")
    print(f"jax {jax.__version__}, {os.cpu_count()} CPU(s), load average {os.getloadavg()[0]:.2f}")
    failures = 0
    if args.only in (None, "a"):
        before = cpu_counters()
        rows = [in_process(name, args.samples) for name in names]
        print(f"\n(a) one process, alternating sample by sample ({args.samples} each); {steal_since(before)}")
        print(f"{'case':20} {'jitexp':>10} {'plain':>10} {'ratio':>7} {'target':>8}  ok")
        for r in rows:
            ok = abs(r["ratio"] - 1) <= TARGET_A
            failures += not ok
            print(
                f"{r['case']:20} {r['jitexp_s'] * 1e6:8.2f}us {r['plain_s'] * 1e6:8.2f}us {r['ratio']:7.3f} "
                f"{'1+-' + str(TARGET_A):>8}  {'yes' if ok else 'NO'}"
            )
    if args.only in (None, "b"):
        for run in range(args.runs):
            before = cpu_counters()
            print(f"\n(b) run {run + 1}: fresh processes paired by index (each row as its case ends)")
            print(
                f"{'case':20} {'pairs':>5} {'jitexp':>10} {'plain':>10} {'ratio':>7} {'95% CI':>15} {'target':>8}  ok"
            )
            for name in names:
                r = fresh_pairs(name, args.pairs)
                ok = abs(r["ratio"] - 1) <= TARGET_B and r["ratio_ci_low"] <= 1 <= r["ratio_ci_high"]
                failures += not ok
                print(
                    f"{r['case']:20} {r['pairs']:5} {r['jitexp_s'] * 1e6:8.2f}us {r['plain_s'] * 1e6:8.2f}us "
                    f"{r['ratio']:7.3f} {r['ratio_ci_low']:7.3f}-{r['ratio_ci_high']:<7.3f} {'1+-' + str(TARGET_B):>8}  "
                    f"{'yes' if ok else 'NO'}",
                    flush=True,
                )
            print(f"(b) run {run + 1}: {steal_since(before)}")
    print(f"\n{failures} row(s) outside the targets; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
