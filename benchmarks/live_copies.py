"""Issue 59: what the timed job holds while its steady loop calls, against what a user's loop holds.

Runs `jitexp workload=mlp_train_step` in this process (isolate=none) with the carried loop's function wrapped to
read `jax.live_arrays()` before each steady call; prints the live arrays by shape (how many of each) and their bytes.
A user's loop `params, opt_state, loss = step(params, opt_state, batch)` holds one copy of the carried state (params
and Adam's two moments: 3 arrays of each layer's shape) and one of the batch before each call.

    python benchmarks/live_copies.py [override ...]     # e.g. mode=[eager,jit] check=true mode.donate_argnums=null
"""

from __future__ import annotations

import collections
import shutil
import sys
import tempfile

import jax

import jitexp.worker.modes as modes
from jitexp.cli import main

seen: list[int] = []
top: collections.Counter = collections.Counter()
carry_loop = modes._carry_loop


def counting(fn, args, kwargs, pairs, block):  # noqa: ANN001, ANN201
    def wrapped(*a, **k):  # noqa: ANN002, ANN003, ANN202
        live = jax.live_arrays()
        seen.append(sum(x.nbytes for x in live))
        if seen[-1] == max(seen):
            top.clear()
            top.update((x.shape, x.nbytes) for x in live)
        return fn(*a, **k)

    return carry_loop(wrapped, args, kwargs, pairs, block)


modes._carry_loop = counting
folder = tempfile.mkdtemp(prefix="live_copies-")
sys.argv = [
    "jitexp", "workload=mlp_train_step", "size=512", "workload.params.features=64", "workload.params.batch=8192",
    "mode=jit", "timing=quick", "isolate=none", "check=false", "device_time=false", "roofline=false", "progress=false",
    f"hydra.run.dir={folder}", *sys.argv[1:],
]  # fmt: skip
try:
    main()
except SystemExit:
    pass
finally:
    shutil.rmtree(folder, ignore_errors=True)
print("live arrays (shape, bytes): count, at the steady call that held the most:", file=sys.stderr)
for (shape, nbytes), count in sorted(top.items(), key=lambda kv: -kv[0][1]):
    print(f"  {shape} {nbytes:,} B: {count}", file=sys.stderr)
print(f"live bytes at steady calls: min {min(seen):,} max {max(seen):,} over {len(seen)} calls", file=sys.stderr)
