"""A profile's trace as rows (issue 25): thread kinds, outermost events per thread, the execution time per call, shares.
A hand-made trace in the form jax.profiler.trace writes (tests/e2e/test_profile.py profiles real calls)."""

from __future__ import annotations

import pytest

from jitexp.analysis.profile import profile_rows, thread_kind


def meta(pid, tid, name):
    return {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": name}}


def event(tid, name, ts, dur, pid=1):
    return {"ph": "X", "pid": pid, "tid": tid, "name": name, "ts": ts, "dur": dur}


TRACE = {
    "traceEvents": [
        {"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/host:CPU"}},
        meta(1, 10, "python"),
        meta(1, 20, "tf_XLAPjRtCpuClient/123"),
        meta(1, 30, "tf_XLAEigen/456"),
        # two calls of 1000 us each (wall 2000 us): on the client thread a fusion and a nested wait per call
        *[event(20, "fusion", t, 600) for t in (0, 1000)],
        *[event(20, "wait", t + 600, 300) for t in (0, 1000)],
        *[event(20, "inner", t + 650, 100) for t in (0, 1000)],  # inside "wait": not outermost, not added again
        *[event(30, "fusion", t + 100, 400) for t in (0, 1000)],  # an intra-op worker, concurrent: not execution
        *[event(10, "PjitFunction(f)", t, 50) for t in (0, 1000)],
        {"ph": "i", "pid": 1, "tid": 10, "name": "marker", "ts": 5},  # not a complete event: ignored
    ]
}


def test_rows_per_thread_kind_and_event_with_outermost_and_the_execution_per_call():
    rows, execute_s = profile_rows(TRACE, calls=2, wall_s=0.002)
    by = {(r["thread"], r["event"]): r for r in rows}
    assert set(by) == {
        ("execute", "fusion"),
        ("execute", "wait"),
        ("execute", "inner"),
        ("intra-op", "fusion"),
        ("host", "PjitFunction(f)"),
    }
    assert execute_s == pytest.approx((600 + 300) / 1e6)  # outermost on the client thread, per call
    fusion = by[("execute", "fusion")]
    assert (fusion["count"], fusion["per_call"], fusion["outermost"]) == (2, 1.0, True)
    assert fusion["mean_s"] == pytest.approx(600e-6) and fusion["share"] == pytest.approx(0.6)
    assert by[("execute", "inner")]["outermost"] is False and by[("execute", "wait")]["outermost"] is True
    assert [r["event"] for r in rows][:2] == ["fusion", "fusion"]  # the largest totals first (execute, intra-op)


def test_devices_that_run_at_once_count_their_time_once():
    # two CPU devices, each with its client thread: the same 600 us at once, then one alone for 200 us more
    two = {
        "traceEvents": [
            meta(1, 20, "tf_XLAPjRtCpuClient/1"),
            meta(1, 21, "tf_XLAPjRtCpuClient/2"),
            event(20, "fusion", 0, 600),
            event(21, "fusion", 0, 800),
        ]
    }
    rows, execute_s = profile_rows(two, calls=1, wall_s=0.001)
    assert execute_s == pytest.approx(800e-6)  # the union, not 1400 us
    assert rows[0]["count"] == 2 and rows[0]["total_s"] == pytest.approx(1400e-6)  # the event's own sum stays


def test_a_trace_without_an_execution_thread_has_no_execution_time():
    rows, execute_s = profile_rows({"traceEvents": [meta(1, 10, "python"), event(10, "x", 0, 5)]}, 1, 1e-5)
    assert execute_s is None and [r["thread"] for r in rows] == ["host"]
    assert profile_rows({}, 1, 1.0) == ([], None)


@pytest.mark.parametrize(
    "process, thread, kind",
    [
        ("/device:GPU:0", "Stream #13", "device"),
        ("/host:CPU", "tf_XLAPjRtCpuClient/1", "execute"),
        ("/host:CPU", "python", "host"),
        ("/host:CPU", "tf_XLAEigen/2", "intra-op"),
        ("/host:CPU", "something", "other"),
    ],
)
def test_thread_kinds(process, thread, kind):
    assert thread_kind(process, thread) == kind
