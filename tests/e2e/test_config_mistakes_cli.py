"""A config mistake reaches the terminal through the installed `jitexp` as one line on stderr and exit code 2,
before anything runs (issue 8), whether the preflight finds it or the job (inputs too big for memory);
HYDRA_FULL_ERROR=1 still shows everything; an arity mistake comes back from the preflight's child as the same
line. The messages themselves are checked in-process: tests/inprocess/test_config_mistakes.py."""

from __future__ import annotations

import os
import subprocess
import sys

from helpers import run_cli

MATMUL = "fn: jitexp.workloads.matmul\nargs: [{shape: [4, 4]}, {shape: [4, 4]}]\n"


def test_full_error_still_shows_everything(tmp_path):
    env = {**os.environ, "HYDRA_FULL_ERROR": "1"}
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [sys.executable, "-m", "jitexp", "size=abc"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr and "ValidationError" in proc.stderr  # Hydra's own error, chained
    assert "size='abc' is invalid" in proc.stderr


def test_a_bad_sweep_point_is_refused_before_the_sweep_starts(tmp_path):
    out = tmp_path / "sweep"
    proc = run_cli(["-m", "size=8", "dtype=float32,float128", "timing=quick", f"hydra.sweep.dir={out}"], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "jitexp: error: dtype='float128' is invalid; valid choices: float32, float16, bfloat16, float64"
    ]
    assert not out.exists()


def test_the_issues_typo_through_the_command_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "conf" / "workload").mkdir(parents=True)
    (tmp_path / "conf" / "workload" / "typo.yaml").write_text(MATMUL + "statc_argnums: [0]\n")
    proc = run_cli(["--config-dir", "conf", "workload=typo", "timing=quick"], cwd=tmp_path, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "jitexp: error: conf/workload/typo.yaml: workload.statc_argnums=[0] is invalid; no such key; "
        "did you mean workload.static_argnums?"
    ]
    assert not proc.stdout.strip() and not (tmp_path / "outputs").exists()


def test_inputs_too_big_for_memory_are_refused_before_anything_runs(tmp_path):
    proc = run_cli(["mode=jit", "size=2000000"], cwd=tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jitexp: error: size=2000000 is invalid; the inputs need about")


def test_an_arity_mistake_found_in_the_preflights_child_is_one_line_naming_the_variant(tmp_path):
    # the command line checks arities in a child of the workers' forkserver (engine.processes.Child): the mistake
    # comes back from it as the same one line, the variant's key included, and nothing runs
    out = tmp_path / "sweep"
    variants = "variants={one:{},two:{workload.fn:jitexp.workloads.add_one}}"
    proc = run_cli(
        ["-m", "workload=matmul", "size=4,8", variants, "timing=quick", f"hydra.sweep.dir={out}"], cwd=tmp_path
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "jitexp: error: variants.two.workload.args is invalid; it lists 2 argument(s), but "
        "jitexp.workloads.add_one(x) does not take 2 positional argument(s)"
    ]
    assert not out.exists()
