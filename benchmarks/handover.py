"""The chip's hand-over floor (issue 48, item 6): from one process's last call to the next process's first.

Three ways for the first process to end after its work: `exit` (returning, as a jitexp worker does), `os_exit`
(os._exit(0) at once, no clean-up), `sigkill` (its parent kills it). The next process has imported JAX already and
waits (as jitexp's prepared worker does); it is told to go once the first is gone, then opens the device and runs one
jitted call. Per pair: the first's exit (work done -> gone), the next's open (go -> first call done), and whether the
next one's open was refused (a lockfile or a device still held). Prints the medians per way of ending.

    python benchmarks/handover.py [--pairs 4]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time

WORK = """
import os, sys, time, jax, jax.numpy as jnp
how = sys.argv[1]
if how == "wait":
    sys.stdin.readline()
start = time.monotonic()
try:
    x = jnp.ones(1000); jax.jit(lambda v: v + 1)(x).block_until_ready()
except Exception as exc:
    print("refused", type(exc).__name__, str(exc).splitlines()[0][:120], flush=True); sys.exit(3)
print("done", time.monotonic() - start, time.monotonic(), flush=True)
if how == "os_exit":
    os._exit(0)
if how == "sigkill":
    time.sleep(60)
"""
ENV = {**os.environ, "TPU_PREMAPPED_BUFFER_SIZE": str(256 * 2**20)}


def pair(how: str) -> tuple[float, float, bool]:
    first = subprocess.Popen([sys.executable, "-c", WORK, how], stdout=subprocess.PIPE, text=True, env=ENV)
    nxt = subprocess.Popen(
        [sys.executable, "-c", WORK, "wait"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=ENV
    )
    line = first.stdout.readline().split()
    done = float(line[2])
    if how == "sigkill":
        first.send_signal(signal.SIGKILL)
    first.wait()
    gone = time.monotonic()
    nxt.stdin.write("go\n")
    nxt.stdin.flush()
    reply = nxt.stdout.readline().split()
    nxt.wait()
    refused = reply[0] == "refused"
    opened = float("nan") if refused else float(reply[1])
    return gone - done, opened, refused


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=4)
    pairs = parser.parse_args().pairs
    print(f"{'ending':<8} {'pairs':>5} {'exit s':>7} {'next open s':>11} {'refused':>7}")
    for how in ("exit", "os_exit", "sigkill"):
        got = [pair(how) for _ in range(pairs)]
        exits = statistics.median(g[0] for g in got)
        opens = [g[1] for g in got if not g[2]]
        open_s = statistics.median(opens) if opens else float("nan")
        print(f"{how:<8} {pairs:5d} {exits:7.2f} {open_s:11.2f} {sum(g[2] for g in got):7d}", flush=True)


if __name__ == "__main__":
    main()
