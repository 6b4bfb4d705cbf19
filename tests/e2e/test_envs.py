"""Two Python environments interleaved (`envs`, issue 17 item 4): the env server, an A/A job, bad input.

The environments here are A/A: venvs made with `--without-pip` whose site-packages point (a .pth
file) at this test venv's, so each runs this very jitexp and jax from its own interpreter path,
server and forkserver, without installing anything. The order of the envs' processes: tests/unit/test_envs_order.py.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from helpers import command, make_env, read, run_cli, shared_env
from jitexp import ConfigError, compose
from jitexp.engine import envserver, preflight
from jitexp.engine.processes import WORKER
from jitexp.records import ProcessResult, Task

CRASHES = """
import os, sys, time
import jax.numpy as jnp


def ok(x):
    return jnp.sin(x) * 2


def aborts(x):
    os.abort()


def aborts_in_old(x):
    if "/old/" in sys.executable:  # only the worker of the env named old (its venv's interpreter)
        os.abort()
    return jnp.sin(x) * 2


def hangs(x):
    time.sleep(600)
    return x


def crossed(x):
    # 16x the work under jit in the env named new, 16x in eager in the env named old: new's jit is slower, its
    # eager faster, each by far more than noise (both envs run this same jax; only the interpreter path differs)
    import jax

    heavy = ("/new/" in sys.executable) == isinstance(x, jax.core.Tracer)
    for _ in range(16 if heavy else 1):
        x = jnp.tanh(x @ x)
    return x
"""


@pytest.fixture(scope="module")
def aa(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("envs")
    return shared_env(root / "old"), shared_env(root / "new")


@pytest.fixture
def crashes(tmp_path, monkeypatch) -> Path:
    code = tmp_path / "code"
    code.mkdir()
    (code / "crashes.py").write_text(CRASHES)
    monkeypatch.syspath_prepend(str(code))  # the env servers get the driver's code folders (not its packages)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def task(fn: str, process: int = 0) -> Task:
    cfg = compose(["mode=jit", "timing=quick", "workload=custom", f"workload.fn={fn}", "workload.args=[{shape:[4]}]"])
    return Task(cfg, process, cfg.mode.names)


@pytest.mark.slow
def test_a_task_round_trips_through_an_env_server_and_a_crash_is_an_error_row(aa, crashes):
    server = envserver.Server("pyenvs.new", str(aa[1])).start()
    try:
        result = server.launch(WORKER, task("crashes.ok"), 120)
        assert isinstance(result, ProcessResult) and result.clean, result.error
        assert result.environment["python_version"] and result.modes["jit"].samples_s is not None
        crashed = server.launch(WORKER, task("crashes.aborts", process=1), 120)
        assert crashed.error is not None and crashed.error.error_type == "SIGABRT", crashed.error
        assert crashed.error.error_phase == "trace"  # the worker's phase (jit traces Python), via the server
        again = server.launch(WORKER, task("crashes.ok", process=2), 120)  # the server outlives its workers
        assert again.clean
    finally:
        server.close()
    assert not server.alive


@pytest.mark.slow
@pytest.mark.serial  # kills a process
def test_a_server_killed_while_it_runs_a_task_is_an_error_row_not_a_hang(aa, crashes):
    server = envserver.Server("pyenvs.new", str(aa[1])).start()
    assert server.proc is not None
    pid = server.proc.pid
    killer = threading.Timer(5.0, os.kill, (pid, signal.SIGKILL))
    killer.start()
    try:
        result = server.launch(WORKER, task("crashes.hangs"), 600)
    finally:
        killer.cancel()
        server.close()
    assert result.error is not None, result
    assert (result.error.error_phase, result.error.error_type) == ("crash", "SIGKILL")
    assert "pyenvs.new" in result.error.error_message and "exited" in result.error.error_message


def processes_using(path: Path) -> list[str]:
    """Command lines of running processes that mention path (an env's interpreter, its forkserver)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if str(path) in cmd:
            found.append(cmd)
    return found


@pytest.mark.slow
@pytest.mark.serial  # Ctrl-C to a process group
def test_ctrl_c_stops_a_job_with_envs_and_leaves_no_server_or_worker(aa, crashes):
    env = {**os.environ, "HYDRA_FULL_ERROR": "0"}
    env.pop("PYTHONPATH", None)
    restore = (
        "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
    )
    args = [f"envs={{old:{aa[0]},new:{aa[1]}}}", "mode=jit", "timing=quick", "workload=custom"]
    args += ["workload.fn=crashes.hangs", "workload.args=[{shape:[4]}]", f"hydra.run.dir={crashes / 'job'}"]
    proc = subprocess.Popen(
        [sys.executable, "-c", restore, command("jitexp"), *args],
        cwd=crashes / "code",
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while len(processes_using(aa[0].parent.parent)) < 3 and time.monotonic() < deadline:
        time.sleep(0.5)  # the old env's server, its forkserver and the hanging worker
    assert len(processes_using(aa[0].parent.parent)) >= 3
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted (Ctrl-C)" in err, err[-2000:]
    time.sleep(1.0)
    assert processes_using(aa[0].parent.parent) == [] and processes_using(aa[1].parent.parent) == []


@pytest.mark.slow
def test_the_baseline_env_failing_still_gives_the_other_env_its_rows(aa, crashes):
    out = crashes / "job"
    args = [f"envs={{old:{aa[0]},new:{aa[1]}}}", "mode=jit", "timing=quick", "timing.processes=3"]
    args += ["workload=custom", "workload.fn=crashes.aborts_in_old", "workload.args=[{shape:[4]}]"]
    proc = run_cli([*args, "timing.max_processes=3", f"hydra.run.dir={out}"], cwd=crashes / "code")
    assert proc.returncode == 1 and "jit failed in trace: SIGABRT" in proc.stderr, proc.stderr[-3000:]
    rows = read(out / "results.csv").set_index("env")
    assert rows.loc["old", "status"] == "error" and rows.loc["old", "error_type"] == "SIGABRT"
    assert rows.loc["new", "status"] == "ok" and rows.loc["new", "n_processes"] == 1  # the round ends, then the job
    assert (read(out / "processes.csv")["env"] == "new").sum() == 1


@pytest.mark.slow
def test_an_aa_envs_job_gives_rows_per_env_with_ab_columns_and_cannot_tell(aa, tmp_path):
    out = tmp_path / "job"
    overrides = [f"envs={{old:{aa[0]},new:{aa[1]}}}", "mode=[eager,jit]", "size=32", "timing=quick"]
    proc = run_cli([*overrides, f"hydra.run.dir={out}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = read(out / "results.csv")
    assert list(zip(rows["env"], rows["mode"])) == [("old", "eager"), ("old", "jit"), ("new", "eager"), ("new", "jit")]
    assert (rows["status"] == "ok").all() and (rows["jax_version"] == rows["jax_version"][0]).all()
    new = rows[rows["env"] == "new"]
    assert (new["ab_baseline"] == "old").all() and (new["ab_steady_n_pairs"] == 1).all()
    # One process per env: one pair, so 'cannot tell' whatever the data (test_a_real_difference_... has six pairs);
    # the ratios are that pair's, new's figure over old's of the same mode
    by = rows.set_index(["env", "mode"])
    for mode in ("eager", "jit"):
        for metric, column in (("steady", "median_s"), ("first_call", "first_call_s"), ("compile", "compile_s")):
            assert by.loc[("new", mode), f"ab_{metric}_verdict"] == "cannot tell (1 process pair)"
            assert by.loc[("new", mode), f"ab_{metric}_ratio"] == pytest.approx(
                by.loc[("new", mode), column] / by.loc[("old", mode), column], rel=1e-9
            ), (mode, metric)
    assert rows.loc[rows["env"] == "old", "ab_baseline"].isna().all()
    assert re.search(
        r"new jit (as fast as|[\d.]+x (faster|slower) than) old: cannot tell \(1 process pair\)", proc.stdout
    )
    for name in ("samples.csv", "processes.csv"):
        assert set(read(out / name)["env"]) == {"old", "new"}


@pytest.mark.slow
@pytest.mark.serial  # asserts on verdicts from timings
def test_a_real_difference_between_envs_is_slower_or_faster_with_six_pairs(aa, crashes):
    # Six processes per env, six pairs: the fewest at which the signed-rank test can reach p < 0.05 (2 / 2**6).
    # The difference is 16x the work (CRASHES.crossed), far beyond load noise, in opposite directions per mode.
    out = crashes / "job"
    args = [f"envs={{old:{aa[0]},new:{aa[1]}}}", "mode=[eager,jit]", "timing=quick", "size=128"]
    args += ["timing.processes=6", "timing.max_processes=6", "workload=custom", "workload.fn=crashes.crossed"]
    args += ["workload.args=[{shape:[${size},${size}]}]", f"hydra.run.dir={out}"]
    proc = run_cli(args, cwd=crashes / "code")
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = read(out / "results.csv").set_index(["env", "mode"])
    assert (rows["status"] == "ok").all() and (rows["n_processes"] == 6).all()
    jit, eager = rows.loc[("new", "jit")], rows.loc[("new", "eager")]
    assert jit["ab_steady_verdict"] == "slower" and jit["ab_steady_ratio"] > 3, jit.filter(like="ab_steady")
    assert eager["ab_steady_verdict"] == "faster" and eager["ab_steady_ratio"] < 1 / 3, eager.filter(like="ab_steady")
    for row in (jit, eager):
        for metric in ("steady", "first_call", "compile"):
            assert row[f"ab_{metric}_n_pairs"] == 6 and not row[f"ab_{metric}_verdict"].startswith("cannot tell")
    assert re.search(r"new jit [\d.]+x slower than old", proc.stdout), proc.stdout
    assert re.search(r"new eager [\d.]+x faster than old", proc.stdout), proc.stdout
    # pair i is the i-th process of each env: the ratio and its CI lie within the range of those pairs' own ratios
    procs = read(out / "processes.csv")
    for mode, row in (("jit", jit), ("eager", eager)):
        side = {
            env: procs[(procs["env"] == env) & (procs["mode"] == mode)].sort_values("process") for env in ("old", "new")
        }
        if "replaced" in procs.columns:
            side = {env: s[~s["replaced"].fillna(False).astype(bool)] for env, s in side.items()}
        pairs = side["new"]["median_s"].to_numpy() / side["old"]["median_s"].to_numpy()
        ci = (row["ab_steady_ratio_ci_low"], row["ab_steady_ratio"], row["ab_steady_ratio_ci_high"])
        assert len(pairs) == 6 and min(pairs) * (1 - 1e-9) <= ci[0] <= ci[1] <= ci[2] <= max(pairs) * (1 + 1e-9), (
            mode,
            pairs,
            ci,
        )


@pytest.mark.slow
def test_envs_from_python_run_and_keep_their_servers_across_jobs(aa, tmp_path, monkeypatch):
    import jitexp

    monkeypatch.chdir(tmp_path)
    cfg = jitexp.compose([f"envs={{a:{aa[0]},b:{aa[1]}}}", "mode=jit", "size=16", "timing=quick"])
    first = jitexp.run(cfg)
    servers = dict(envserver._servers)
    second = jitexp.run(cfg)
    assert [r["env"] for r in first.rows] == ["a", "b"] == [r["env"] for r in second.rows]
    assert dict(envserver._servers) == servers and all(s.alive for s in servers.values())
    envserver.close_all()


def bad_inputs(tmp_path: Path, aa: tuple[Path, Path]) -> list[tuple[list[str], str, str]]:
    """(overrides, the key the one line names, what it says) for each mistake."""
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    script = tmp_path / "fake-python"
    script.write_text("#!/bin/sh\necho I am not python >&2\nexit 1\n")
    script.chmod(0o755)
    bare = make_env(tmp_path / "bare", shared=False)
    other = tmp_path / "otherjitexp" / "jitexp"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text('__version__ = "0.0.1"\n')
    (other / "engine").mkdir()
    (other / "engine" / "__init__.py").write_text("")
    (other / "engine" / "envserver.py").write_text(  # where this jitexp's env server is, another protocol's
        'def hello():\n    return {"protocol": 1, "version": "0.0.1", "fingerprint": "x", "python": "3"}\n'
    )
    old_jitexp = make_env(tmp_path / "oldjitexp", shared=False)
    site = next((tmp_path / "oldjitexp" / "lib").glob("python*/site-packages"))
    (site / "other.pth").write_text(f"{other.parent}\n")
    good = str(aa[0])
    pair = lambda b: [f"envs={{a:{good},b:{b}}}"]  # noqa: E731
    return [
        (pair(f"{tmp_path}/nope/python"), "envs.b=", "does not exist"),
        (pair(text), "envs.b=", "is not an executable file"),
        (
            pair(script),
            "envs.b=",
            "is not a Python interpreter (it did not run Python code given with -c; exit 1: I am not python)",
        ),
        (
            pair(bare),
            "envs.b=",
            f"cannot import jitexp (ModuleNotFoundError: No module named 'jitexp'); install it there: {bare} -m pip install ",
        ),
        (pair(old_jitexp), "envs.b=", "incompatible jitexp: "),
        ([*pair(aa[1]), "isolate=none"], "isolate=", "use isolate=process"),
        ([f"envs={{a:{good}}}"], "envs=", "at least two environments"),
    ]


def test_bad_envs_are_one_line_before_anything_runs(aa, tmp_path):
    """Each mistake as the preflight the command runs says it (probing the interpreters); the first through the
    installed command too: `jitexp: error: ` and that line on stderr, exit 2, nothing run."""
    cases = bad_inputs(tmp_path, aa)
    for overrides, key, says in cases:
        with pytest.raises(ConfigError) as caught:
            preflight.check([*overrides, "timing=quick", f"hydra.run.dir={tmp_path / 'never'}"])
        message = str(caught.value)
        assert "\n" not in message and message.startswith(key) and says in message, (overrides, message)
    overrides, key, says = cases[0]
    proc = run_cli([*overrides, "timing=quick", f"hydra.run.dir={tmp_path / 'never'}"], cwd=tmp_path)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, (overrides, proc.stderr[-2000:])
    assert lines[0].startswith(f"jitexp: error: {key}") and says in lines[0], (overrides, lines[0])
    assert not (tmp_path / "never").exists()


def test_a_program_that_is_not_python_is_named_in_one_clear_line(tmp_path):
    """/bin/ls runs, fails and echoes the probe's code back shell-quoted: the line says what is wrong, not that."""
    with pytest.raises(ConfigError) as caught:
        preflight.check(["envs={a:/bin/ls,b:/bin/ls}", "timing=quick", f"hydra.run.dir={tmp_path / 'never'}"])
    assert str(caught.value) == (
        "envs.a='/bin/ls' is invalid; /bin/ls is not a Python interpreter (it did not run Python code given with -c; "
        "exit 2); give the path of a python executable, e.g. a venv's bin/python"
    )
