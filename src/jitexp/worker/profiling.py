"""profile=true's worker: each compiled mode's steady calls under jax.profiler.trace, untimed, its trace files kept and
read into rows (jitexp.analysis.profile). A worker of its own, after the timed ones: the profiler never touches a
timed number."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

import jax

from jitexp.analysis.profile import profile_rows
from jitexp.errors import PhaseError, failure_of
from jitexp.records import ModeResult, Profile, Task
from jitexp.worker import distributed, workload
from jitexp.worker.inputs import Inputs, donor
from jitexp.worker.modes import cold_call

PROFILE_SECONDS = 0.5  # the profiled loop lasts about this long (at least MIN_CALLS calls), after as long a warm-up
MIN_CALLS, MAX_CALLS = 10, 10_000
KEPT = (".trace.json.gz", ".xplane.pb")  # Perfetto / chrome://tracing reads the first, TensorBoard's XProf the second


def profile_calls(task: Task, w: workload.Workload, out: dict[str, ModeResult], inputs: Inputs) -> None:
    """Each mode's cold call and PROFILE_SECONDS of warm-up, then about PROFILE_SECONDS of its steady loop (the timed region's own
    calls) inside jax.profiler.trace, Python tracing off; the trace's rows and files in out[mode].profile."""
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0  # the host's own events (dispatch), not every Python function
    for position, mode in enumerate(task.modes):
        own = w if position == 0 else inputs()
        if position > 0 or not task.fresh:
            jax.clear_caches()
        try:
            c = cold_call(donor(own) if task.cfg.workload.setup is None else own, mode)
            seconds, _ = c.loop(MIN_CALLS)
            calls = int(min(MAX_CALLS, max(MIN_CALLS, PROFILE_SECONDS / max(seconds, 1e-9))))
            c.loop(calls)  # warm: caches, the allocator, thread pools, the carried state, as the timed rounds are
        except PhaseError as exc:
            out[mode] = distributed.dropped(task.cfg, exc, workload.call_of(own))
            continue
        with tempfile.TemporaryDirectory(prefix="jitexp-profile-") as folder:
            try:
                with jax.profiler.trace(folder, profiler_options=options):
                    per_call, _ = c.loop(calls)
            except Exception as exc:  # the steady calls ran in the timed workers: a failure here is the profiler's
                out[mode] = ModeResult(failure_of("execute", exc))
                continue
            files = {p.name: p.read_bytes() for p in Path(folder).rglob("*") if p.name.endswith(KEPT)}
        trace = next((data for name, data in files.items() if name.endswith(".trace.json.gz")), None)
        events, execute_s = profile_rows(json.loads(gzip.decompress(trace)) if trace else {}, calls, per_call * calls)
        out[mode] = ModeResult(profile=Profile(calls, per_call * calls, execute_s, events, files))
