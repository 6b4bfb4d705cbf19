"""The host probe: fixed reference kernels every worker times, so that a change in them is the machine's, not
the workload's (host.py, which the driver reads, holds their names and the noise arithmetic; this runs JAX)."""

from __future__ import annotations

import time
from typing import Any


def host_probe(repeats: int = 7) -> dict[str, float]:
    """Medians of three fixed reference measurements on the CPU (about 50 ms in all): host_probe_<name>_s.

    dispatch: a jitted add on 8 floats, call to result (dispatch-bound); copy: a 4 MiB NumPy copy
    (memory-bound); matmul: a jitted 256x256 float32 matmul (compute-bound). The same kernels in
    every worker of every run, so a change in them is the host's, not the workload's.
    """
    import jax
    import numpy as np

    cpu = jax.local_devices(backend="cpu")[0]  # this process's own (rank 0's is another process's in a distributed job)
    small = jax.device_put(np.ones(8, np.float32), cpu)
    square = jax.device_put(np.linspace(0, 1, 256 * 256, dtype=np.float32).reshape(256, 256), cpu)
    src, dst = np.ones(2**19, np.float64), np.empty(2**19, np.float64)
    add = jax.jit(lambda x: x + 1)
    matmul = jax.jit(lambda a: a @ a)
    jax.block_until_ready((add(small), matmul(square)))  # compiled outside the timed calls

    def timed(fn: Any, inner: int) -> float:
        samples = []
        for _ in range(repeats):
            start = time.perf_counter_ns()
            for _ in range(inner):
                fn()
            samples.append((time.perf_counter_ns() - start) / 1e9 / inner)
        return float(np.median(samples))

    return {
        "host_probe_dispatch_s": timed(lambda: add(small).block_until_ready(), 50),
        "host_probe_copy_s": timed(lambda: np.copyto(dst, src), 3),
        "host_probe_matmul_s": timed(lambda: matmul(square).block_until_ready(), 3),
    }
