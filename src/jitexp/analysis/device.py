"""A row's device columns: device time beside wall time, the shares of the device's measured peaks, where the job's
wall time went (open, compile, the rest), and the one note that says which columns this host or backend cannot
give. Pure: records and rows in, columns out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from jitexp.analysis.ceilings import above_words, ceilings, device_above_wall, nominal
from jitexp.analysis.formatting.values import format_seconds, is_missing, is_positive
from jitexp.noise import MIN_TICKS
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
    """host_overhead_s (the traced call's wall time the device was not busy; wall minus device time for a row
    without device_trace_wall_s), the device's nominal peaks where known (analysis.ceilings) and the shares of the
    ceilings: achieved FLOP/s and bytes/s by wall time (peak_*_share) and by device time (device_peak_*_share), each
    against the nominal peak where known, else the measured probe (*_ceiling says which); above_ceiling says in words
    each share above 1 (a probe passed: in cache on a CPU), which is then no share of a peak."""
    out: dict[str, Any] = dict(peaks)
    median: Any = row.get("median_s")
    device: Any = row.get("device_s")
    wall: Any = row.get("device_trace_wall_s")
    if not is_missing(device):
        base = median if is_missing(wall) else wall
        if not is_missing(base):
            out["host_overhead_s"] = float(base) - float(device)
    out.update(nominal(row.get("device_kind")))
    above = []
    for name, (ceiling, source) in ceilings(row.get("device_kind"), peaks).items():
        amount: Any = row.get("flops" if name == "flops" else "bytes_accessed")
        if not is_positive(amount):
            continue
        out[f"{name}_ceiling"] = source
        shares = []
        if is_positive(median):
            out[f"peak_{name}_share"] = float(amount) / float(median) / ceiling
            shares.append(out[f"peak_{name}_share"])
        if is_positive(device) and not device_above_wall(row):
            out[f"device_peak_{name}_share"] = float(amount) / float(device) / ceiling
            shares.append(out[f"device_peak_{name}_share"])
        if shares and max(shares) > 1:
            above.append(
                f"{'FLOP/s' if name == 'flops' else 'bytes/s'} {above_words(name, source, row.get('platform'))}"
            )
    if above:
        out["above_ceiling"] = "; ".join(above)
    return out


NOISE_UNAVAILABLE = "noise: not available on this host (no per-CPU steal or run-queue accounting in /proc)"
NOISE_TOO_SHORT = (
    f"noise: not measured (the rounds lasted under {MIN_TICKS} of /proc/stat's 10 ms ticks, too few for a share, "
    "which a longer timing than quick gives)"
)


def unavailable(rows: Sequence[Mapping[str, Any]], first: ProcessResult, roofline: bool) -> str:
    """Which columns the job could not fill and why, once for the job ("noise: not available on this host; ..."):
    a blank is then a fact about the host or backend, not a silent NaN. Counters read but over too few ticks (a
    timing=quick job's rounds) are not the host's lack."""
    notes = []
    if (
        first.error is None
        and first.config_error is None
        and all(getattr(first.noise, c, None) is None for c in NOISE_COLUMNS)
    ):
        notes.append(NOISE_TOO_SHORT if first.noise.accounted else NOISE_UNAVAILABLE)
    reasons = {r.get("device_time_error") for r in rows if r.get("mode") in ("jit", "aot") and r.get("status") == "ok"}
    reasons.discard(None)
    above = [r for r in rows if r.get("mode") in ("jit", "aot") and r.get("status") == "ok" and device_above_wall(r)]
    for r in above:
        label = r["mode"] if is_missing(r.get("variant")) else f"{r['variant']}:{r['mode']}"
        reasons.add(
            f"{label}'s busy time ({format_seconds(r['device_s'])}) is above its traced loop's wall time "
            f"({format_seconds(r['device_trace_wall_s'])} a call): the trace's clock and the loop's disagree, so it "
            "is no share of the call and no peak share is given by it"
        )
    if reasons:
        notes.append("device_s: " + "; ".join(sorted(str(r) for r in reasons)))
    if roofline and first.peaks_error:
        notes.append(f"peaks: {first.peaks_error}")
    elif not roofline:
        notes.append("peaks: roofline=false")
    if first.platform == "cpu":
        notes.append("device_peak_bytes: the CPU backend keeps no allocator statistics")
    return "; ".join(notes)
