"""A profile's trace as rows (issue 25): thread kinds, outermost events per thread, the execution time per call, shares.
A hand-made trace in the form jax.profiler.trace writes (tests/e2e/test_profile.py profiles real calls)."""

from __future__ import annotations

import pytest

from jitexp.analysis.profile import LOOP_MARK, device_busy, profile_rows, thread_kind


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
    assert profile_rows({}, 0, 0.0) == ([], None)  # no calls either


@pytest.mark.parametrize(
    "process, thread, kind",
    [
        ("/device:GPU:0", "Stream #13", "device"),
        ("/host:CPU", "tf_XLAPjRtCpuClient/1", "execute"),
        ("/host:CPU", "python", "host"),
        ("/host:CPU", "tf_XLAEigen/2", "intra-op"),
        ("/host:CPU", "something", "other"),
        ("/device:TPU:0", "python", "device"),  # the process decides first
        ("/host:/device:GPU:0", "Stream #13", "other"),
        ("", "PjRtClient", "execute"),
        ("", "python PjRtClient", "execute"),
        ("", "tf_XLAPjRtCpu", "intra-op"),
        ("", "PjRt", "other"),
        ("", "Client", "other"),
        ("", "python3 main", "host"),
        ("", "main python", "other"),
        ("", "python Eigen", "host"),
        ("", "work Eigen", "intra-op"),
        ("", "XLA ThreadPool/3", "intra-op"),
        ("", "tf_XLA", "intra-op"),
        ("", "my tf_XLA", "other"),
        ("", "Threadpool", "other"),
    ],
)
def test_thread_kinds(process, thread, kind):
    assert thread_kind(process, thread) == kind


def exact(value):
    return pytest.approx(value, rel=1e-12)


def test_each_rows_figures():
    trace = {
        "traceEvents": [
            meta(1, 20, "tf_XLAPjRtCpuClient/1"),
            event(20, "fusion", 0, 300),
            event(20, "fusion", 1000, 500),
            event(20, "copy", 2000, 100),
        ]
    }
    rows, execute_s = profile_rows(trace, calls=4, wall_s=0.01)
    assert rows[0] == {
        "thread": "execute",
        "event": "fusion",
        "count": 2,
        "per_call": 0.5,
        "total_s": exact(800e-6),
        "mean_s": exact(400e-6),
        "per_call_s": exact(200e-6),
        "share": exact(0.08),  # 200 us of a 2.5 ms call
        "outermost": True,
    }
    assert rows[1]["event"] == "copy" and rows[1]["total_s"] == exact(100e-6)
    assert execute_s == exact(225e-6)  # 900 us over 4 calls
    assert [r["share"] for r in profile_rows(trace, calls=4, wall_s=0.0)[0]] == [
        pytest.approx(float("nan"), nan_ok=True)
    ] * 2


def test_an_event_is_outermost_when_nothing_on_its_thread_is_open_as_it_starts():
    trace = {
        "traceEvents": [
            meta(1, 20, "tf_XLAPjRtCpuClient/1"),
            event(20, "inner", 0, 100),  # starts with "outer" but ends first: inside it, whatever the order listed
            event(20, "outer", 0, 400),
            event(20, "next", 400, 100),  # starts as "outer" ends
            event(20, "late", 450, 100),  # starts inside "next", ends after it
            {"ph": "X", "pid": 1, "tid": 20, "name": "first", "dur": 50},  # no ts: at 0, inside "outer"
        ]
    }
    rows, execute_s = profile_rows(trace, calls=1, wall_s=1e-3)
    outermost = {r["event"]: r["outermost"] for r in rows}
    assert outermost == {"inner": False, "outer": True, "next": True, "late": False, "first": False}
    assert execute_s == exact(500e-6)
    untimed = {"ph": "X", "pid": 1, "tid": 20, "name": "whole", "dur": 500}  # at 0, and longer than "part"
    rows, _ = profile_rows(
        {"traceEvents": [event(20, "part", 0, 400), untimed, event(20, "after", 500, 100)]}, calls=1, wall_s=1e-3
    )
    assert {r["event"]: r["outermost"] for r in rows} == {"whole": True, "part": False, "after": True}


def test_an_event_name_is_outermost_only_when_every_one_of_its_events_is():
    trace = {
        "traceEvents": [
            meta(1, 20, "tf_XLAPjRtCpuClient/1"),
            event(20, "wait", 0, 100),
            event(20, "run", 200, 100),
            event(20, "wait", 250, 10),
        ]
    }
    assert {r["event"]: r["outermost"] for r in profile_rows(trace, 1, 1e-3)[0]} == {"wait": False, "run": True}


def test_only_complete_events_with_a_duration_count_and_metadata_needs_its_own_name():
    trace = {
        "traceEvents": [
            "not an event",
            {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/device:GPU:0"}},
            {"ph": "M", "pid": 2, "name": "process_sort_index", "args": {"sort_index": 1}},
            {"ph": "M", "pid": 2, "tid": 7, "name": "thread_sort_index", "args": {"sort_index": 1}},
            {"ph": "X", "pid": 2, "tid": 7, "name": "thread_name", "ts": 0, "dur": 10, "args": {"name": "python"}},
            {"ph": "X", "pid": 2, "tid": 7, "name": "kernel", "ts": 20, "dur": "30"},
            {"ph": "X", "pid": 2, "tid": 7, "name": "kernel", "ts": 20},
            {"ph": "B", "pid": 2, "tid": 7, "name": "kernel", "ts": 20, "dur": 30},
            {"ph": "X", "pid": 2, "tid": 7, "ts": 40, "dur": 2.5},
        ]
    }
    rows, execute_s = profile_rows(trace, 1, 1e-3)
    assert [(r["thread"], r["event"], r["count"]) for r in rows] == [
        ("device", "thread_name", 1),
        ("device", "None", 1),
    ]
    assert execute_s == exact(12.5e-6)


def test_threads_are_told_apart_by_process_and_thread_id():
    trace = {
        "traceEvents": [
            {"ph": "M", "pid": 2, "name": "process_name", "args": {"name": "/device:GPU:0"}},
            meta(1, 7, "python"),
            meta(2, 8, "Stream #1"),
            event(7, "dispatch", 0, 10, pid=1),
            event(7, "kernel", 0, 30, pid=2),  # the same tid in the device's process: not the python thread
            event(9, "host work", 0, 40, pid=1),  # an unnamed thread
        ]
    }
    rows, execute_s = profile_rows(trace, 1, 1e-3)
    assert [(r["thread"], r["event"]) for r in rows] == [
        ("other", "host work"),
        ("device", "kernel"),
        ("host", "dispatch"),
    ]
    assert execute_s == exact(30e-6)


def test_execution_on_several_threads_is_the_union_of_their_outermost_events():
    trace = {
        "traceEvents": [
            meta(1, 20, "tf_XLAPjRtCpuClient/1"),
            meta(1, 21, "tf_XLAPjRtCpuClient/2"),
            meta(1, 30, "tf_XLAEigen/1"),
            event(20, "a", 0, 100),
            event(20, "a", 300, 100),
            event(21, "b", 50, 100),  # overlaps the first: 50 us more
            event(21, "b", 320, 20),  # inside the second
            event(21, "b", 500, 10),
            event(30, "c", 600, 1000),  # an intra-op worker's: not execution
        ]
    }
    assert profile_rows(trace, 2, 1e-3)[1] == exact((150 + 100 + 10) / 2 * 1e-6)


def process(pid, name):
    return {"ph": "M", "pid": pid, "name": "process_name", "args": {"name": name}}


def test_the_loop_mark_is_no_event_of_the_profile_and_hides_no_outermost_event():
    trace = {"traceEvents": [*TRACE["traceEvents"], event(10, LOOP_MARK, -10, 2100)]}
    rows, execute_s = profile_rows(trace, calls=2, wall_s=0.002)
    assert rows == profile_rows(TRACE, calls=2, wall_s=0.002)[0]
    assert execute_s == exact((600 + 300) / 1e6)


def test_device_busy_is_the_union_of_the_cpu_clients_and_intra_op_threads_ops_within_the_loop():
    # TRACE's two calls: the client thread's fusion and wait (900 us a call) and an intra-op worker's fusion inside
    # them; the mark is the loop (2000 us, 1000 a call)
    trace = {"traceEvents": [*TRACE["traceEvents"], event(10, LOOP_MARK, 0, 2000)]}
    assert device_busy(trace, 2) == (exact(900e-6), exact(1000e-6))
    # an intra-op worker busy past the client thread's events counts (once a loop: 50 us), only once where they overlap
    later = {"traceEvents": [*trace["traceEvents"], event(30, "end: fusion", 850, 100)]}
    assert device_busy(later, 2) == (exact(925e-6), exact(1000e-6))


def test_device_busy_is_clipped_to_the_traced_loop_and_cannot_exceed_it():
    trace = {
        "traceEvents": [
            meta(1, 10, "python"),
            meta(1, 20, "tf_XLAPjRtCpuClient/1"),
            event(10, LOOP_MARK, 100, 400),
            event(20, "before the loop", 0, 150),  # 50 us of it inside
            event(20, "op", 200, 100),
            event(20, "after the loop", 450, 500),  # 50 us of it inside
            event(20, "outside", 600, 100),
            event(20, "zero", 300, 0),
        ]
    }
    assert device_busy(trace, 2) == (exact(100e-6), exact(200e-6))
    assert device_busy(trace, 0) == (None, None)
    unmarked = {"traceEvents": [e for e in trace["traceEvents"] if e.get("name") != LOOP_MARK]}
    assert device_busy(unmarked, 2) == (exact((150 + 100 + 500) / 2 * 1e-6), None)  # nothing clipped


def test_device_busy_on_a_device_reads_its_op_lines_not_its_steps_or_modules():
    tpu = [
        process(2, "/device:TPU:0"),
        meta(2, 1, "Steps"),
        meta(2, 2, "XLA Modules"),
        meta(2, 3, "XLA Ops"),
        meta(2, 4, "Framework Ops"),
        meta(1, 10, "python"),
        event(10, LOOP_MARK, 0, 1000),
        event(1, "step 1", 0, 1000, pid=2),  # a step spans the gaps between calls
        event(2, "jit_step", 100, 600, pid=2),  # a module spans the gaps between its ops
        event(3, "fusion", 100, 200, pid=2),
        event(3, "copy-start", 250, 100, pid=2),  # overlaps the fusion: 50 us more
        event(3, "fusion.1", 500, 200, pid=2),
        event(4, "scope", 100, 600, pid=2),
    ]
    assert device_busy({"traceEvents": tpu}, 1) == (exact(450e-6), exact(1000e-6))
    # without op lines (a GPU's streams): every line of the device but its steps and modules
    gpu = [e for e in tpu if e.get("tid") != 3 or e.get("pid") != 2]
    gpu = [{**e, "args": {"name": "Stream #7"}} if e.get("tid") == 4 and e.get("ph") == "M" else e for e in gpu]
    assert device_busy({"traceEvents": gpu}, 1) == (exact(600e-6), exact(1000e-6))
    # an op line of one device does not hide another device's lines
    other = [process(3, "/device:TPU:1"), meta(3, 9, "Stream"), event(9, "k", 800, 100, pid=3)]
    assert device_busy({"traceEvents": [*tpu, *other]}, 1)[0] == exact(550e-6)


def test_device_busy_is_none_when_no_thread_of_the_program_has_work():
    inline = {"traceEvents": [meta(1, 10, "python"), event(10, LOOP_MARK, 0, 100), event(10, "fusion", 10, 50)]}
    assert device_busy(inline, 1) == (None, exact(100e-6))
    idle = {"traceEvents": [meta(1, 30, "tf_XLAEigen/1"), event(30, "ThreadpoolListener::StartRegion", 5, 0)]}
    assert device_busy(idle, 1) == (None, None)
    assert device_busy({}, 1) == (None, None)
