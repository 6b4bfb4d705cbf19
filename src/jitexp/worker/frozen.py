"""Preloaded last by the forkserver: `gc.freeze()` moves what the server imported (JAX, jitexp's worker) out of the
collector's reach, so a forked worker's `gc.collect()` before sampling scans only what the worker made, and does not
write to (and so copy) every page the server's imports filled."""

import gc

gc.freeze()
