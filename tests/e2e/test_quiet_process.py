"""A process that shows nothing for 10 s says where it is (issue 57, item 6): a plain line on stderr and in
jitexp.log. The rule itself (when a line is due, its words) and progress=false are tests/unit/test_progress.py's; this
is the wiring: the worker's phases through the pipe, the status's clock thread, the job's log file (one ~14 s job)."""

from __future__ import annotations

from helpers import run_cli

SLOW = "import time\n\nslept = []\n\ndef f(x):\n    if not slept:\n        slept.append(1)\n        time.sleep(11.5)\n    return x + 1\n"
ARGS = [
    "workload=custom",
    "workload.fn=slowfirst.f",
    "workload.args=[{shape:[4]}]",
    "mode=eager",
    "timing=quick",
    "timing.processes=1",
    "timing.max_processes=1",
]


def test_a_process_quiet_for_10_s_says_where_it_is_in_the_log_too(tmp_path):
    (tmp_path / "slowfirst.py").write_text(SLOW)
    proc = run_cli([*ARGS, "hydra.run.dir=out"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    quiet = [line for line in proc.stderr.splitlines() if "still running after" in line]
    assert quiet and quiet[0].startswith("jitexp: process 1 of 1 still running after 10"), proc.stderr
    assert "in the first call (trace and compile)" in quiet[0], proc.stderr
    assert "still running after 10" in (tmp_path / "out" / "jitexp.log").read_text()
