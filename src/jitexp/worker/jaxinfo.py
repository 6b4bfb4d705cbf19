"""What JAX itself says, read in a worker: the flags in force and the environment columns (versions, host, x64).

The driver never imports JAX (the import contract in pyproject.toml): everything here runs where JAX already
runs, in the worker or in jitexp.measure's caller.
"""

from __future__ import annotations

import os
import platform
import socket

from jitexp.machine import cpu_model, timestamp


def jax_flag(name: str):
    """The value in force of a jax.config flag (JAX reads some as attributes, others via read())."""
    import jax

    try:
        return getattr(jax.config, name)
    except AttributeError:
        return jax.config.read(name)


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
