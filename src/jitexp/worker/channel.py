"""The worker's pipe to the driver, and the phase reports sent through it (a timeout or crash row names the phase).

Set by `entry.entry` in a fresh worker; None in-process (isolate=none), where nothing is reported.
"""

from __future__ import annotations

from typing import Any

conn: Any = None


def enter_phase(phase_name: str) -> None:
    """Tell the driver which phase this worker is in (a timeout or crash row names it)."""
    if conn is not None:
        conn.send(("phase", phase_name))


def opened(platform: str) -> None:
    """Tell the driver this worker holds its device now (engine.handover prepares the next worker then)."""
    if conn is not None:
        conn.send(("opened", platform))


def wait_for_go(task: Any) -> None:
    """A prepared (gated) worker waits here, its imports done, until the driver says the device is free; the go
    brings the process number, modes, calls and extras it is to run (records.GO_FIELDS). A driver that closes the
    pipe instead (the job needed no more processes) ends the worker."""
    if not task.gated or conn is None:
        return
    try:
        kind, fields = conn.recv()
    except EOFError:
        raise SystemExit(0) from None
    for name, value in fields.items():
        setattr(task, name, value)
