"""Issue 61: does a forked child's x+1 loop pay copy-on-write faults or context switches in its steady state?
The user's loop in a fresh interpreter, and in a child forked from a Python that imported JAX (as jitexp's
forkserver does), each timing 3 x 100,000 calls after 5,000 warm-up calls by the CPU clock, with the minor faults and
the context switches of each block (getrusage).

    JAX_PLATFORMS=cpu python benchmarks/fork_faults.py fresh; JAX_PLATFORMS=cpu python benchmarks/fork_faults.py fork
"""

from __future__ import annotations

import importlib
import os
import resource
import sys
import time

import numpy as np

WARMUP, CALLS, BLOCKS = 5_000, 100_000, 3


def run(tag: str) -> None:
    """The user's x+1 loop: per block, ns a call by the CPU clock, minor faults, voluntary/involuntary switches."""
    import jax
    import jax.numpy as jnp

    f = jax.jit(lambda x: x + 1)
    x = jnp.asarray(np.float32(0.5))
    for _ in range(WARMUP):
        f(x).block_until_ready()
    blocks = []
    for _ in range(BLOCKS):
        before, start = resource.getrusage(resource.RUSAGE_SELF), time.process_time_ns()
        for _ in range(CALLS):
            f(x).block_until_ready()
        per_call = (time.process_time_ns() - start) / CALLS
        after = resource.getrusage(resource.RUSAGE_SELF)
        blocks.append(
            f"{per_call:.0f}ns minflt={after.ru_minflt - before.ru_minflt} "
            f"nvcsw={after.ru_nvcsw - before.ru_nvcsw} nivcsw={after.ru_nivcsw - before.ru_nivcsw}"
        )
    print(tag, " | ".join(blocks), flush=True)


def main(mode: str) -> None:
    if mode != "fork":
        run("fresh")
        return
    importlib.import_module("jax")  # the parent holds JAX, as jitexp's forkserver does
    pid = os.fork()
    if pid == 0:
        run("fork")
        os._exit(0)
    os.waitpid(pid, 0)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "fresh")
