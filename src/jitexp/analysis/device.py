"""A row's device columns: device time beside wall time, the shares of the device's measured peaks, where the job's
wall time went (open, compile, the rest), and the one note that says which columns this host or backend cannot
give. Pure: records and rows in, columns out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jitexp.analysis.formatting import is_missing, is_positive
from jitexp.records import COLD_PHASES, NOISE_COLUMNS, JobRaw, ProcessResult

COMPILE_PHASES = tuple(p for p in COLD_PHASES if p != "execute_s")  # trace, lower, compile


# The job line's split: each job-level part and the process phases (records.PHASES) it sums, in the line's words.
JOB_PARTS: dict[str, tuple[str, ...]] = {
    "start": ("start",),
    "open": ("open",),
    "setup": ("warm_backend", "host_probe", "setup", "memory"),
    "first_calls": ("first_call",),
    "checks": ("attribution", "op_dispatch_probe", "cost_analysis", "check", "dispatch_probe"),
    "warmup": ("warmup",),
    "sampling": ("sampling",),
    "device_time": ("device_time",),
    "peaks": ("peaks",),
    "exit": ("transfer", "exit"),
    "unnamed": ("other",),
}
PROBE_PARTS = ("cache_probe", "retrace_probe", "profile_probe")
JOB_PART_COLUMNS = tuple(f"job_{name}_s" for name in (*JOB_PARTS, *PROBE_PARTS, "driver") if name != "open")


def job_split(raw: JobRaw) -> dict[str, Any]:
    """job_wall_s and where it went: job_<part>_s summed over the job's processes (JOB_PARTS), each probe worker's
    wall time, and the driver's own (its statistics between processes, forking the server, the rows); job_open_s
    (opening the device) and job_compile_s (trace, lower and compile of every cold first call) as before."""
    if raw.wall_s is None:
        return {}
    every = [*raw.processes, *raw.replaced]
    opened = [p.device_open_s for p in every if p.device_open_s is not None]
    compiled = [
        getattr(m.cold, phase)
        for p in every
        for modes in [p.modes, *p.variants.values()]
        for m in modes.values()
        if m.cold is not None
        for phase in COMPILE_PHASES
    ]
    out: dict[str, Any] = {
        "job_wall_s": raw.wall_s,
        "job_open_s": sum(opened) if opened else None,
        "job_compile_s": sum(compiled),
        "prepared_processes": raw.prepared,
    }
    timed = [p for p in every if p.phases]
    if not timed:
        return out
    seconds = [p.phase_seconds() for p in timed]
    for part, phases in JOB_PARTS.items():
        out[f"job_{part}_s"] = sum(s[name] for s in seconds for name in phases)
    for probe in PROBE_PARTS:
        out[f"job_{probe}_s"] = raw.probes.get(probe, 0.0)
    named = out["job_open_s"] + sum(out[c] for c in JOB_PART_COLUMNS[:-1])
    out["job_driver_s"] = max(raw.wall_s - named, 0.0)
    return out


def device_columns(row: Mapping[str, Any], peaks: Mapping[str, float]) -> dict[str, Any]:
    """host_overhead_s (wall minus device time per call) and the shares of peak: achieved FLOP/s and bytes/s by
    wall time (peak_*_share) and by device time (device_peak_*_share), each against the device's measured peak."""
    out: dict[str, Any] = dict(peaks)
    median: Any = row.get("median_s")
    device: Any = row.get("device_s")
    if not is_missing(median) and not is_missing(device):
        out["host_overhead_s"] = float(median) - float(device)
    for work, peak_key, name in (
        ("flops", "peak_flops_per_s", "flops"),
        ("bytes_accessed", "peak_bytes_per_s", "bytes"),
    ):
        amount: Any = row.get(work)
        peak: Any = peaks.get(peak_key)
        if not (is_positive(amount) and is_positive(peak)):
            continue
        if is_positive(median):
            out[f"peak_{name}_share"] = float(amount) / float(median) / float(peak)
        if is_positive(device):
            out[f"device_peak_{name}_share"] = float(amount) / float(device) / float(peak)
    return out


def unavailable(rows: Sequence[Mapping[str, Any]], first: ProcessResult, roofline: bool) -> str:
    """Which columns the job could not fill and why, once for the job ("noise: not available on this host; ..."):
    a blank is then a fact about the host or backend, not a silent NaN."""
    notes = []
    if (
        first.error is None
        and first.config_error is None
        and all(getattr(first.noise, c, None) is None for c in NOISE_COLUMNS)
    ):
        notes.append("noise: not available on this host (no per-CPU steal or run-queue accounting in /proc)")
    reasons = {r.get("device_time_error") for r in rows if r.get("mode") in ("jit", "aot") and r.get("status") == "ok"}
    reasons.discard(None)
    if reasons:
        notes.append("device_s: " + "; ".join(sorted(str(r) for r in reasons)))
    if roofline and first.peaks_error:
        notes.append(f"peaks: {first.peaks_error}")
    elif not roofline:
        notes.append("peaks: roofline=false")
    if first.platform == "cpu":
        notes.append("device_peak_bytes: the CPU backend keeps no allocator statistics")
    return "; ".join(notes)
