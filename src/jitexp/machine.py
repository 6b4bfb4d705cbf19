"""Machine facts recorded with every row and read by the driver: CPU model, load, memory, the time. No JAX
(jaxinfo holds what JAX says, in a worker)."""

from __future__ import annotations

import os
import platform
from datetime import datetime, timezone
from functools import lru_cache


def load_avg() -> float:
    """The 1-minute load average (NaN where the OS has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return float("nan")


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux MemAvailable), None where unknown."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


@lru_cache(maxsize=1)
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def timestamp() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
