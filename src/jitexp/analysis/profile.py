"""A profiled run's trace as rows: per thread kind and event name, how often, how long, what share of a call.

The trace is the Chrome/Perfetto trace JSON that `jax.profiler.trace` writes (`<host>.trace.json.gz`): `ph: "X"`
complete events with `ts` and `dur` in microseconds, named threads and processes (`ph: "M"`). Pure: a dict in, rows
out (the worker profiles, jitexp.worker.measure.profile_calls).

Nesting: an event is *outermost* when no earlier event on its own thread is still open when it starts. The
execution time of a call is the time covered by the outermost events on the threads that run the compiled program
(XLA's PjRt client threads on a CPU, one per device; the device's streams on a GPU), as a union over those threads
(several devices run at once: their time is not added up), divided by the calls profiled. Work that XLA spreads
over its intra-op threads runs inside those events, so it is not added again. A program small enough to run inline
on the Python thread has no execution events: its execution time is None.

Device time (device_busy, the row's device_s) is the device's busy time instead: the union of the op intervals on
every thread that runs the program's work (the CPU client's threads and XLA's intra-op threads; a device's op lines,
its copies included, but not its Steps or XLA Modules lines, which span the gaps between ops), each counted once
however many threads or lines show it, clipped to the traced loop (the LOOP_MARK annotation the worker puts around
it, jitexp.worker.profiling.traced) and divided by the calls. Clipped so, it cannot exceed the loop it is part of.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

LOOP_MARK = "jitexp-traced-loop"  # the host annotation around the traced loop: its span is the traced calls' window
EXECUTION = ("execute", "device")  # the thread kinds whose outermost events are the program's execution
PROFILE_EVENT_COLUMNS = [
    "thread",
    "event",
    "count",
    "per_call",
    "total_s",
    "mean_s",
    "per_call_s",
    "share",
    "outermost",
]


def thread_kind(process: str, thread: str) -> str:
    """`device` (a device's streams), `execute` (XLA's client thread that runs the program on a CPU), `host` (the
    Python thread: dispatch), `intra-op` (XLA's worker threads) or `other`."""
    if process.startswith("/device:"):
        return "device"
    if "PjRt" in thread and "Client" in thread:
        return "execute"
    if thread.startswith("python"):
        return "host"
    if "Eigen" in thread or "ThreadPool" in thread or thread.startswith("tf_XLA"):
        return "intra-op"
    return "other"


def profile_rows(trace: Mapping[str, Any], calls: int, wall_s: float) -> tuple[list[dict], float | None]:
    """(rows, execution seconds per call): one row per thread kind and event name, the largest total first, and
    the outermost execution events' time per call (None when the trace has no execution thread)."""
    events = [e for e in trace.get("traceEvents", []) if isinstance(e, dict)]
    processes = {
        e.get("pid"): e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
    }
    threads = {
        (e.get("pid"), e.get("tid")): e["args"]["name"]
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name"
    }
    by_thread: dict[tuple, list[dict]] = defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and isinstance(e.get("dur"), (int, float)) and e.get("name") != LOOP_MARK:
            by_thread[(e.get("pid"), e.get("tid"))].append(e)
    stats: dict[tuple[str, str], dict] = {}
    executing: list[tuple[float, float]] = []  # outermost intervals on the execution threads
    seen_execution = False
    for key, mine in by_thread.items():
        kind = thread_kind(str(processes.get(key[0], "")), str(threads.get(key, "")))
        seen_execution = seen_execution or kind in EXECUTION
        open_until = float("-inf")
        for e in sorted(mine, key=lambda e: (e.get("ts", 0.0), -e["dur"])):
            start, dur = float(e.get("ts", 0.0)), float(e["dur"])
            outermost = start >= open_until
            if outermost:
                open_until = start + dur
                if kind in EXECUTION:
                    executing.append((start, start + dur))
            s = stats.setdefault((kind, str(e.get("name"))), {"count": 0, "total_us": 0.0, "outermost": True})
            s["count"] += 1
            s["total_us"] += dur
            s["outermost"] = s["outermost"] and outermost
    step = wall_s / calls if calls else float("nan")
    rows = [
        {
            "thread": kind,
            "event": name,
            "count": s["count"],
            "per_call": s["count"] / calls,
            "total_s": s["total_us"] / 1e6,
            "mean_s": s["total_us"] / 1e6 / s["count"],
            "per_call_s": s["total_us"] / 1e6 / calls,
            "share": s["total_us"] / 1e6 / calls / step if step > 0 else float("nan"),
            "outermost": s["outermost"],
        }
        for (kind, name), s in stats.items()
    ]
    rows.sort(key=lambda r: -r["total_s"])
    return rows, (_covered_us(executing) / 1e6 / calls if seen_execution and calls else None)


def _covered_us(intervals: list[tuple[float, float]]) -> float:
    """The length of the union of the intervals (overlapping ones counted once)."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(intervals):
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total


BUSY = ("execute", "intra-op", "device")  # the thread kinds whose events are the program's work (device_busy)
NOT_OPS = ("Steps", "XLA Modules")  # a device's lines that span several ops and the gaps between them
OP_LINES = "XLA Ops"  # a device's op lines (XLA Ops, Async XLA Ops): where a device has them, its only busy lines


def device_busy(trace: Mapping[str, Any], calls: int) -> tuple[float | None, float | None]:
    """(the device's busy seconds per call, the traced loop's seconds per call on the trace's clock): the union of
    the op intervals on the program's threads (BUSY kinds; on a device with OP_LINES only those, else every line but
    NOT_OPS) within the LOOP_MARK window, over the calls. Busy time is None when no such thread is in the trace (a
    small CPU program runs inline on the Python thread); the window is None without the mark (then nothing is
    clipped)."""
    if calls <= 0:
        return None, None
    events = [e for e in trace.get("traceEvents", []) if isinstance(e, dict)]
    processes = {
        e.get("pid"): str(e["args"]["name"]) for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
    }
    threads = {
        (e.get("pid"), e.get("tid")): str(e["args"]["name"])
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name"
    }
    complete = [e for e in events if e.get("ph") == "X" and isinstance(e.get("dur"), (int, float))]
    marks = [
        (float(e.get("ts", 0.0)), float(e.get("ts", 0.0)) + float(e["dur"]))
        for e in complete
        if e.get("name") == LOOP_MARK
    ]
    low = min((m[0] for m in marks), default=float("-inf"))
    high = max((m[1] for m in marks), default=float("inf"))
    with_ops = {key[0] for key, name in threads.items() if OP_LINES in name}

    def busy(key: tuple) -> bool:
        name = threads.get(key, "")
        kind = thread_kind(processes.get(key[0], ""), name)
        if kind != "device":
            return kind in BUSY
        return OP_LINES in name if key[0] in with_ops else name not in NOT_OPS

    window = (high - low) / 1e6 / calls if marks else None
    ops = [
        (float(e.get("ts", 0.0)), float(e.get("ts", 0.0)) + float(e["dur"]))
        for e in complete
        if e["dur"] > 0 and busy((e.get("pid"), e.get("tid")))
    ]
    if not ops:
        return None, window
    clipped = [(max(start, low), min(stop, high)) for start, stop in ops]
    return _covered_us([(a, b) for a, b in clipped if b > a]) / 1e6 / calls, window
