"""The ceilings a row's achieved FLOP/s and bytes/s are shares of: the device's nominal peak where it is known (a
small table by device kind, from the vendor's published figures), else the device's measured probe (the matmul and
copy probes of jitexp.worker.peaks). A nominal peak is a ceiling no row can pass; a probe is not: a row can beat
the probe's matmul, and on a CPU a row whose data stays in cache beats the copy probe, which streams 32 MiB through
main memory and so measures the memory bandwidth. A share above 1 is therefore said in words (`above_ceiling`),
never printed as a percentage of a peak. Pure: a row and the measured peaks in, columns out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# device_kind -> (FLOP/s, bytes/s) per chip: the bf16 matrix peak (a ceiling for every float dtype: f32 matmuls on
# a TPU run on the same MXUs, at default precision in one bf16 pass, at higher precision in several) and the HBM
# bandwidth, from Google Cloud's TPU pages (docs.cloud.google.com/tpu/docs/v4, v5e, v5p, v6e). jax names a chip
# either way ("TPU v5 lite" on the v5e machines this project ran on).
NOMINAL: dict[str, tuple[float, float]] = {
    "TPU v4": (275e12, 1200e9),
    "TPU v5 lite": (197e12, 819e9),
    "TPU v5e": (197e12, 819e9),
    "TPU v5": (459e12, 2765e9),
    "TPU v5p": (459e12, 2765e9),
    "TPU v6 lite": (918e12, 1638e9),
    "TPU v6e": (918e12, 1638e9),
}
RESOURCES = (("flops", "peak_flops_per_s", "nominal_flops_per_s"), ("bytes", "peak_bytes_per_s", "nominal_bytes_per_s"))
PROBE_WORDS = {"flops": "the matmul probe", "bytes": "the copy probe"}


def nominal(device_kind: Any) -> dict[str, float]:
    """nominal_flops_per_s and nominal_bytes_per_s of a device kind NOMINAL knows, else nothing."""
    known = NOMINAL.get(str(device_kind).strip()) if isinstance(device_kind, str) else None
    if known is None:
        return {}
    return {"nominal_flops_per_s": known[0], "nominal_bytes_per_s": known[1]}


def ceilings(device_kind: Any, peaks: Mapping[str, float]) -> dict[str, tuple[float, str]]:
    """Per resource (flops, bytes) the ceiling a share is of and what it is (`nominal` or `probe`): the nominal peak
    where known, else the measured probe; a resource with neither is left out."""
    known = nominal(device_kind)
    out: dict[str, tuple[float, str]] = {}
    for name, probe_key, nominal_key in RESOURCES:
        if nominal_key in known:
            out[name] = (known[nominal_key], "nominal")
        elif _positive(peaks.get(probe_key)):
            out[name] = (float(peaks[probe_key]), "probe")
    return out


def above_words(name: str, source: str, platform: Any) -> str:
    """What a share above 1 of this ceiling means, in words (the `above_ceiling` column and the answer line)."""
    if source == "probe" and name == "bytes" and platform == "cpu":
        return "in cache, above the memory ceiling"
    if source == "probe":
        return f"above {PROBE_WORDS[name]}"
    return "above the nominal peak (the cost analysis counts more than the device did)"


def ceiling_label(name: str, source: str, platform: Any) -> str:
    """The words a share below 1 is of: `peak FLOP/s`, `peak bytes/s` (nominal), `the matmul probe`, `memory
    bandwidth` (a CPU's copy probe), `the copy probe`."""
    if source == "nominal":
        return "peak FLOP/s" if name == "flops" else "peak bytes/s"
    if name == "bytes" and platform == "cpu":
        return "memory bandwidth"
    return PROBE_WORDS[name]


TRACE_TOLERANCE = 0.01  # device_s may pass its traced wall time by this share (the trace's clock against the loop's)


def device_above_wall(row: Mapping[str, Any]) -> bool:
    """device_s above the traced loop's own wall time per call (device_trace_wall_s) by more than TRACE_TOLERANCE:
    a busy time that cannot be the chip's, and no share of a ceiling is taken from it."""
    device: Any = row.get("device_s")
    wall: Any = row.get("device_trace_wall_s")
    return _positive(device) and _positive(wall) and float(device) > float(wall) * (1 + TRACE_TOLERANCE)


def _positive(value: Any) -> bool:
    """A number above zero (None, NaN, text and zero are not)."""
    try:
        return float(value) > 0
    except (TypeError, ValueError):
        return False
