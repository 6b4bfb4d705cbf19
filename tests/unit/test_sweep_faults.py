"""What a sweep's faults leave, without running one: a callback's error keeps its cause and a Ctrl-C inside one is an
interrupt; a killed sweep without a gather reports its own rows only (the faults themselves: tests/e2e/test_faults.py)."""

from __future__ import annotations

import pandas as pd


def test_callback_errors_keep_their_cause_and_a_ctrl_c_inside_one_is_an_interrupt():
    from jitexp.errors import callback_cause, first_line, hint_for, interrupted

    class JaxRuntimeError(Exception):
        pass

    wrapped = JaxRuntimeError(
        "INTERNAL: CpuCallback error calling callback: Traceback (most recent call last):\n"
        '  File "x.py", line 3, in cb\nValueError: bad value: 7'
    )
    assert callback_cause(wrapped) == ("ValueError", "ValueError: bad value: 7")
    assert first_line(wrapped) == "ValueError: bad value: 7" and "callback" in hint_for(wrapped)
    ctrl_c = JaxRuntimeError(
        "INTERNAL: CpuCallback error calling callback: Traceback (most recent call last):\n"
        '  File "x.py", line 3, in cb\nKeyboardInterrupt'
    )
    assert interrupted(ctrl_c) and not interrupted(wrapped) and not interrupted(ValueError("plain"))


def test_report_on_a_killed_sweep_without_gather_lists_rows_of_this_sweep_only(tmp_path):
    from jitexp.store.csvio import write_csv
    from jitexp.store.folders import gather_state, write_manifest

    root = tmp_path / "sweep"
    write_manifest(root, [["size=1"], ["size=2"]])
    write_csv(
        pd.DataFrame([{"workload": "w", "mode": "jit", "size": 1, "status": "ok", "overrides": "size=1"}]),
        root / "0" / "results.csv",
    )
    write_csv(
        pd.DataFrame([{"workload": "w", "mode": "jit", "size": 9, "status": "ok", "overrides": "size=9"}]),
        root / "1" / "results.csv",
    )
    frame, state = gather_state(root)
    assert list(frame["size"]) == [1]
    assert state.missing == [(1, "size=2")] and state.stale == ["1"]
    assert state.describe(len(frame)) == (
        "2 jobs: 1 row, 1 never finished: #1 size=2; left out (not jobs of this sweep): 1"
    )
