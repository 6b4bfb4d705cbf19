"""hydra/sweeper=tune on the CPU with timing=quick: a real small study finds a planted optimum, a failing trial is a
row with its reason, and a study killed mid-way and resumed ends with exactly N trials, none measured twice."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from helpers import command, run_cli

pytestmark = pytest.mark.skipif(
    __import__("importlib").util.find_spec("optuna") is None, reason="needs the tune extra (optuna)"
)

# k's steady time grows with |k - 4| (1 + 3|k - 4| matmuls of 96x96); k=8 raises while tracing: a compile error
PLANTED = """
import jax.numpy as jnp


def f(x, k):
    if k == 8:
        raise ValueError("k=8 is refused")
    for _ in range(1 + 3 * abs(k - 4)):
        x = jnp.tanh(x @ x)
    return x
"""
WORKLOAD = [
    "mode=jit",
    "timing=quick",
    "workload=custom",
    "workload.fn=planted.f",
    "workload.args=[{shape:[96,96]},{value:${workload.params.k}}]",
    "+workload.params.k=1",
    "workload.static_argnums=[1]",
]


def study(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, Path]:
    (tmp_path / "planted.py").write_text(PLANTED)
    out = tmp_path / "sweep"
    proc = run_cli(["-m", "hydra/sweeper=tune", *WORKLOAD, *args, f"hydra.sweep.dir={out}"], cwd=tmp_path, timeout=400)
    return proc, out


@pytest.mark.slow  # ~40 s: four trials, the runoff's six processes and the confirmation's six
def test_a_study_finds_the_planted_optimum_and_records_a_failed_trial(tmp_path):
    proc, out = study(
        tmp_path, "hydra.sweeper.params.workload.params.k=choice(1,2,4,8)", "tune.trials=4", "tune.seed=3"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    trials = pd.read_csv(out / "trials.csv")
    assert sorted(trials["param_workload.params.k"]) == [1, 2, 4, 8]  # four trials, no point twice
    assert list(trials["job_num"]) == [0, 1, 2, 3]
    best = trials[trials["best"]]
    assert list(best["param_workload.params.k"]) == [4]
    failed = trials[trials["state"] == "failed"]
    assert list(failed["param_workload.params.k"]) == [8]
    assert "compile error" in failed["failed_why"].iloc[0] and "k=8 is refused" in failed["failed_why"].iloc[0]
    rows = pd.read_csv(out / "results.csv")
    assert (rows[rows["param_k"] == 8]["status"] == "error").all()  # the failed trial is a row of the sweep too
    assert "trial 4 of 4: " in proc.stdout and "best so far: trial" in proc.stdout
    # the best (4 matmuls fewer than k=1... 10 against 1) confirmed in paired fresh processes against k=1
    verdict = [line for line in proc.stdout.splitlines() if line.startswith("best: k=4: ")]
    assert verdict and "faster than the baseline (95% CI" in verdict[0], proc.stdout[-2000:]
    assert (out / "tune.txt").read_text().strip() == verdict[0]


@pytest.mark.serial  # kills the process group
@pytest.mark.slow  # ~40 s: five trials over two runs, and the runoff
def test_a_study_killed_after_three_trials_resumes_to_exactly_n(tmp_path):
    (tmp_path / "planted.py").write_text(PLANTED)
    out = tmp_path / "sweep"
    args = [
        command("jitexp"),
        "-m",
        "hydra/sweeper=tune",
        *WORKLOAD,
        "hydra.sweeper.params.workload.params.k=choice(1,2,3,4,5,6)",
        "tune.trials=5",
        "tune.confirm_processes=0",
        f"hydra.sweep.dir={out}",
    ]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.startswith("trial 3 of 5"):
            os.killpg(proc.pid, signal.SIGKILL)  # a crash: no handler runs
            break
    proc.wait(timeout=60)
    assert any(line.startswith("trial 3 of 5") for line in seen), "".join(seen)[-2000:]
    before = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/results.csv")}
    assert {"0", "1", "2"} <= set(before)
    again = run_cli(["-m", "hydra/sweeper=tune", *args[3:], "resume=true"], cwd=tmp_path, timeout=400)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "tune: resuming the study" in again.stdout
    trials = pd.read_csv(out / "trials.csv")
    assert len(trials) == 5 and list(trials["job_num"]) == [0, 1, 2, 3, 4]
    assert trials["param_workload.params.k"].is_unique
    assert (trials["state"] == "complete").all()
    after = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("*/results.csv") if p.parent.name.isdigit()}
    assert sorted(after) == ["0", "1", "2", "3", "4"]
    assert all(after[job] == before[job] for job in before)  # none measured again
    rows = pd.read_csv(out / "results.csv")
    assert len(rows[rows["variant"].isna()] if "variant" in rows else rows) == 5  # the runoff's rows are variants


def test_asking_for_the_sweeper_without_optuna_names_the_extra(tmp_path):
    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / "optuna.py").write_text("raise ImportError('no optuna here')\n")  # as if the extra were not installed
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, "PYTHONPATH": str(blocked)}
    proc = subprocess.run(
        [command("jitexp"), "-m", "hydra/sweeper=tune", "workload=apply_n_times", "workload.params.n=choice(1,2)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip().splitlines() == [
        "jitexp: error: hydra/sweeper='tune' is invalid; needs Optuna, in jitexp's tune extra: pip install 'jitexp[tune]'"
    ]


@pytest.mark.slurm
@pytest.mark.serial  # a cluster's jobs time things
@pytest.mark.skipif(
    __import__("importlib").util.find_spec("hydra_plugins.hydra_submitit_launcher") is None,
    reason="needs the slurm extra (hydra-submitit-launcher)",
)
def test_a_study_runs_its_trials_through_slurm(tmp_path):
    proc, out = study(
        tmp_path,
        "hydra/launcher=jitexp_slurm",
        "hydra.launcher.partition=debug",
        "hydra.sweeper.params.workload.params.k=choice(2,4)",
        "tune.trials=2",
        "tune.confirm_processes=0",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    trials = pd.read_csv(out / "trials.csv")
    assert sorted(trials["param_workload.params.k"]) == [2, 4] and (trials["state"] == "complete").all()
    assert list(trials[trials["best"]]["param_workload.params.k"]) == [4]
    assert trials["runoff_0"].notna().all()  # the two measured again side by side before the best was named
    assert len(list(out.glob(".submitit/*/*submission.sh"))) == 3  # each trial a SLURM job, and the runoff's job


def test_jitexp_tune_runs_a_study_from_python(tmp_path, monkeypatch):
    import jitexp

    (tmp_path / "planted.py").write_text(PLANTED)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    args = [*WORKLOAD, "workload.params.k=choice(2,4)", "tune.trials=2", "tune.confirm_processes=0"]
    result = jitexp.tune(args, folder=tmp_path / "study", verbose=False)
    assert result.returncode == 0 and len(result.trials) == 2
    assert result.best == {"workload.params.k": 4} and result.verdict == ""
    with pytest.raises(jitexp.ConfigError):
        jitexp.tune([*args, "tune.objective=fast"], folder=tmp_path / "other")
