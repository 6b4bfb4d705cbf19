"""The installed `jitexp` command in a subprocess, from a directory outside the repository: a single job, a sweep,
the textbook speedup and its report, exit codes. (The textbook sweeps: tests/inprocess/test_textbook_sweeps.py; a
user's --config-dir workload: tests/inprocess/test_user_config_dir.py; --help and --version: test_help_page.py; a
mistake through the command, one line and exit 2: test_config_mistakes_cli.py, and each message in-process:
tests/inprocess/test_config_mistakes.py.)"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from helpers import read, run_cli, sweep
from jitexp.store.schema import COLUMNS, SAMPLE_COLUMNS


def test_single_run_writes_job_csvs_in_the_default_output_dir(tmp_path):
    proc = run_cli(["timing=quick", "size=16", "mode=[eager,aot]"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    jobs = list((tmp_path / "outputs" / "run").glob("*/results.csv"))
    assert len(jobs) == 1
    out = jobs[0].parent
    rows = read(out / "results.csv")
    assert list(rows.columns[:7]) == ["workload", "mode", "size", "inputs", "input_shapes", "dtype", "static_argnums"]
    assert set(COLUMNS) <= set(rows.columns)
    assert list(rows["status"]) == ["ok", "ok"] and list(rows["mode"]) == ["eager", "aot"]
    samples = read(out / "samples.csv")
    assert list(samples.columns) == SAMPLE_COLUMNS
    assert samples.groupby("mode").size().to_dict() == rows.set_index("mode")["n_samples"].to_dict()
    processes = read(out / "processes.csv")
    assert set(processes["mode"]) == {"eager", "aot"} and (processes["process"] == 0).all()
    assert (out / ".hydra" / "config.yaml").exists()
    # the job's block on stdout (plain in a pipe), its one-line form in the job's log file only
    block = proc.stdout.splitlines()
    assert block[0] == "compute_heavy size=16 float32 cpu" and all(len(ln) <= 100 for ln in block), proc.stdout
    assert [ln.split()[0] for ln in block[1:3]] == ["eager", "aot"] and "\x1b[" not in proc.stdout
    assert any(ln.startswith("  verdict   aot ") and "than eager" in ln for ln in block), proc.stdout
    logged = [ln for ln in (out / "jitexp.log").read_text().splitlines() if "compute_heavy size=16 float32 cpu: " in ln]
    assert len(logged) == 1 and "[INFO]" in logged[0] and " -> aot " in logged[0]
    assert "compute_heavy size=16 float32 cpu: " not in proc.stdout + proc.stderr  # the line is the log's
    where = out.relative_to(tmp_path)  # relative: under the cwd
    assert block[-2:] == [f"  results   {where}/", f"  next      jitexp-report {where}"]
    report = run_cli(["--no-plots"], cwd=tmp_path, name="jitexp-report")  # no DIR: the newest run
    assert report.returncode == 0, report.stderr
    assert (out / "report" / "summary.md").is_file()
    proc = subprocess.run(
        [sys.executable, "-m", "jitexp", "--cfg", "job", "size=5"], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 0 and "size: 5" in proc.stdout


def test_sweep_gathers_every_job_and_a_missing_device_is_an_error_row_and_the_sweep_goes_on(tmp_path):
    # -m: separate, unpaired jobs. A config mistake refuses the whole sweep before it starts
    # (tests/inprocess/test_config_mistakes.py); what only the machine can tell (no TPU here) stays a row.
    proc, out = sweep(["mode=eager,jit", "size=8", "device=cpu,tpu", "calls=2"], tmp_path)
    gathered = read(out / "results.csv")
    assert len(gathered) == 4
    assert sorted(gathered["job_num"]) == [0, 1, 2, 3]
    assert list(zip(gathered["mode"], gathered["status"])) == [
        ("eager", "ok"),
        ("eager", "error"),
        ("jit", "ok"),
        ("jit", "error"),
    ]
    for n in (1, 3):
        assert gathered.loc[n, "error_phase"] == "config" and "device.platform" in gathered.loc[n, "error_message"]
    code = gathered[["jitexp_version", "code_commit", "code_dirty"]].astype(str)
    assert len(code.drop_duplicates()) == 1 and code["jitexp_version"].iloc[0] != "nan"  # the error rows' too
    for n in (0, 2):
        calls = read(out / str(n) / "calls.csv")
        assert calls["compiles"].iloc[0] >= 1 and (calls["compiles"].iloc[1:] == 0).all()
    assert "jit" in proc.stdout and "results.csv" in proc.stdout
    # each job's answer in one line of at most 120 characters, where the sweep stands first
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("[")]
    assert [ln.split("]")[0].split()[0] for ln in lines] == ["[1/4", "[2/4", "[3/4", "[4/4"], proc.stdout
    assert all(len(ln) <= 120 for ln in lines) and "compute_heavy size=8 float32 cpu: eager " in proc.stdout, lines
    assert lines[3].startswith("[4/4 ") and "jit failed in config: ConfigError: device.platform" in lines[3], lines


@pytest.mark.serial  # compares two jobs' first-call times
def test_identical_jobs_both_compile_cold(tmp_path):
    _, out = sweep(["mode=jit", "seed=0,1", "size=32", "calls=2"], tmp_path)
    gathered = read(out / "results.csv")
    assert len(gathered) == 2
    for n in (0, 1):
        assert read(out / str(n) / "calls.csv")["compiles"].iloc[0] >= 1
    assert (gathered["first_call_s"] > 3 * gathered["median_s"]).all()
    # a leaked cache would make job 1's first call a fraction of job 0's (JAX_NOTES: 45 ms vs 0.19 ms)
    assert gathered["first_call_s"].max() / gathered["first_call_s"].min() < 5


@pytest.mark.slow
def test_textbook_speedup(tmp_path):
    out = tmp_path / "job"
    # two processes: a paired speedup whose 95% interval cannot exist yet (the signed-rank test needs six pairs), so
    # the verdict is known whatever the timings: cannot tell. (One quick process's eager-vs-jit verdict is not: on the
    # loaded 2-core VM a 10x jit speedup once measured 0.24x, its calls waiting on XLA's threads for a core.)
    two = ["timing.processes=2", "timing.max_processes=2"]
    proc = run_cli(["experiment=seed_speedup", "size=64", "timing=quick", *two, f"hydra.run.dir={out}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    df = read(out / "results.csv").set_index("mode")
    assert list(df.index) == ["eager", "jit"] and (df["status"] == "ok").all()
    assert (df["workload"] == "compute_heavy").all()
    assert df.loc["jit", "first_call_s"] > 3 * df.loc["jit", "median_s"]
    assert (df["compiles_during_timing"] == 0).all()
    assert df.loc["jit", "verdict"] == "cannot tell (fewer than 6 processes for a 95% interval)", df.loc["jit"]
    assert (df.loc["jit", "n_processes"], df.loc["jit", "speedup_ci_low"]) == (2, 0) and df.loc["jit", "speedup"] > 0
    report = run_cli([str(out)], cwd=tmp_path, name="jitexp-report")
    assert report.returncode == 0, report.stderr
    speedup = read(out / "report" / "speedup.csv")
    assert len(speedup) == 1 and speedup.loc[0, "mode"] == "jit" and speedup.loc[0, "pairing"] == "paired"
    assert speedup.loc[0, "speedup"] == pytest.approx(df.loc["jit", "speedup"], rel=1e-9)
    # over two processes the paired speedup is the Hodges-Lehmann estimate of the per-process log ratios: for two,
    # their mean (the geometric mean of each process's eager / jit median)
    per_process = read(out / "processes.csv").pivot(index="process", columns="mode", values="median_s")
    expected = float(np.exp(np.log(per_process["eager"] / per_process["jit"]).mean()))
    assert speedup.loc[0, "speedup"] == pytest.approx(expected, rel=1e-6)
    for name in (
        "time_compute_heavy_float32.png",
        "speedup_compute_heavy_float32.png",
        "coldstart_compute_heavy_float32.png",
    ):
        assert (out / "report" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert name in (out / "report" / "summary.md").read_text()
        assert name in report.stdout  # jitexp-report lists the files it wrote
    assert (out / "report" / "attribution.csv").exists()


def test_hydra_env_set_reaches_the_workers_though_the_forkserver_starts_before_composing(tmp_path):
    # The command line starts the workers' forkserver before Hydra composes (its `import jax` overlaps the
    # composing); a job whose hydra.job.env_set Hydra applies only when the job starts gets a fresh server.
    (tmp_path / "envprobe.py").write_text(
        "import os\n\ndef f(x):\n    assert os.environ.get('JITEXP_ENV_PROBE') == 'yes', 'no env_set here'\n"
        "    return x + 1\n"
    )
    args = ["workload=custom", "workload.fn=envprobe.f", "workload.args=[{shape:[4]}]", "mode=eager", "timing=quick"]
    proc = run_cli([*args, "+hydra.job.env_set.JITEXP_ENV_PROBE=yes", "hydra.run.dir=with"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert list(read(tmp_path / "with" / "results.csv")["status"]) == ["ok"]
    proc = run_cli([*args, "hydra.run.dir=without"], cwd=tmp_path)  # the probe fails: the test can fail
    assert proc.returncode == 1 and "no env_set here" in proc.stderr
