"""samples.csv, processes.csv and calls.csv rows of a job: every sample, every process's cold call and median,
every probe's calls."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from jitexp.analysis.instability import process_noise
from jitexp.records import COMPILE_PHASES_COUNTED, ProcessResult

KEY_COLUMNS = ("job_num", "workload", "size")  # what samples/processes/calls rows repeat of their job


def long_rows(rows: list[dict], results: list[ProcessResult]) -> tuple[list[dict], list[dict], list[dict]]:
    """samples.csv, processes.csv and calls.csv rows."""
    key = {k: rows[0][k] for k in KEY_COLUMNS}
    samples: list[dict] = []
    procs: list[dict] = []
    calls: list[dict] = []
    for r in results:
        for mode, m in r.modes.items():
            ident = {**key, "mode": mode, "process": r.process}
            s = m.samples_s
            if m.cold is not None or s is not None:
                procs.append(
                    {
                        **ident,
                        "cold_position": m.cold_position,
                        **(vars(m.cold) if m.cold is not None else {}),
                        "rounds": len(s) if s is not None else 0,
                        "number": m.number,
                        "median_s": float(np.median(s)) if s is not None and len(s) else math.nan,
                        "compiles_during_timing": m.compiles_during_timing,
                        "stop_reason": m.stop_reason,
                        "device_open_s": r.device_open_s,
                        "peak_rss_growth_bytes": r.peak_rss_growth_bytes,  # the process's, on each of its modes
                        "device_peak_bytes": r.device_peak_bytes,
                        **process_noise(r),
                        **process_phases(r),
                    }
                )
            steal = r.noise.round_steal
            for i, value in enumerate(s if s is not None else ()):
                samples.append(
                    {
                        **ident,
                        "round": i,
                        "number": m.number,
                        "per_call_s": float(value),
                        "steal": steal[i] if i < len(steal) else None,
                    }
                )
            calls.extend({**key, "mode": mode, "probe": "cold", **c} for c in m.calls)
    return samples, procs, calls


def process_phases(r: ProcessResult) -> dict[str, Any]:
    """processes.csv's account of one process's wall time: phase_<name>_s (records.PHASES), the XLA compiles in its
    first calls, warm-up and sampling, and its hits and misses in the job's compilation cache."""
    if not r.phases:
        return {}
    return {
        "process_wall_s": r.wall_s,
        **{f"phase_{name}_s": seconds for name, seconds in r.phase_seconds().items()},
        **{f"compiles_in_{name}": r.phase_compiles.get(name, 0) for name in COMPILE_PHASES_COUNTED},
        "cache_hits": r.cache_hits,
        "cache_misses": r.cache_misses,
    }


def variant_long_rows(rows: list[dict], results: list[ProcessResult]) -> tuple[list[dict], list[dict], list[dict]]:
    """long_rows of each variant (its own rows and measurements), every record with its `variant`."""
    samples: list[dict] = []
    procs: list[dict] = []
    calls: list[dict] = []
    for name in dict.fromkeys(row["variant"] for row in rows):
        mine = long_rows([row for row in rows if row["variant"] == name], [r.of_variant(name) for r in results])
        for into, records in zip((samples, procs, calls), mine):
            into.extend({**record, "variant": name} for record in records)
    return samples, procs, calls


def sequence_rows(results: Mapping[str, ProcessResult], key: dict) -> list[dict]:
    """calls.csv rows of the retrace probe: each mode's calls, or one error record when its worker failed."""
    out: list[dict] = []
    for mode, result in results.items():
        failed: dict[str, Any] = {}
        if result.error is not None:
            failed = result.error.as_row()
        elif result.config_error is not None:
            failed = {"status": "error", "error_phase": "config"}
        m = result.modes.get(mode)
        records = (m.calls if m is not None else None) or [{"call": 1, **failed}]
        out.extend({**key, "mode": mode, "probe": "sequence", **r} for r in records)
    return out
