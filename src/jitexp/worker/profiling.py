"""profile=true's worker: each compiled mode's steady calls under jax.profiler.trace, untimed, its trace files kept and
read into rows (jitexp.analysis.profile). A worker of its own, after the timed ones: the profiler never touches a
timed number. And device_time: process 0's short trace of each compiled mode after its timed rounds (device_s)."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path
from typing import Any

import jax

from jitexp.analysis.profile import LOOP_MARK, device_busy, profile_rows
from jitexp.errors import PhaseError, failure_of, first_line
from jitexp.records import ModeResult, Profile, Task
from jitexp.worker import distributed, workload
from jitexp.worker.inputs import Handed, Inputs, donor
from jitexp.worker.modes import cold_call
from jitexp.worker.timing import Loop

PROFILE_SECONDS = 0.5  # the profiled loop lasts about this long (at least MIN_CALLS calls), after as long a warm-up
MIN_CALLS, MAX_CALLS = 10, 10_000
PROFILE_EVENTS = 200_000  # and at most about this many trace events (within_events)
KEPT = (".trace.json.gz", ".xplane.pb")  # Perfetto / chrome://tracing reads the first, TensorBoard's XProf the second


def profile_calls(task: Task, handed: Handed, out: dict[str, ModeResult], inputs: Inputs) -> None:
    """Each mode's cold call and PROFILE_SECONDS of warm-up, then about PROFILE_SECONDS of its steady loop (the timed
    region's own calls; fewer where over PROFILE_EVENTS events) inside jax.profiler.trace, Python tracing off; the
    trace's rows and files in out[mode].profile."""
    w = handed.take()
    for position, mode in enumerate(task.modes):
        own = w if position == 0 else inputs()
        if position > 0 or not task.fresh:
            jax.clear_caches()
        try:
            c = cold_call(donor(own) if inputs.shares else own, mode, keep_output=False)
            seconds, _ = c.loop(MIN_CALLS)
            calls = int(min(MAX_CALLS, max(MIN_CALLS, PROFILE_SECONDS / max(seconds, 1e-9))))
            c.loop(calls)  # warm: caches, the allocator, thread pools, the carried state, as the timed rounds are
        except PhaseError as exc:
            out[mode] = distributed.dropped(task.cfg, exc, workload.call_of(own))
            continue
        try:
            calls = within_events(c.loop, calls)
            per_call, trace, files = traced(c.loop, calls, KEPT)
        except Exception as exc:  # the steady calls ran in the timed workers: a failure here is the profiler's
            out[mode] = ModeResult(failure_of("execute", exc))
            continue
        events, execute_s = profile_rows(trace, calls, per_call * calls)
        out[mode] = ModeResult(profile=Profile(calls, per_call * calls, execute_s, events, files))


def traced(loop: Loop, calls: int, kept: tuple[str, ...] = (), warm: int = 0) -> tuple[float, dict, dict[str, bytes]]:
    """`loop(calls)` under jax.profiler.trace with Python tracing off (the host's own events, dispatch, not every
    Python function): (seconds per call with the profiler on, the trace's JSON, the files whose names end in
    `kept`). The loop runs inside one LOOP_MARK annotation: its span in the trace is the traced calls' window; `warm`
    calls run before it under the profiler, outside the mark (the first traced call pays the profiler's start)."""
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    with tempfile.TemporaryDirectory(prefix="jitexp-profile-") as folder:
        with jax.profiler.trace(folder, profiler_options=options):
            if warm:
                loop(warm)
            with jax.profiler.TraceAnnotation(LOOP_MARK):
                per_call, _ = loop(calls)
        found = {p.name: p.read_bytes() for p in Path(folder).rglob("*") if p.name.endswith((".trace.json.gz", *kept))}
    raw = next((data for name, data in found.items() if name.endswith(".trace.json.gz")), None)
    trace = json.loads(gzip.decompress(raw)) if raw else {}
    return per_call, trace, {name: data for name, data in found.items() if name.endswith(kept)}


def within_events(loop: Loop, calls: int, budget: int = PROFILE_EVENTS, fewest: int = MIN_CALLS) -> int:
    """`calls`, or fewer (not under `fewest`) where that many would put more than `budget` events in the trace, as
    counted in a trace of one call (a few ms): the export keeps the first 1,000,000 events only, and writing and
    reading that many took ~20 s (a scan of 128 steps, 1,000 calls)."""
    if calls <= fewest:
        return calls
    _, trace, _ = traced(loop, 1)
    return max(fewest, min(calls, int(budget / max(len(trace.get("traceEvents", [])), 1))))


def device_time(loop: Loop, per_call_s: float) -> dict[str, Any]:
    """Extras' device_s: the device's busy time per call of a warm steady loop (the union of its op intervals within
    the traced calls, jitexp.analysis.profile.device_busy), from a trace of about DEVICE_SECONDS of it after the timed
    rounds (fewer calls where that would be over DEVICE_EVENTS events), and device_trace_wall_s, that traced loop's
    own wall time per call; device_time_error says why device_s is empty."""
    calls = int(min(DEVICE_MAX_CALLS, max(DEVICE_MIN_CALLS, DEVICE_SECONDS / max(per_call_s, 1e-9))))
    try:
        calls = within_events(loop, calls, DEVICE_EVENTS, DEVICE_MIN_CALLS)
        per_call, trace, _ = traced(loop, calls, warm=DEVICE_MIN_CALLS)
    except Exception as exc:
        return {"device_time_error": f"the profiler failed: {type(exc).__name__}: {first_line(exc)}"}
    busy_s, _ = device_busy(trace, calls)
    if busy_s is None:
        return {"device_time_calls": calls, "device_trace_wall_s": per_call, "device_time_error": NO_EXECUTION}
    return {"device_s": busy_s, "device_trace_wall_s": per_call, "device_time_calls": calls}


DEVICE_SECONDS = 0.1  # device_time traces about this long a loop (at least DEVICE_MIN_CALLS calls)
DEVICE_MIN_CALLS, DEVICE_MAX_CALLS = 5, 1000
DEVICE_EVENTS = 50_000  # and at most about this many trace events (within_events)
NO_EXECUTION = "the program ran inline on the calling thread (a small CPU program): the trace has no device events"
