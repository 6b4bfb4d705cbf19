"""The worker's JAX backend: the configured device, the clients' start-up, the job's JAX flags, CPU pinning."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import jax
import numpy as np

from jitexp.config import DeviceConfig, ExperimentConfig
from jitexp.errors import ConfigError, device_busy, first_line
from jitexp.worker import diskcache, workload
from jitexp.worker.jaxinfo import jax_flag

PREMAPPED = "TPU_PREMAPPED_BUFFER_SIZE"
BUSY_HINT = (
    "another process held the device when this one opened it (a TPU is held by one process at a time), through "
    "timing.open_retries tries timing.open_wait_s apart: stop that process (a notebook or script that has used the "
    "TPU holds it until it exits; there, jitexp.measure(..., isolate='none') measures in that process), or raise them"
)


class DeviceBusy(RuntimeError):
    """The device is held by another process (JAX's open was refused): the driver tries again."""


def before_open(dc: DeviceConfig) -> None:
    """What must be set before JAX creates its clients: a CPU job opens no accelerator (on a TPU host a plain
    jax.devices() would take the chip from the job that needs it), and a TPU's pinned host buffer is
    device.premapped_buffer_bytes unless the environment says otherwise. Nothing once the clients exist."""
    from jax._src import xla_bridge

    if xla_bridge.backends_are_initialized():
        return
    if dc.platform == "cpu" and not os.environ.get("JAX_PLATFORMS"):
        jax.config.update("jax_platforms", "cpu")
    if dc.platform in ("tpu", "auto") and dc.premapped_buffer_bytes is not None:
        os.environ.setdefault(PREMAPPED, str(dc.premapped_buffer_bytes))


def premapped(device) -> dict:
    """The TPU's pinned host buffer in force (the environment column tpu_premapped_buffer_bytes); {} off a TPU."""
    value = os.environ.get(PREMAPPED, "")
    if device.platform != "tpu":
        return {}
    return {"tpu_premapped_buffer_bytes": int(value) if value.isdigit() else None}


def resolve_device(dc: DeviceConfig):
    """The jax.Device the config names, or a ConfigError listing what this machine has."""
    try:
        # this process's own (a jax.distributed job's other processes' devices are in the mesh, not here)
        devices = jax.local_devices(backend=None if dc.platform == "auto" else dc.platform)
    except RuntimeError:
        raise ConfigError(
            "device.platform",
            dc.platform,
            f"not available on this machine; available: {', '.join(available_platforms())}, auto",
        ) from None
    if dc.index >= len(devices):
        raise ConfigError("device.index", dc.index, f"this machine has {len(devices)} {devices[0].platform} device(s)")
    return devices[dc.index]


def available_platforms() -> list[str]:
    found = []
    for name in ("cpu", "gpu", "tpu"):
        try:
            jax.devices(name)
            found.append(name)
        except RuntimeError:
            pass
    return found


_cpu_async: bool | None = None


def start_backends(cpu_async_dispatch: bool | None) -> bool:
    """Create JAX's clients (once per process) and return the CPU async-dispatch setting they use.

    JAX reads jax_cpu_enable_async_dispatch only when the CPU client is created: a fresh
    worker takes any value; in-process (isolate=none) the first job decides and a later job
    asking for the other value is a config error.
    """
    global _cpu_async
    key = "jax_cpu_enable_async_dispatch"
    if _cpu_async is None:
        if cpu_async_dispatch is not None:
            jax.config.update(key, cpu_async_dispatch)
        try:
            jax.devices()
        except RuntimeError as exc:
            if device_busy(str(exc)):
                raise DeviceBusy(first_line(exc)) from exc
            raise
        _cpu_async = bool(jax_flag(key))
    elif cpu_async_dispatch is not None and cpu_async_dispatch != _cpu_async:
        raise ConfigError(
            "cpu_async_dispatch",
            cpu_async_dispatch,
            f"this process's CPU client was created with {_cpu_async} and keeps it; "
            "use isolate=process (the default) to vary it",
        )
    return _cpu_async


@contextmanager
def jax_settings(cfg: ExperimentConfig, x64: bool = False, cache_dir: str | None = None) -> Iterator[None]:
    """Set the job's JAX flags (x64, the persistent compilation cache at `cache_dir` or off) and restore them after."""
    wanted: dict[str, Any] = {"jax_enable_x64": x64 or workload.needs_x64(cfg)}
    previous = {key: jax_flag(key) for key in (*wanted, *diskcache.CACHE_FLAGS)}
    try:
        for key, value in wanted.items():
            jax.config.update(key, value)
        diskcache.use(cache_dir)
        yield
    finally:
        for key, value in previous.items():
            jax.config.update(key, value)
        diskcache.reset()


_warmed: set = set()


def warm_backend(device) -> None:
    """Pay the process's one-time backend start-up before the first cold measurement.

    Without it the first cold call of a process reports compile times inflated by XLA/LLVM
    initialisation that no later compile (and no user's second compile) ever pays.
    """
    key = (device.platform, device.id)
    if key in _warmed:
        return
    x = jax.device_put(np.linspace(0.0, 1.0, 16, dtype=np.float32).reshape(4, 4), device)
    jax.block_until_ready((jax.jit(lambda v: jax.numpy.sin(v) @ v)(x), jax.numpy.cos(x) + x))
    _warmed.add(key)


def pinning() -> dict:
    """The process's CPU affinity and BLAS thread count (a worker limits both at entry when cpu_affinity is set)."""
    from threadpoolctl import threadpool_info

    affinity = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    blas = [pool["num_threads"] for pool in threadpool_info() if pool.get("user_api") == "blas"]
    return {"cpu_affinity": ",".join(map(str, affinity)), "blas_threads": max(blas) if blas else None}
