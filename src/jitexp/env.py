"""Environment metadata recorded with every row: versions, host, CPU, load, JAX settings."""

from __future__ import annotations

import os
import platform
import socket
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


def jax_flag(name: str):
    """The value in force of a jax.config flag (JAX reads some as attributes, others via read())."""
    import jax

    try:
        return getattr(jax.config, name)
    except AttributeError:
        return jax.config.read(name)


def timestamp() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def environment() -> dict:
    """Versions, host and JAX flags; call with JAX imported (the job has already started it)."""
    import jax
    import jaxlib

    return {
        "jax_version": jax.__version__,
        "jaxlib_version": jaxlib.__version__,
        "python_version": platform.python_version(),
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "x64": bool(jax_flag("jax_enable_x64")),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "timestamp": timestamp(),
    }
