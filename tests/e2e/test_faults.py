"""A sweep survives anything: raises, callback errors, hangs, aborts, segfaults, exits, Ctrl-C, SIGKILL, resume.
The callback-error and killed-sweep logic on their own: tests/unit/test_sweep_faults.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import command, read, run_cli

# `serial` (alone on the machine): the tests that send Ctrl-C to a process group or SIGKILL at a moment they time;
# the others run beside another test (the every-fault sweep's 8 s timeout is its hang's alone: its other jobs
# take ~1 s, loaded or not)

FAULTS = """
import ctypes, os, sys, time
import jax
import jax.numpy as jnp


def ok(x):
    return jnp.sin(x) * 2


def raises(x):
    raise ValueError("no good: 42")


def _bad_callback(x):
    raise ValueError("bad value in callback: 7")


def callback_raises(x):
    return jax.pure_callback(_bad_callback, jax.ShapeDtypeStruct(x.shape, x.dtype), x)


def hangs(x):
    time.sleep(600)
    return x


def aborts(x):
    os.abort()


def segfaults(x):
    ctypes.string_at(0)


def exits(x):
    sys.exit(3)
"""
BASE = ["mode=jit", "timing=quick", "workload=custom", "workload.args=[{shape:[${size}]}]"]


@pytest.fixture
def faults(tmp_path: Path) -> Path:
    (tmp_path / "faults.py").write_text(FAULTS)
    return tmp_path


def start(args: list[str], cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "HYDRA_FULL_ERROR": "0"}
    env.pop("PYTHONPATH", None)
    # Ctrl-C as from a terminal: a shell's background job (`cmd &`) inherits SIGINT ignored, and
    # so would jitexp; restore the default before exec, as an interactive shell does.
    restore = (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
    )
    return subprocess.Popen(
        [sys.executable, "-c", restore, command("jitexp"), *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(path: Path, timeout: float = 60.0) -> None:
    end = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > end:
            pytest.fail(f"{path} never appeared")
        time.sleep(0.1)


@pytest.mark.slow
def test_every_fault_is_its_own_row_and_later_jobs_still_run(faults):
    out = faults / "sweep"
    fns = ",".join(f"faults.{f}" for f in ("raises", "callback_raises", "hangs", "aborts", "segfaults", "exits", "ok"))
    proc = run_cli(["-m", *BASE, f"workload.fn={fns}", "timing.timeout_s=8", f"hydra.sweep.dir={out}"], cwd=faults)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    df = read(out / "results.csv").set_index("workload")
    assert len(df) == 7
    expect = {
        "raises": ("trace", "ValueError", "no good: 42"),
        "callback_raises": ("execute", "jax.errors.JaxRuntimeError", "ValueError: bad value in callback: 7"),
        "hangs": ("trace", "Timeout", "timing.timeout_s=8"),
        "aborts": ("trace", "SIGABRT", "Fatal Python error: Aborted"),
        "segfaults": ("trace", "SIGSEGV", "Fatal Python error: Segmentation fault"),
        "exits": ("trace", "exit 3", "exited with code 3"),
    }
    for name, (phase, kind, message) in expect.items():
        row = df.loc[name]
        assert (row["status"], row["error_phase"], row["error_type"]) == ("error", phase, kind), (name, row.to_dict())
        assert message in row["error_message"], (name, row["error_message"])
        if name != "raises":  # a plain ValueError has no hint; every fault of the harness's own does
            assert isinstance(row["hint"], str) and row["hint"], name
    assert df.loc["ok", "status"] == "ok"
    assert "7 jobs: 7 rows" in proc.stdout


@pytest.mark.serial
def test_ctrl_c_keeps_finished_jobs_writes_the_gather_and_exits_130(faults):
    out = faults / "sweep"
    proc = start(["-m", *BASE, "workload.fn=faults.ok,faults.hangs,faults.raises", f"hydra.sweep.dir={out}"], faults)
    wait_for(out / "0" / "results.csv")
    time.sleep(1.5)  # job 1's worker is hanging now
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr and "interrupted" in stderr
    gathered = read(out / "results.csv")
    assert list(gathered["workload"]) == ["ok"] and (gathered["status"] == "ok").all()
    assert "3 jobs: 1 row, 2 never finished: #1" in stdout and "#2" in stdout


@pytest.mark.serial
def test_sigkill_mid_sweep_then_the_report_names_the_missing_jobs(faults):
    out = faults / "sweep"
    proc = start(["-m", *BASE, "workload.fn=faults.ok,faults.hangs,faults.raises", f"hydra.sweep.dir={out}"], faults)
    wait_for(out / "0" / "results.csv")
    time.sleep(1.0)
    proc.kill()
    proc.communicate(timeout=30)
    report = run_cli([str(out), "--no-plots"], cwd=faults, name="jitexp-report")
    assert report.returncode == 0, report.stderr
    assert "3 jobs: 1 row, 2 never finished: #1 " in report.stdout and "workload.fn=faults.hangs" in report.stdout
    assert "Jobs that never finished" in (out / "report" / "summary.md").read_text()


@pytest.mark.slow
def test_resume_skips_finished_jobs_and_stale_folders_never_mix_in(faults):
    out = faults / "sweep"
    first = run_cli(["-m", *BASE, "workload.fn=faults.ok", "size=4,8,16", f"hydra.sweep.dir={out}"], cwd=faults)
    assert first.returncode == 0, first.stderr[-2000:]
    stamp = (out / "0" / "samples.csv").stat().st_mtime_ns
    median = read(out / "0" / "results.csv").loc[0, "median_s"]
    again = run_cli(
        ["-m", *BASE, "size=4,8,16,32", "workload.fn=faults.ok", "resume=true", f"hydra.sweep.dir={out}"], cwd=faults
    )  # the same jobs spelled in another order: same config, so skipped
    assert again.returncode == 0, again.stderr[-2000:]
    log = again.stdout + again.stderr
    assert "job #0" in log and "already complete" in log and log.count("already complete") == 3
    assert (out / "0" / "samples.csv").stat().st_mtime_ns == stamp  # not measured again
    assert read(out / "0" / "results.csv").loc[0, "median_s"] == median
    assert sorted(read(out / "results.csv")["size"]) == [4, 8, 16, 32]
    # another sweep into the same folder: refused without a word on what to do with the results it holds
    refused = run_cli(["-m", *BASE, "workload.fn=faults.ok", "size=64", f"hydra.sweep.dir={out}"], cwd=faults)
    assert refused.returncode == 2 and "already holds the results of an earlier run" in refused.stderr
    fewer = run_cli(
        ["-m", *BASE, "workload.fn=faults.ok", "size=64", "overwrite=true", f"hydra.sweep.dir={out}"], cwd=faults
    )
    assert fewer.returncode == 0, fewer.stderr[-2000:]
    assert list(read(out / "results.csv")["size"]) == [64]
    # the replaced sweep's job folders 1-3 hold no results any command could read as this sweep's (issue 57)
    assert not any((out / str(n) / "results.csv").exists() for n in (1, 2, 3)) and "left out" not in fewer.stdout
    assert "jitexp: overwrite=true: removed the results of an earlier run in sweep/ (results.csv, jobs.csv" in (
        fewer.stderr
    )


def test_job_folders_with_names_of_their_own_are_gathered(faults):
    out = faults / "sweep"
    proc = run_cli(
        ["-m", *BASE, "workload.fn=faults.ok", "size=4,8", f"hydra.sweep.dir={out}", "hydra.sweep.subdir=size_${size}"],
        cwd=faults,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert sorted(read(out / "results.csv")["size"]) == [4, 8] and "2 jobs: 2 rows" in proc.stdout


@pytest.mark.slow
def test_exit_codes(faults):
    single = run_cli([*BASE, "workload.fn=faults.raises", f"hydra.run.dir={faults / 'one'}"], cwd=faults)
    assert single.returncode == 1
    assert "jitexp: error: jit failed in trace: ValueError: no good: 42" in single.stderr
    sweep = ["-m", *BASE, "workload.fn=faults.raises,faults.ok"]
    assert run_cli([*sweep, f"hydra.sweep.dir={faults / 'a'}"], cwd=faults).returncode == 0
    strict = run_cli([*sweep, "fail_on_error=true", f"hydra.sweep.dir={faults / 'b'}"], cwd=faults)
    assert strict.returncode == 1 and len(read(faults / "b" / "results.csv")) == 2
