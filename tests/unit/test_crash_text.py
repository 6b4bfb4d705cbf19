"""What a crashed worker's row says (engine.processes): the line that explains the crash, and a hint for it."""

from __future__ import annotations

from jitexp.engine.processes import crash_hint, last_meaningful_line

# the tail of a worker's stderr when XLA's CPU collectives gave up (4 CPU devices on 2 cores, 2026-12-04; issue 42)
XLA_ABORT = """E1204 18:40:13.731323   19826 rendezvous.cc:41] All thread stack traces (if supported on this platform):
F1204 18:40:13.731614   19826 rendezvous.cc:161] [id=0] Termination timeout for `all reduce RendezvousKey{run_id=RunId: -1, global_devices=[0, 1, 2, 3], num_local_participants=4}` of 40 seconds exceeded. Exiting to ensure a consistent program state. Expected 4 threads to join the rendezvous, but only 3 of them arrived on time.
*** Check failure stack trace: ***
    @     0x7f3443840634  absl::lts_20260107::log_internal::LogMessage::SendToLog()
Fatal Python error: Aborted

Thread 0x00007f3453259b80 (most recent call first):
  File "/x/jax/_src/numpy/ufunc_api.py", line 182 in __call__
"""


def test_xlas_fatal_check_is_the_message_and_a_collective_timeout_gets_its_hint():
    line = last_meaningful_line(XLA_ABORT)
    assert line.startswith("[id=0] Termination timeout for `all reduce") and line.endswith("arrived on time.")
    hint = crash_hint("SIGABRT", line)
    assert hint.startswith("a device's share of an XLA CPU collective never arrived")
    assert "fewer than 2 x device.count threads" in hint and "PJRT_NPROC" in hint
    assert hint.endswith("(XLA_FLAGS=--xla_cpu_collective_call_terminate_timeout_seconds=N, default 40)")


def test_without_an_xla_check_the_python_fatal_error_and_the_native_crash_hint():
    text = "Fatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent call first):\n  File x\n"
    line = last_meaningful_line(text)
    assert line == "Fatal Python error: Segmentation fault"
    assert crash_hint("SIGSEGV", line).startswith("the process crashed in native code")
    assert last_meaningful_line("Traceback (most recent call last):\n  File y\nValueError: bad\n") == "ValueError: bad"
