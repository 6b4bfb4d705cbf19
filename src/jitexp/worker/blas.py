"""Whether a NumPy twin's BLAS threads stalled (issue 57): its time with the threads it had against one thread.

On a busy machine, and in a process whose XLA CPU client keeps threads of its own, OpenBLAS's threads wait on each
other for whole scheduler ticks: a 200x200 float32 matmul read 15.8 ms a call with 2 threads and 131 us with 1 (2-core
VM, load 4.7). A verdict "jit 190x faster than numpy" then stands on the stall, not on NumPy's work. Process 0 times a
few calls of the twin with one BLAS thread after its rounds; analysis.instability.blas_stall compares.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

PROBE_S = 0.05  # about this long of one-thread calls, 3 at least
MAX_CALL_S = 0.2  # a twin slower than this is not probed: a few stalled scheduler ticks cannot double it


def blas_probe(call: Callable[[], object], per_call_s: float) -> dict[str, float | int | None]:
    """`numpy_blas_threads` (the BLAS threads NumPy had while timed) and `numpy_one_thread_s` (the median of a few
    calls with one BLAS thread; None where there was one thread already, or a call is too long to matter)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    threads = max((p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"), default=0)
    if threads <= 1 or per_call_s > MAX_CALL_S:
        return {"numpy_blas_threads": threads or None, "numpy_one_thread_s": None}
    calls = max(3, min(50, int(PROBE_S / max(per_call_s, 1e-9))))
    times = []
    with threadpool_limits(1, user_api="blas"):
        call()  # the one-thread path's first call
        for _ in range(calls):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
    return {"numpy_blas_threads": threads, "numpy_one_thread_s": float(np.median(times))}
