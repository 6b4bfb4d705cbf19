"""The device's measured ceilings for the roofline: a matmul probe (FLOP/s, in the job's dtype) and a copy probe
(bytes/s), measured once per machine, device kind, dtype and JAX version in process 0, on the job's own device, after
everything else it measures, and kept in a small store (~/.cache/jitexp/peaks.json) that later jobs read:
`roofline=fresh` measures again.

Each probe's calls are dispatched back to back and blocked once at the end, so the host's dispatch overlaps the
device's work: the figure is the device's throughput, as close to its peak as these sizes reach (docs/decisions.md).
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jitexp.errors import first_line

ACCELERATOR_SIZES = (8192, 512 * 2**20)  # matmul side, copy bytes: ~1.1 TFLOP and 1 GiB moved a call
CPU_SIZES = (512, 32 * 2**20)  # a few ms on a laptop's cores
CALLS, REPEATS = 8, 3

_found: dict[tuple, tuple[dict[str, float], str | None, str]] = {}  # per device and dtype, for in-process jobs


def peaks(device: Any, dtype: str, fresh: bool = False) -> tuple[dict[str, float], str | None, str]:
    """({peak_flops_per_s, peak_bytes_per_s}, why one is missing or None, when and where they were measured): from
    the store when it holds this machine's device kind, dtype and JAX version (unless `fresh`), else measured now
    and stored."""
    key = (device.platform, device.id, dtype)
    if key in _found and not fresh:
        return _found[key]
    stored_key = store_key(device, dtype)
    kept = None if fresh else load_store().get(stored_key)
    if kept is not None:
        _found[key] = ({k: float(kept[k]) for k in PEAK_KEYS if k in kept}, None, kept["measured"])
        return _found[key]
    found, problem = _measure(device, dtype)
    measured = f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC on {socket.gethostname()}"
    if problem is None:
        save_peaks(stored_key, {**found, "measured": measured})
    _found[key] = (found, problem, f"{measured} (this job)")
    return _found[key]


PEAK_KEYS = ("peak_flops_per_s", "peak_bytes_per_s")


def store_path() -> Path:
    """The peaks store: $XDG_CACHE_HOME/jitexp/peaks.json (~/.cache by default)."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "jitexp" / "peaks.json"


def store_key(device: Any, dtype: str) -> str:
    """What a stored peak is valid for: this machine, the device kind, the dtype and the JAX and jaxlib versions."""
    import jax
    import jaxlib

    return f"{socket.gethostname()}|{device.platform}|{device.device_kind}|{dtype}|jax {jax.__version__}|jaxlib {jaxlib.__version__}"


def load_store() -> dict[str, Any]:
    """The store's entries (empty when it is missing or unreadable: then the peaks are measured again)."""
    try:
        data = json.loads(store_path().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save_peaks(key: str, entry: dict[str, Any]) -> None:
    """Add one entry to the store, written atomically (a temp file renamed); a store that cannot be written is
    skipped: the next job measures again."""
    path = store_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {**load_store(), key: entry}
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".peaks-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(data, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass


def _measure(device: Any, dtype: str) -> tuple[dict[str, float], str | None]:
    import jax
    import jax.numpy as jnp

    side, copy_bytes = CPU_SIZES if device.platform == "cpu" else ACCELERATOR_SIZES
    out: dict[str, float] = {}
    problems = []
    try:
        a = jax.device_put(jnp.ones((side, side), dtype), device)
        out["peak_flops_per_s"] = 2 * side**3 / _per_call(jax.jit(lambda m: m @ m), a)
        del a
    except Exception as exc:  # a dtype the device cannot multiply, or memory the job left no room for
        problems.append(f"matmul probe: {type(exc).__name__}: {first_line(exc)}")
    try:
        v = jax.device_put(jnp.ones((copy_bytes // 4,), jnp.float32), device)
        out["peak_bytes_per_s"] = 2 * copy_bytes / _per_call(jax.jit(lambda x: x * 2), v)  # read and write
        del v
    except Exception as exc:
        problems.append(f"copy probe: {type(exc).__name__}: {first_line(exc)}")
    return out, "; ".join(problems) or None


def _per_call(f: Any, x: Any) -> float:
    """The best of REPEATS runs of CALLS calls dispatched back to back, seconds per call."""
    f(x).block_until_ready()  # compiled, and the output's buffer allocated, before any timing
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(CALLS):
            out = f(x)
        out.block_until_ready()
        best = min(best, (time.perf_counter() - start) / CALLS)
        del out
    return best
