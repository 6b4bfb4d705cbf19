"""Ctrl-C as a terminal sends it (SIGINT to the whole foreground process group: the driver, the forkserver, a preflight
child) at any moment of a single job or a sweep: exit 130, no traceback, what finished kept and said (issue 57).
The sweep stopped in its hanging second job: test_faults.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers import command, read

SLOW = """
import time
import jax.numpy as jnp


def slow(x):
    time.sleep(1.0)  # at trace time: every worker process takes a second more
    return jnp.sin(x) * 2
"""
BASE = ["mode=jit", "timing=quick", "workload=custom", "workload.args=[{shape:[${size}]}]"]


class Started:
    """`jitexp ARGS` in a session of its own (its process group is what a terminal's Ctrl-C reaches); stderr read
    line by line as it comes."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        env = {**os.environ, "HYDRA_FULL_ERROR": "0"}
        env.pop("PYTHONPATH", None)
        restore = (
            "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
        )
        self.proc = subprocess.Popen(
            [sys.executable, "-c", restore, command("jitexp"), *args],
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(iter(self.proc.stderr.readline, "")))
        self.reader.start()

    def wait_for(self, text: str, timeout: float = 60.0) -> None:
        end = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            if time.monotonic() > end or self.proc.poll() is not None:
                pytest.fail(f"{text!r} never appeared on stderr: {''.join(self.lines)[-2000:]}")
            time.sleep(0.05)

    def ctrl_c(self) -> tuple[int, str, str]:
        os.killpg(self.proc.pid, signal.SIGINT)
        stdout = self.proc.stdout.read()
        self.proc.wait(timeout=60)
        self.reader.join(timeout=60)
        return self.proc.returncode, stdout, "".join(self.lines)


@pytest.fixture
def slow(tmp_path: Path) -> Path:
    (tmp_path / "slowfn.py").write_text(SLOW)
    return tmp_path


def children(pid: int) -> list[int]:
    """The processes whose parent is pid (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
        except (OSError, ValueError):
            continue
        if entry.name.isdigit() and int(stat.rpartition(")")[2].split()[1]) == pid:
            found.append(int(entry.name))
    return found


@pytest.mark.serial
@pytest.mark.parametrize("after_s", [0.0, 0.3, 1.0])
def test_ctrl_c_before_any_job_ran_is_one_line(slow, after_s):
    """From the moment the driver starts the forkserver (the preflight starts it first, then composes; the server
    imports JAX meanwhile): the driver says nothing was written, and the forkserver prints no traceback of its own.
    (Before that moment lie only the interpreter's start and its import of jitexp.cli, ~0.1 s, where Python itself
    turns a Ctrl-C into a KeyboardInterrupt traceback: no code of jitexp's runs yet.)"""
    run = Started([*BASE, "workload.fn=slowfn.slow", "size=4", f"hydra.run.dir={slow / 'one'}"], slow)
    end = time.monotonic() + 60
    while not children(run.proc.pid) and time.monotonic() < end:
        time.sleep(0.01)
    time.sleep(after_s)
    code, stdout, stderr = run.ctrl_c()
    assert "Traceback" not in stderr + stdout and "KeyboardInterrupt" not in stderr, stderr
    if code == 130 and "processes" not in stderr:  # on a fast machine 1.2 s may reach the job: the test below
        assert stderr.strip().splitlines()[-2:] == [
            "jitexp: interrupted (Ctrl-C)",
            "jitexp: stopped before any job started: nothing was measured or written",
        ], stderr
    assert code == 130, stderr
    assert not (slow / "one" / "results.csv").exists()


@pytest.mark.serial
def test_ctrl_c_in_a_single_job_keeps_its_finished_processes(slow):
    out = slow / "one"
    args = [
        *BASE,
        "workload.fn=slowfn.slow",
        "size=4",
        "timing.processes=4",  # 4, not 6: resume=true below measures them all again, a second each
        "timing.max_processes=4",
        f"hydra.run.dir={out}",
    ]
    run = Started(args, slow)
    run.wait_for("process 2 of 4 done")  # process 3 traces for a second: Ctrl-C lands before it ends
    code, stdout, stderr = run.ctrl_c()
    assert code == 130 and "Traceback" not in stderr, stderr
    kept = read(out / "results.csv")
    n = int(kept.loc[0, "n_processes"])
    assert 2 <= n < 4 and kept.loc[0, "stop_reason"] == "interrupted" and kept.loc[0, "status"] == "ok"
    assert (
        f"jitexp: kept the {n} processes of job #0 that finished: one/results.csv "
        "(stop_reason=interrupted; resume=true measures it again)" in stderr
    ), stderr
    # resume=true measures the interrupted job again rather than skipping it as complete
    again = subprocess.run(
        [command("jitexp"), *args, "resume=true"],
        cwd=slow,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert read(out / "results.csv").loc[0, "stop_reason"] != "interrupted"


@pytest.mark.serial
def test_ctrl_c_in_a_sweeps_first_job_gathers_nothing_without_a_traceback(slow):
    """The sweep stopped before any job wrote rows: the gathered frame is empty (issue 57's AttributeError)."""
    out = slow / "sweep"
    run = Started(["-m", *BASE, "workload.fn=slowfn.slow", "size=4,8,16", f"hydra.sweep.dir={out}"], slow)
    end = time.monotonic() + 60
    while not (out / "jobs.csv").exists() and time.monotonic() < end:
        time.sleep(0.05)
    time.sleep(0.5)  # job 0's worker is in its one-second trace
    code, stdout, stderr = run.ctrl_c()
    assert code == 130 and "Traceback" not in stderr + stdout, stderr
    assert "interrupted (Ctrl-C)" in stderr and "3 jobs: 0 rows, 3 never finished: #0" in stdout, stdout


AT_IMPORT = """
import os, runpy, signal, sys


AT = sys.argv[2]


class CtrlC:  # a Ctrl-C arriving while jitexp loads: SIGINT sent as the named module is looked for
    def find_spec(self, name, path=None, target=None):
        if name == AT:
            os.kill(os.getpid(), signal.SIGINT)
        return None


sys.meta_path.insert(0, CtrlC())
script = sys.argv[1]
sys.argv = [script, *sys.argv[3:]]
runpy.run_path(script, run_name="__main__")
"""


def interrupted_at_import(cwd, program: str, module: str, *args: str) -> subprocess.CompletedProcess:
    """`program args...` run with SIGINT raised as it imports `module` (AT_IMPORT)."""
    return subprocess.run(
        [sys.executable, "-c", AT_IMPORT, command(program), module, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("module", ["jitexp.errors", "jitexp.cli"])
def test_ctrl_c_while_jitexp_loads_is_one_line(tmp_path, module):
    """The ~0.1 s before cli.main's guard (jitexp's own imports: the package, jitexp.errors, jitexp.cli) printed a
    KeyboardInterrupt traceback; the `jitexp` script's process now says the one line and exits 130 there too
    (issue 57). The interpreter's own start (site, an editable install's finder) stays Python's."""
    done = interrupted_at_import(tmp_path, "jitexp", module, "timing=quick", f"hydra.run.dir={tmp_path}")
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines() == [
        "jitexp: interrupted (Ctrl-C)",
        "jitexp: stopped before any job started: nothing was measured or written",
    ]
    assert not (tmp_path / "results.csv").exists()


@pytest.mark.parametrize(
    ("program", "module"),
    [("jitexp-report", "jitexp.report.run.tables"), ("jitexp-compare", "jitexp.report.compare.gate")],
)
def test_ctrl_c_in_a_report_command_is_one_line(tmp_path, program, module):
    """jitexp-report, -compare and -history printed a KeyboardInterrupt traceback on Ctrl-C (benchmarks/hunt57.py):
    now one line and exit 130, here while they load what reads the run."""
    done = interrupted_at_import(tmp_path, program, module, str(tmp_path), str(tmp_path))
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"{program}: interrupted (Ctrl-C); the folder it writes may hold only part of its files"
    ]


MEASURE = """
import sys
import numpy as np
import jitexp
import slowfn

try:
    jitexp.measure(slowfn.slow, np.ones(4, np.float32), timing="quick", modes="jit")
except KeyboardInterrupt:
    print("caught", file=sys.stderr)
    sys.exit(130)
"""


def test_ctrl_c_while_jitexp_measure_starts_its_workers_is_the_callers_alone(slow):
    """jitexp.measure spawned the forkserver without Ctrl-C ignored (only the command line's preflight did), so a
    Ctrl-C during its preload (`import jax`) printed the server's KeyboardInterrupt traceback beside the caller's
    (benchmarks/hunt57.py). The caller gets its KeyboardInterrupt; nothing else prints."""
    (slow / "caller.py").write_text(MEASURE)
    env = {**os.environ, "PYTHONPATH": str(slow)}
    restore = (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", restore, sys.executable, "caller.py"],
        cwd=slow,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    end = time.monotonic() + 60
    while not children(proc.pid) and time.monotonic() < end:  # the resource tracker, then the forkserver
        time.sleep(0.01)
    time.sleep(0.3)  # the server imports JAX (~0.5 s and more)
    os.killpg(proc.pid, signal.SIGINT)
    stderr = proc.communicate(timeout=60)[1]
    assert proc.returncode == 130 and stderr.strip().splitlines() == ["caught"], stderr
