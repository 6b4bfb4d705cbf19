"""Helpers every test layer shares: the installed `jitexp` commands run in a subprocess, their CSVs read, venvs
for `envs`, and hand-made result rows and sweep folders for the report and compare tests."""

from __future__ import annotations

import functools
import math
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jitexp.config.schema import (
    DeviceConfig,
    DistributedConfig,
    ExperimentConfig,
    MeshConfig,
    ModeConfig,
    TimingConfig,
    WorkloadConfig,
)
from jitexp.store.csvio import write_csv
from jitexp.store.folders import PROCESSES_CSV, RESULTS_CSV, load_results

BIN = Path(sys.executable).parent


def examples(everyday: int, thorough: int) -> int:
    """A property test's number of examples: `everyday` in a plain run, `thorough` (the count it was written with)
    under hypothesis's "thorough" profile, `pytest --hypothesis-profile=thorough` (registered in tests/conftest.py)."""
    from hypothesis import settings

    return thorough if settings.get_current_profile_name() == "thorough" else everyday


def command(name: str) -> str:
    path = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if path is None:
        pytest.fail(f"console script {name!r} not installed: run `pip install .` first")
    return path


def run_cli(
    args: list[str], cwd: Path, name: str = "jitexp", timeout: int = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    env = {**os.environ, "HYDRA_FULL_ERROR": "0", **(env or {})}
    env.pop("PYTHONPATH", None)  # test the installed package, not the source tree
    return subprocess.run([command(name), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def sweep(args: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """Run `jitexp -m ARGS` into tmp_path/sweep; return the process and the sweep dir."""
    out = tmp_path / "sweep"
    proc = run_cli(["-m", *args, "timing=quick", f"hydra.sweep.dir={out}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, out


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path)


def make_env(path: Path, shared: bool = True) -> Path:
    """A venv at path (no pip) whose Python sees this test venv's packages (shared: a .pth file) or none; its python.

    Two shared ones are an A/A pair for `envs`: this jitexp and jax, each from its own interpreter path.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    if shared:
        purelib = Path(sysconfig.get_paths()["purelib"])
        site = path / purelib.relative_to(sys.prefix)
        (site / "jitexp-tests-shared.pth").write_text(f"{purelib}\n")
    return path / "bin" / "python"


def shared_env(path: Path) -> Path:
    """make_env's A/A venv, which also finds an editable install of jitexp (`pip install -e .`).

    An editable install is an import line in a .pth file of this venv's site-packages, and Python runs
    .pth files only in site directories, not in the folder the shared .pth adds: copy those lines into
    the env, named to run after the shared .pth (which puts their finder module on the path).
    """
    python = make_env(path)
    site = next((path / "lib").glob("python*/site-packages"))
    for hook in Path(sysconfig.get_paths()["purelib"]).glob("__editable__*.pth"):
        (site / f"zz-{hook.name}").write_text(hook.read_text())
    return python


ENV = dict(
    dtype="float32",
    seed=0,
    platform="cpu",
    device_kind="cpu",
    jax_version="0.10.2",
    jaxlib_version="0.10.2",
    python_version="3.11.9",
    hostname="testhost",
    cpu_model="TestCPU",
    cpu_count=8,
    load_avg_start=0.25,
    load_avg_end=0.75,
    x64=False,
    xla_flags="",
)


def measured(seconds: float, first: float = 0.5, rounds: int = 4, **extras):
    """A mode's worker record with every round exactly `seconds` (so every figure rows derives is exact) and a cold
    call of `first` s split 0.1 / 0.1 / 0.1 / the rest; extras as the worker would put them (flops, eager_ops, ...)."""
    from jitexp.records import Cold, Extras, ModeResult

    e = Extras()
    e.update(extras)
    return ModeResult(
        cold_position=0,
        cold=Cold(first, 0.1, 0.1, 0.1, first - 0.3, 2),
        samples_s=np.full(rounds, seconds),
        number=10,
        stop_reason="ci",
        compiles_during_timing=0,
        extras=e,
    )


def ok(workload, mode, size, median, first, *, compile_s=None, ci=0.1, **extra) -> dict:
    """A successful row with a symmetric CI of +-ci*median."""
    return {
        **ENV,
        "workload": workload,
        "mode": mode,
        "size": size,
        "status": "ok",
        "median_s": median,
        "ci95_low_s": median * (1 - ci),
        "ci95_high_s": median * (1 + ci),
        "first_call_s": first,
        "compile_s": compile_s,
        "n_samples": 20,
        "number": 1,
        "timestamp": f"2025-03-0{1 + size % 5}T12:00:00",
        **extra,
    }


def error(workload, mode, size, **extra) -> dict:
    """A failed row: trace error under jit."""
    return {
        **ENV,
        "workload": workload,
        "mode": mode,
        "size": size,
        "status": "error",
        "error_phase": "trace",
        "error_type": "jax.errors.TracerBoolConversionError",
        "error_message": "Attempted boolean conversion of traced array",
        "hint": "use jax.lax.cond",
        "timestamp": "2025-03-01T12:00:00",
        **extra,
    }


def write_sweep(root: Path, rows: list[dict], *, gather: bool = True) -> Path:
    """One job folder per row, like a Hydra multirun, plus the gathered CSV."""
    for num, row in enumerate(rows):
        write_csv(pd.DataFrame([{**row, "job_num": num}]), root / str(num) / RESULTS_CSV)
    if gather:
        load_results(root)
    return root


def sweep_rows() -> list[dict]:
    """Two sizes of a quadratic workload in three modes, one failing workload, one param workload."""
    rows = []
    for size in (100, 200):
        e = 1e-8 * size**2
        rows += [
            ok("square", "eager", size, 4 * e, 40 * e),
            ok("square", "jit", size, e, 0.02 + e, compile_s=0.015),
            ok("square", "aot", size, e, 0.021 + e, compile_s=0.016),
        ]
    rows += [ok("cond", "eager", 10, 2e-5, 1e-3), error("cond", "jit", 10)]
    rows += [ok("loop", "eager", 10, 1e-4, 1e-3, param_n=3), ok("loop", "jit", 10, 2e-5, 0.01, param_n=3)]
    return rows


def frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows)


class LaunchRefused(AssertionError):
    """A test started a process its layer may not start (tests/unit: none; tests/inprocess: no subprocess)."""


def refuse_processes(monkeypatch, layer: str, *, in_process_jobs: bool) -> None:
    """Make starting a subprocess, a multiprocessing process or its forkserver, or a fresh worker fail the test,
    naming the layer; `isolate=none` jobs (engine.processes.InProcess) stay allowed where in_process_jobs, and so do
    the git commands such a job's driver runs to record the commit of the code (jitexp.provenance)."""
    import multiprocessing.forkserver
    import multiprocessing.process

    from jitexp.engine import processes

    def refuse(*args, **kwargs):
        raise LaunchRefused(f"{layer} may not start a process: move the test to a layer that may (tests/conftest.py)")

    popen = subprocess.Popen.__init__

    def only_git(self, cmd, *args, **kwargs):
        if not (isinstance(cmd, list) and cmd[:1] == ["git"]):
            refuse()
        popen(self, cmd, *args, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", only_git if in_process_jobs else refuse)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse)
    monkeypatch.setattr(multiprocessing.forkserver, "ensure_running", refuse)  # the server itself, not Popen
    monkeypatch.setattr(processes.FreshProcess, "launch", refuse)
    if not in_process_jobs:
        monkeypatch.setattr(processes.InProcess, "launch", refuse)


def history_run(
    root: Path,
    name: str,
    commit: str | None,
    date: str | None,
    ran: str,
    steady: float,
    compile_s: float = 0.02,
    compiles: Sequence[float] = (0.018, 0.019, 0.02, 0.021, 0.022, 0.03),
    **extra,
) -> Path:
    """A run of two cases (matmul jit, and an error row) at one commit, its processes' compile times in `compiles`."""
    code = {"code_commit": commit, "code_commit_date": date, "code_subject": f"commit {commit}", "code_dirty": False}
    rows = [
        ok("matmul", "jit", 64, steady, 0.05, compile_s=compile_s, trace_s=0.004, n_processes=6, timestamp=ran, **code)
        | extra,
        error("cond", "jit", 8, timestamp=ran, **code),
    ]
    folder = write_sweep(root / name, rows, gather=False)  # jitexp-history reads the job folders
    procs = pd.DataFrame({"mode": "jit", "process": range(6), "compile_s": list(compiles), "replaced": False})
    write_csv(procs, folder / "0" / PROCESSES_CSV)
    return folder


def history_commits(root: Path, steady: list[float], compile_s: list[float], seed: int = 0) -> list[Path]:
    """One run per commit c1..cN of a matmul jit case, with this VM's between-run noise (steady sd 0.077, compile
    0.12 in log) and each run's own CI (+-2%, and six processes' compile times for the compile CI)."""
    rng = np.random.default_rng(seed)
    folders = []
    for i, (level, comp) in enumerate(zip(steady, compile_s), start=1):
        value, comp = level * math.exp(rng.normal(0, 0.077)), comp * math.exp(rng.normal(0, 0.12))
        when = (f"2026-01-{i:02d}T10:00:00+00:00", f"2026-02-{i:02d}T10:00:00")
        folders.append(history_run(root, f"r{i:02d}", f"c{i}", *when, value, comp, comp * np.linspace(0.95, 1.05, 6)))
    return folders


# a workload module whose step does WORK matmuls: a commit changes its cost (the history and bisect repositories)
WORK_MODULE = """import jax.numpy as jnp

WORK = {work}


def step(x):
    for _ in range(WORK):
        x = jnp.tanh(x @ x)
    return x
"""


# The variants tests' user module, abcode: `once` does one matmul and tanh, `thrice` three, `two` takes two arguments
# (an arity mistake); `once_here` and `sixteen_here` do 1x or 16x that in each worker process, times 1 or 4 by process
# (`level`, alternating over the processes that ask)
ABCODE = """import fcntl
import pathlib

import jax.numpy as jnp


def once(x):
    return jnp.tanh(x @ x)


def thrice(x):
    for _ in range(3):
        x = jnp.tanh(x @ x)
    return x


def two(x, y):
    return x + y


def level():
    # this worker process's own amount of work: 1 or 4, alternating over the processes that ask
    if not _level:
        with open(pathlib.Path(__file__).with_name("abcode.count"), "a+") as f:
            fcntl.flock(f, fcntl.LOCK_EX)  # held until closed: one process counts at a time
            f.seek(0)
            _level.append(1 + 3 * (len(f.read()) % 2))
            f.write("x")
    return _level[0]


_level = []


def once_here(x):
    for _ in range(level()):
        x = jnp.tanh(x @ x)
    return x


def sixteen_here(x):
    for _ in range(16 * level()):
        x = jnp.tanh(x @ x)
    return x
"""
ABCODE_ARGS = "workload.args=[{shape:[${size},${size}]}]"  # abcode's functions take one size x size matrix


def abcode_module(tmp_path: Path, monkeypatch) -> None:
    """tmp_path/abcode.py, importable here and by the installed `jitexp` run from tmp_path (the current directory)."""
    (tmp_path / "abcode.py").write_text(ABCODE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    sys.modules.pop("abcode", None)


def git(repo: Path, *args: str) -> str:
    """`git -C repo ARGS`'s output; a failing git command fails the test."""
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def git_init(repo: Path) -> Path:
    """A new git repository at repo, with a committer set."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "dev")
    return repo


# one job of a `jitexp-history bisect` command: bisect_repository's workload at each commit
BISECT_JOB = [
    "jitexp",
    "workload=custom",
    "workload.fn=wl.step",
    "workload.args=[{shape:[128,128]}]",
    "mode=jit",
    "timing=quick",
]


def bisect_repository(
    repo: Path, commits: int, slower_from: int, broken: int | None = None, where: str = "wl.py"
) -> list[str]:
    """A repo of `commits` commits of wl.py (at `where`): twelve times the work from `slower_from`, `broken` does not
    import; its commits, oldest first."""
    git_init(repo)
    (repo / where).parent.mkdir(parents=True, exist_ok=True)
    (repo / ".gitignore").write_text("bisect/\n__pycache__/\n")
    for i in range(1, commits + 1):
        text = WORK_MODULE.format(work=12 if i >= slower_from else 1)
        (repo / where).write_text(text + ("import not_a_module\n" if i == broken else ""))
        git(repo, "add", where, ".gitignore")
        git(repo, "commit", "-qm", f"commit {i}", "--allow-empty")
    return git(repo, "log", "--reverse", "--format=%H").split()


@functools.cache
def slurm_answers() -> bool:
    """A SLURM cluster with a node up answers here (scripts/slurm_cluster.sh starts one; .ci/run does)."""
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        return False
    try:
        states = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return any(s in states for s in ("idle", "mix", "alloc"))


def job_config(
    args: list[dict], *, workload=None, mode=None, timing=None, device=None, mesh=None, distributed=None, **top
) -> ExperimentConfig:
    """A job built as dataclasses, without Hydra: fn pkg.mod.f of `args`, eager and jit, size 8, with each section's
    changes given (the unit tests of config/'s rules reach every rule this way)."""
    return ExperimentConfig(
        workload=WorkloadConfig(**{"fn": "pkg.mod.f", "args": args, **(workload or {})}),
        mode=ModeConfig(**{"eager": True, "jit": True, **(mode or {})}),
        timing=TimingConfig(**(timing or {})),
        device=DeviceConfig(**(device or {})),
        mesh=MeshConfig(**(mesh or {})),
        distributed=DistributedConfig(**(distributed or {})),
        **{"size": 8, **top},
    )


def depth_job(folder: Path, isolate: str) -> int:
    """Run an eager job of `depthfns.plus_one`, which records how many Python frames lie below each of its calls,
    and give the most common count: the rounds' calls outnumber the cold call and the probes (issue 61)."""
    from collections import Counter

    from jitexp import compose, run

    record = folder / "depths.txt"
    (folder / "depthfns.py").write_text(
        "import sys\n"
        "def plus_one(x):\n"
        "    frame, n = sys._getframe(), 0\n"
        "    while frame is not None:\n"
        "        n, frame = n + 1, frame.f_back\n"
        f"    with open({str(record)!r}, 'a') as f:\n"
        "        f.write(f'{n}\\n')\n"
        "    return x + 1\n"
    )
    sys.path.insert(0, str(folder))
    sys.modules.pop("depthfns", None)
    try:
        overrides = ["timing=quick", f"isolate={isolate}", "workload=custom", "workload.fn=depthfns.plus_one"]
        assert run(compose([*overrides, "mode=eager", "workload.args=[{shape:[]}]"])).row["status"] == "ok"
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("depthfns", None)
    return int(Counter(record.read_text().split()).most_common(1)[0][0])
