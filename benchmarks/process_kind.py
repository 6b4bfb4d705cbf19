"""Issue 61: is x+1's remaining ~3% the worker's process itself? The user's own loop, no jitexp code in it, in a
fresh interpreter against the same loop in a child started as jitexp starts its workers (a forkserver child, its
server preloading jitexp's worker or nothing) and as multiprocessing's other start methods do (spawn, fork), and a fresh interpreter started by a waiting Python
process (grand).

Each round starts one process per arm, in an order rotated each round; each process times 40 batches of 2,000
calls of `jax.jit(lambda x: x + 1)` on a float32 scalar, by the process's CPU clock (less moved by other work on a
shared host than the wall clock) and by the wall clock. Per arm: the median over rounds of its ratio to the fresh
process of the same round, and the range.

    JAX_PLATFORMS=cpu python benchmarks/process_kind.py [--rounds 12] [--arms fresh,fs,fs_bare,spawn,fork,grand]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import subprocess
import sys
import time

import numpy as np

BATCHES, CALLS = 40, 2000
METHOD = {"fs": "forkserver", "fs_bare": "forkserver", "spawn": "spawn", "fork": "fork"}


def measure(send=print) -> None:
    """The loop's median per call by the CPU clock and the wall clock (and each minimum), as one JSON line."""
    import jax
    import jax.numpy as jnp

    f = jax.jit(lambda x: x + 1)
    x = jnp.asarray(np.random.default_rng([0, 0]).standard_normal((), dtype=np.float32))
    for _ in range(CALLS):
        f(x).block_until_ready()
    out = {}
    for clock, get in (("cpu", time.process_time_ns), ("wall", time.perf_counter_ns)):
        per_call = []
        for _ in range(BATCHES):
            start = get()
            for _ in range(CALLS):
                f(x).block_until_ready()
            per_call.append((get() - start) / CALLS)
        out[clock], out[f"{clock}_min"] = float(np.median(per_call)), float(np.min(per_call))
    send(json.dumps(out))


def _child(conn) -> None:
    measure(conn.send)


def in_child(arm: str) -> None:
    """The loop in a child of this process, started as the arm says (grand: a fresh interpreter that this Python
    process starts and waits for, as multiprocessing's parent waits, with no multiprocessing in the child)."""
    if arm == "grand":
        print(subprocess.run([sys.executable, __file__, "--one", "fresh"], capture_output=True, text=True).stdout)
        return
    ctx = multiprocessing.get_context(METHOD[arm])
    if METHOD[arm] == "forkserver":  # fs: the server preloads what jitexp's does; fs_bare: nothing
        from user_plain import jitexp_preload

        ctx.set_forkserver_preload(jitexp_preload() if arm == "fs" else [])
    here, there = ctx.Pipe()
    child = ctx.Process(target=_child, args=(there,))
    child.start()
    print(here.recv())
    child.join()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--arms", default="fresh,fs,fs_bare,spawn,fork")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # run one arm's process (the rounds start this)
    args = parser.parse_args()
    if args.one:
        measure() if args.one == "fresh" else in_child(args.one)
        return
    arms = args.arms.split(",")
    got: dict[str, list[dict]] = {a: [] for a in arms}
    for i in range(args.rounds):
        for arm in arms[i % len(arms) :] + arms[: i % len(arms)]:
            done = subprocess.run([sys.executable, __file__, "--one", arm], capture_output=True, text=True, check=True)
            got[arm].append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"round {i:2}: " + "  ".join(f"{a} {got[a][-1]['cpu']:.0f} ns" for a in arms), flush=True)
    print("\n| arm | rounds | CPU clock: median ratio to fresh [range] | CPU clock, minima | wall clock, minima |")
    print("| --- | --- | --- | --- | --- |")
    for arm in arms:
        if arm == "fresh":
            continue
        cells = []
        for key in ("cpu", "cpu_min", "wall_min"):
            r = [a[key] / b[key] for a, b in zip(got[arm], got["fresh"])]
            cells.append(f"{np.median(r):.3f} [{min(r):.3f}-{max(r):.3f}]")
        print(f"| {arm} | {len(got[arm])} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
