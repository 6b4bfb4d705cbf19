"""The how-to guides' named examples (docs/howto/*.md), written and run exactly as printed, from a fresh directory,
through the installed commands, each checked further than its exit code.

Where two of a block's commands run the same job, one runs here and tests/inprocess/test_howto_commands.py shows the
other composes to that job (and checks every command before running). The guides' `<!-- run -->` blocks are run as
they are by tests/e2e/test_docs_pages.py."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from helpers import read, run_cli, shared_env
from howto_blocks import (
    BEFORE_AFTER,
    HISTORY,
    MESH,
    PYTEST,
    PYTHON,
    block,
    commands,
    own_models,
    own_workload,
    write_files,
)


@pytest.mark.slow
@pytest.mark.parametrize("index", [1, 3])  # 0 is 1 without the twin, 2 sweeps 1's job (test_howto_commands)
def test_own_function_example_runs_verbatim(tmp_path, index):
    argv = own_workload(tmp_path)[index]
    assert "-m" not in argv
    out = tmp_path / "job"
    proc = run_cli([*argv[1:], "timing=quick", f"hydra.run.dir={out}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = read(out / "results.csv")
    assert (rows["status"] == "ok").all(), rows[["mode", "status", "error_message"]]
    assert rows["workload"].eq("myloss").all()
    if "numpy" in " ".join(argv):
        assert list(rows["mode"]) == ["eager", "jit", "numpy"]
        assert rows.loc[rows["mode"] != "numpy", "matches_numpy"].astype(str).eq("True").all()
        assert rows["param_reduction"].eq("mean").all() and rows["param_smoothing"].eq(0.1).all()
    else:
        assert list(rows["mode"]) == ["eager", "jit"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "index", [1, 2, 4]
)  # 0 is 1 with the other reduction, 3 is 2's job swept (test_howto_commands)
def test_model_example_runs_verbatim(tmp_path, index):
    # needs the models extra: a params pytree from setup, a carried optax step with donation, equinox
    pytest.importorskip("optax")
    pytest.importorskip("equinox")
    argv = own_models(tmp_path)[index]
    out = tmp_path / "job"
    where = "hydra.sweep.dir" if "-m" in argv else "hydra.run.dir"
    proc = run_cli([*argv[1:], "timing=quick", "size=16", f"{where}={out}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = read(out / "results.csv")
    assert (rows["status"] == "ok").all(), rows[["mode", "status", "error_message"]]
    assert (rows["setup_s"] > 0).all()
    jit = rows[rows["mode"] == "jit"]
    assert jit["matches_eager"].astype(str).eq("True").all()
    if "workload=train_step" in argv:
        assert list(rows["mode"]) == ["eager", "jit", "aot"]
        assert rows.loc[rows["mode"] == "aot", "matches_eager"].astype(str).eq("True").all()
        assert jit["donation"].str.startswith("carried: output 0 -> argument 0, output 1 -> argument 1").all()
        assert jit["donation"].str.endswith("argument(s) [0, 1] donated").all(), jit["donation"]
    if "workload.kwargs.reduction=sum" in argv:
        assert rows["workload"].eq("mlp_loss").all()
    if "equinox.filter_jit" in " ".join(argv):
        assert (rows["jit_fn"] == "equinox.filter_jit").all()


@pytest.mark.slow
def test_python_example_runs_verbatim(tmp_path):
    (tmp_path / "example.py").write_text(block(PYTHON, "python-example"))
    proc = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("loss f32[64,32] f32[64,8] +params float32 cpu: eager "), proc.stdout
    rows = read(tmp_path / "runs" / "loss" / "results.csv")
    assert list(rows["mode"]) == ["eager", "jit"] and (rows["status"] == "ok").all()


@pytest.mark.slow
def test_pytest_example_runs_verbatim(tmp_path, monkeypatch):
    # each command as printed, with the quick timing added: one process a side, so the comparison cannot tell,
    # and the guide says that fails unless --jitexp-allow-undetectable
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this suite may itself run under xdist
    assert write_files(tmp_path, PYTEST) == {"test_perf.py"}
    found = commands(PYTEST, "pytest-commands")
    assert [argv[:2] for argv in found] == [["pytest", "test_perf.py"]] * 3
    assert [argv[2] for argv in found] == ["--jitexp-save=main", "--jitexp-compare=main", "--jitexp-disable"]
    test = "test_perf.py::test_step_speed"
    ran = {}
    for argv in found:
        ran[argv[2]] = run_cli([*argv[1:], "--jitexp-timing=quick"], cwd=tmp_path, name="pytest")
    save, compare, disable = ran.values()
    assert save.returncode == 0 and "1 passed" in save.stdout and test in save.stdout, save.stdout[-3000:]
    # the baseline holds the measured case, with its figures
    saved = tmp_path / ".jitexp" / "main" / "test_perf.py_test_step_speed"
    rows = read(saved / "results.csv").set_index("mode")
    assert list(rows.index) == ["eager", "jit"] and (rows["status"] == "ok").all()
    assert rows["workload"].eq("step").all() and rows["overrides"].eq(test).all()
    assert rows["size"].eq(64 * 64).all() and rows["dtype"].eq("float32").all() and rows["n_processes"].eq(1).all()
    assert (rows[["median_s", "first_call_s", "compile_s"]] > 0).all().all()
    assert rows.loc["jit", "first_call_compiles"] == 1 and rows.loc["jit", "speedup"] > 0
    assert set(read(saved / "samples.csv")["mode"]) == {"eager", "jit"}
    assert set(read(saved / "processes.csv")["mode"]) == {"eager", "jit"}
    # compared with one process a side: 'cannot tell' fails the test, and says how to get a verdict
    assert compare.returncode == 1 and "1 failed" in compare.stdout, compare.stdout[-3000:]
    assert f"jitexp: {test}: " in compare.stdout and "cannot tell (1 process per side)" in compare.stdout
    assert "(--jitexp-timing=default) or pass --jitexp-allow-undetectable" in compare.stdout
    assert disable.returncode == 0 and "1 passed" in disable.stdout and "not timed (--jitexp-disable)" in disable.stdout
    # the same comparison passing with --jitexp-allow-undetectable: test_plugin's baseline-from-another-machine test


SLOWER_PERF = """
import jax.numpy as jnp
import numpy as np

from jitexp.api import timing_presets

N = {n}
FOUR = {{**timing_presets()["quick"], "processes": 4, "max_processes": 4}}


def step(x):
    for _ in range(N):
        x = jnp.tanh(x @ x)
    return jnp.sum(x)


def test_step_speed(jitexp_measure):
    jitexp_measure(step, np.ones((128, 128), np.float32), timing=FOUR)
"""


@pytest.mark.slow
@pytest.mark.serial  # asserts on verdicts from timings
def test_the_pytest_plugin_fails_a_test_sixteen_times_slower_than_its_baseline(tmp_path, monkeypatch):
    # The pytest guide's regression check with a verdict: four processes a side (the fewest at which the
    # two-sample test can reach p < 0.05: 2 / C(8, 4)), and sixteen times the work after the baseline.
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    perf = tmp_path / "test_perf.py"
    perf.write_text(SLOWER_PERF.format(n=1))
    save = run_cli(["test_perf.py", "--jitexp-save=main"], cwd=tmp_path, name="pytest")
    assert save.returncode == 0 and "1 passed" in save.stdout, save.stdout[-3000:]
    assert (
        read(tmp_path / ".jitexp" / "main" / "test_perf.py_test_step_speed" / "results.csv")["n_processes"].eq(4).all()
    )
    perf.write_text(SLOWER_PERF.format(n=16))
    compare = run_cli(["test_perf.py", "--jitexp-compare=main", "--jitexp-fail-on=steady"], cwd=tmp_path, name="pytest")
    assert compare.returncode == 1 and "1 failed" in compare.stdout, compare.stdout[-3000:]
    # the failure line the pytest guide describes: the test, the mode and metric, the ratio with its CI and p
    failures = re.findall(
        r"jitexp: test_perf.py::test_step_speed: (eager|jit) steady ([\d.]+)x slower than the baseline 'main' "
        r"\(95% CI [\d.]+x-[\d.]+x, p=[<\d.e-]+, 4 vs 4 processes\): slower beyond the 5% threshold",
        compare.stdout,
    )
    # each line is printed twice: in the failure's section and in pytest's short summary
    assert sorted(set(mode for mode, _ in failures)) == ["eager", "jit"], compare.stdout[-3000:]
    assert all(float(ratio) > 3 for _, ratio in failures), failures


def assert_one_pair_ratios(rows, column: str, base: str, new: str) -> None:
    """With one process a side, each ab_* ratio is new's figure over base's, mode by mode."""
    by = rows.set_index([column, "mode"])
    for mode in ("eager", "jit"):
        for metric, figure in (("steady", "median_s"), ("first_call", "first_call_s"), ("compile", "compile_s")):
            assert by.loc[(new, mode), f"ab_{metric}_n_pairs"] == 1
            assert by.loc[(new, mode), f"ab_{metric}_ratio"] == pytest.approx(
                by.loc[(new, mode), figure] / by.loc[(base, mode), figure], rel=1e-9
            ), (mode, metric)


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(commands(BEFORE_AFTER, "variant-commands"))))
def test_variants_example_runs_verbatim(tmp_path, index):
    # two versions of a function in one job: variant rows, ab_* columns against the first
    assert write_files(tmp_path, BEFORE_AFTER) == {"mysoftmax.py"}
    argv = commands(BEFORE_AFTER, "variant-commands")[index]
    out = tmp_path / "job"
    proc = run_cli([*argv[1:], "timing=quick", "size=32", f"hydra.run.dir={out}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = read(out / "results.csv")
    assert (rows["status"] == "ok").all(), rows[["variant", "mode", "status", "error_message"]]
    assert list(rows["variant"]) == ["before", "before", "after", "after"]
    # timing=quick: one process, one pair, so 'cannot tell' whatever the data (the guide says so; six pairs give
    # verdicts: test_variants, test_envs); the ratios are that pair's, after's figure over before's of the same mode
    assert rows.loc[rows["variant"] == "after", "ab_steady_verdict"].eq("cannot tell (1 process pair)").all()
    assert_one_pair_ratios(rows, "variant", "before", "after")
    assert re.search(r"after jit (as fast as|[\d.]+x (faster|slower) than) before", proc.stdout), proc.stdout


@pytest.mark.slow
def test_two_jax_versions_recipe_runs_verbatim_as_an_aa_run(tmp_path):
    # The recipe's venv lines install jax $OLD and $NEW. The package index here offers one jax within
    # jitexp's pins (0.10.2), so the test makes old/ and new/ as two venvs of this same install
    # (test_envs.shared_env: no pip, a .pth to this venv's packages) instead of running pip; the jitexp
    # line runs as printed, plus timing=quick, a small size and the run folder.
    lines = [line for line in block(BEFORE_AFTER, "envs-commands").splitlines() if line.strip()]
    venvs = [shlex.split(line) for line in lines if line.startswith("python3 -m venv ")]
    assert [v[3] for v in venvs] == ["old", "new"] and all("jax==$" in " ".join(v) for v in venvs)
    for v in venvs:
        shared_env(tmp_path / v[3])
    [argv] = [shlex.split(line) for line in lines if line.startswith("jitexp ")]
    out = tmp_path / "job"
    proc = run_cli([*argv[1:], "timing=quick", "size=32", f"hydra.run.dir={out}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = read(out / "results.csv")
    assert (rows["status"] == "ok").all(), rows[["env", "mode", "status", "error_message"]]
    assert sorted(zip(rows["env"], rows["mode"])) == [
        ("new", "eager"),
        ("new", "jit"),
        ("old", "eager"),
        ("old", "jit"),
    ]
    new = rows[rows["env"] == "new"]
    assert (new["ab_baseline"] == "old").all()
    # timing=quick: one process pair, so 'cannot tell' whatever the data (test_envs has a real difference, six pairs)
    assert new["ab_steady_verdict"].eq("cannot tell (1 process pair)").all()
    assert_one_pair_ratios(rows, "env", "old", "new")
    assert re.search(r"new jit (as fast as|[\d.]+x (faster|slower) than) old: cannot tell", proc.stdout), proc.stdout


def test_history_commands_run_verbatim(tmp_path):
    """The history guide's block, run by bash as printed, with the installed commands on the PATH."""
    import os
    from pathlib import Path

    import pandas as pd

    from helpers import command

    env = {**os.environ, "HYDRA_FULL_ERROR": "0", "PATH": f"{Path(command('jitexp')).parent}:{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    script = block(HISTORY, "history-commands")
    proc = subprocess.run(
        ["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (
        "3 runs, 2 cases, 7 metrics, on 1 machine; 0 steps: history/history.csv" in proc.stdout
    )  # eager, jit; memory (issue 59)
    tidy = pd.read_csv(tmp_path / "history" / "history.csv")
    assert sorted(tidy["run"].unique()) == ["runs/1", "runs/2", "runs/3"] and sorted(tidy["order"].unique()) == [
        0,
        1,
        2,
    ]
    assert set(tidy["metric"]) >= {"steady", "first_call", "compile", "trace", "peak_memory_bytes", "temp_bytes"}
    # one commit for all (the built-in's repository with an editable install; none from site-packages in a temp dir)
    assert tidy["code_commit"].nunique(dropna=False) == 1
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("**jitexp-history**: newest run ") and "| case | metric | newest | before |" in summary
    assert (tmp_path / "history" / "index.html").stat().st_size > 100_000  # plotly inlined


@pytest.mark.slow
def test_devices_commands_run_verbatim_and_the_scaling_page_renders(tmp_path):
    # each jitexp command as printed plus timing=quick (jitexp-report as printed); needs the models extra. The
    # scaling sweep adds check=false too: its four checks would each step eagerly on their mesh (~3 s a job); the
    # first command's check, on four devices, is asserted
    pytest.importorskip("optax")
    from e2e.test_report_page_browser import CHECK, headless

    lines = [line for line in block(MESH, "devices-commands").splitlines() if line.strip()]
    runs = tmp_path / "outputs" / "run"
    for line in lines:
        argv = shlex.split(line)
        args = [*argv[1:], "timing=quick"] if argv[0] == "jitexp" else argv[1:]
        args += ["check=false"] if "experiment=mesh_scaling" in argv else []
        proc = run_cli(args, cwd=tmp_path, name=argv[0])
        assert proc.returncode == 0, (line, proc.stderr[-3000:])
    dp, tp, paired = (read(p / "results.csv") for p in sorted(runs.iterdir()))
    assert (dp["status"] == "ok").all() and (dp["mesh"] == "data=4").all() and (dp["device_count"] == 4).all()
    assert dp["mode"].tolist() == ["jit"] and dp["all_reduce_count"].iloc[0] >= 1  # the gradients
    assert dp["matches_eager"].astype(str).tolist() == ["True"]  # sharded, against the eager step on the same mesh
    assert (tp["shardings"] == "1:P(None, 'model') 2:P('model', None)").all()
    assert tp[["all_reduce_count", "collectives"]].values.tolist() == [[1, 1]]  # Megatron's one all-reduce
    # one device against four in the same processes: each variant its own mesh, four paired against one
    assert paired[["variant", "mesh", "all_reduce_count"]].values.tolist() == [
        ["one", "model=1", 0],
        ["four", "model=4", 1],
    ]
    assert paired["ab_baseline"].iloc[1] == "one" and paired["ab_steady_ratio"].iloc[1] > 0
    scaling = read(tmp_path / "outputs" / "mesh_scaling" / "results.csv")
    assert sorted(scaling["device_count"]) == [1, 2, 4, 8] and (scaling["status"] == "ok").all()
    assert scaling["mesh"].tolist() == [f"data={n}" for n in scaling["device_count"]]
    assert (scaling.loc[scaling["device_count"] > 1, "all_reduce_count"] >= 1).all()
    assert scaling.loc[scaling["device_count"] == 1, "collectives"].tolist() == [0]
    report = tmp_path / "outputs" / "mesh_scaling" / "report"
    assert len(list(report.glob("devices_dp_train_step_*.png"))) == 1
    page = (report / "index.html").read_text()
    assert "speedup against one device over the device counts a sweep measured" in page  # its caption
    checked = report / "checked.html"
    checked.write_text(page.replace("</body>", CHECK + "</body>"))
    dom = headless(["--dump-dom", checked.as_uri()], tmp_path / "profile").stdout
    match = re.search(r'data-check="images=(\d+) loaded=(\d+) rows=(\d+)"', dom)
    assert match and match[1] == match[2] and int(match[1]) == page.count("<img "), dom[-2000:]
