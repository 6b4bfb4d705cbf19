"""How much memory a worker's job took: host peak RSS growth (Linux), device peak bytes (GPU allocators)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _status(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    return None


def reset_peak_rss() -> int | None:
    """Reset the process's peak RSS mark to its current RSS and return that RSS in bytes (None off Linux)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")  # 5: reset the peak RSS (VmHWM), Linux >= 4.0
    except OSError:
        return None
    return _status("VmRSS")


def growth(rss_before: int | None, device: Any) -> tuple[int | None, int | None]:
    """(peak_rss_growth_bytes since reset_peak_rss, device_peak_bytes where the device reports it); None where unknown."""
    peak = _status("VmHWM")
    rss_growth = max(peak - rss_before, 0) if rss_before is not None and peak is not None else None
    try:
        stats = device.memory_stats() if device.platform != "cpu" else None
    except Exception:  # backends without allocator statistics
        stats = None
    device_peak = int(stats["peak_bytes_in_use"]) if stats and "peak_bytes_in_use" in stats else None
    return rss_growth, device_peak
