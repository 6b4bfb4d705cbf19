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
