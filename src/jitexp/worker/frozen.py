"""Preloaded last by the forkserver: `gc.freeze()` moves what the server imported (JAX, jitexp's worker) out of the
collector's reach, so a forked worker's `gc.collect()` before sampling scans only what the worker made, and does not
write to (and so copy) every page the server's imports filled. JITEXP_WORKER_OFF=freeze leaves it out
(worker.factors; read raw here: a bad name is refused by the worker, not by the server's preload)."""

import gc
import os

if "freeze" not in os.environ.get("JITEXP_WORKER_OFF", "").replace(" ", "").split(","):
    gc.freeze()
