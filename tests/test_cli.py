"""The installed `jitexp` command in a subprocess, from a directory outside the repository."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

from helpers import read, run_cli, sweep
from jitexp.store.results import COLUMNS, SAMPLE_COLUMNS


def test_single_run_writes_job_csvs(tmp_path):
    out = tmp_path / "job"
    proc = run_cli(["timing=quick", "size=16", "mode=[eager,aot]", f"hydra.run.dir={out}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
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
    # the job's one-line verdict: a plain line on stdout, a log record in the job's log file
    line = [ln for ln in (proc.stderr + proc.stdout).splitlines() if "compute_heavy size=16" in ln]
    assert len(line) == 1 and line[0] in proc.stdout.splitlines()
    assert line[0].startswith("compute_heavy size=16 float32") and "aot" in line[0] and "than eager" in line[0]
    assert "unstable_reason" in line[0] or "unstable" not in line[0]  # reasons are counted, not listed
    logged = [ln for ln in (out / "jitexp.log").read_text().splitlines() if line[0] in ln]
    assert len(logged) == 1 and "[INFO]" in logged[0]
    assert "results: job/ (next: jitexp-report job)" in proc.stdout.splitlines()  # relative: under the cwd


def test_default_output_dir_and_python_dash_m(tmp_path):
    proc = run_cli(["timing=quick", "size=8"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    jobs = list((tmp_path / "outputs" / "run").glob("*/results.csv"))
    assert len(jobs) == 1
    report = run_cli(["--no-plots"], cwd=tmp_path, name="jitexp-report")  # no DIR: the newest run
    assert report.returncode == 0, report.stderr
    assert (jobs[0].parent / "report" / "summary.md").is_file()
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "jitexp", "--cfg", "job", "size=5"], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 0 and "size: 5" in proc.stdout


def test_sweep_gathers_every_job_and_prints_a_summary(tmp_path):
    proc, out = sweep(["mode=eager,jit", "size=8,16", "calls=2"], tmp_path)  # -m: separate, unpaired jobs
    gathered = read(out / "results.csv")
    assert len(gathered) == 4
    assert sorted(gathered["job_num"]) == [0, 1, 2, 3]
    assert set(zip(gathered["mode"], gathered["size"])) == {("eager", 8), ("eager", 16), ("jit", 8), ("jit", 16)}
    assert (gathered["status"] == "ok").all()
    for n in range(4):
        calls = read(out / str(n) / "calls.csv")
        assert calls["compiles"].iloc[0] >= 1 and (calls["compiles"].iloc[1:] == 0).all()
    assert "jit" in proc.stdout and "results.csv" in proc.stdout


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


def test_help_and_cfg_do_not_import_jax(tmp_path):
    code = (
        "import sys; from jitexp.cli import main; sys.argv = ['jitexp', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "assert 'jax' not in sys.modules, 'jax imported'\nprint('NOJAX')"
    )
    import subprocess

    for flags in (["--help"], ["--cfg", "job", "workload=apply_n_times"]):
        proc = subprocess.run([sys.executable, "-c", code, *flags], cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert "NOJAX" in proc.stdout
    assert "static_argnums:\n  - 1" in proc.stdout


def test_bad_value_is_one_line_and_exits_nonzero(tmp_path):
    proc = run_cli(["dtype=float128", "timing=quick"], cwd=tmp_path)
    assert proc.returncode == 2
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines == ["jitexp: error: dtype='float128' is invalid; valid choices: float32, float16, bfloat16, float64"]


def test_unknown_group_option_names_the_choices(tmp_path):
    proc = run_cli(["workload=nope"], cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("jitexp: error: workload='nope' is invalid; valid choices: add_one, apply_n_times,")
    assert "compute_heavy" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_missing_device_in_a_sweep_is_an_error_row_and_the_sweep_goes_on(tmp_path):
    # A config mistake refuses the whole sweep before it starts (test_mistakes.py);
    # what only the machine can tell (no TPU here) stays a row.
    _, out = sweep(["mode=jit", "size=8", "device=cpu,tpu"], tmp_path)
    gathered = read(out / "results.csv")
    assert list(gathered["status"]) == ["ok", "error"]
    assert gathered.loc[1, "error_phase"] == "config" and "device.platform" in gathered.loc[1, "error_message"]


def test_user_config_dir_adds_a_workload(tmp_path):
    conf = tmp_path / "myconf" / "workload"
    conf.mkdir(parents=True)
    (conf / "double.yaml").write_text(
        "name: double\nfn: jitexp.workloads.matmul\nargs:\n"
        "  - {shape: ['${size}', 3]}\n  - {shape: [3, 2], init: ones}\nstatic_argnums: []\nparams: {}\n"
    )
    out = tmp_path / "job"
    proc = run_cli(
        [
            "--config-dir",
            str(tmp_path / "myconf"),
            "workload=double",
            "mode=jit",
            "size=4",
            "timing=quick",
            f"hydra.run.dir={out}",
        ],
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    row = read(out / "results.csv").iloc[0]
    assert row["workload"] == "double" and row["status"] == "ok"
    assert row["flops"] == 2 * 4 * 3 * 2


@pytest.mark.slow
def test_textbook_speedup(tmp_path):
    out = tmp_path / "job"
    proc = run_cli(["experiment=seed_speedup", "size=64", "timing=quick", f"hydra.run.dir={out}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    df = read(out / "results.csv").set_index("mode")
    assert list(df.index) == ["eager", "jit"] and (df["status"] == "ok").all()
    assert (df["workload"] == "compute_heavy").all()
    assert df.loc["jit", "first_call_s"] > 3 * df.loc["jit", "median_s"]
    assert (df["compiles_during_timing"] == 0).all()
    assert df.loc["jit", "verdict"] in ("faster", "slower", "no significant difference")
    report = run_cli([str(out)], cwd=tmp_path, name="jitexp-report")
    assert report.returncode == 0, report.stderr
    speedup = read(out / "report" / "speedup.csv")
    assert len(speedup) == 1 and speedup.loc[0, "mode"] == "jit" and speedup.loc[0, "pairing"] == "paired"
    assert speedup.loc[0, "speedup"] == pytest.approx(df.loc["jit", "speedup"], rel=1e-9)
    assert speedup.loc[0, "speedup"] == pytest.approx(df.loc["eager", "median_s"] / df.loc["jit", "median_s"], rel=1e-9)
    for name in (
        "time_compute_heavy_float32.png",
        "speedup_compute_heavy_float32.png",
        "coldstart_compute_heavy_float32.png",
    ):
        assert (out / "report" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert name in (out / "report" / "summary.md").read_text()
        assert name in report.stdout  # jitexp-report lists the files it wrote
    assert (out / "report" / "attribution.csv").exists()


@pytest.mark.slow
def test_textbook_control_flow(tmp_path):
    _, out = sweep(["experiment=seed_control_flow"], tmp_path)
    df = read(out / "results.csv")
    assert len(df) == 8 and df["job_num"].nunique() == 4  # eager and jit measured together in each job
    python_if = df[(df["workload"] == "conditional") & (df["mode"] == "jit")]
    assert len(python_if) == 2 and (python_if["status"] == "error").all()
    assert python_if["error_type"].str.endswith("TracerBoolConversionError").all()
    assert python_if["hint"].str.contains("lax.cond").all()
    lax_ok = df[(df["workload"] == "conditional_lax") & (df["mode"] == "jit")]
    assert sorted(lax_ok["param_threshold"]) == [5.0, 10.0] and (lax_ok["status"] == "ok").all()
    assert (df[df["mode"] == "eager"]["status"] == "ok").all()


@pytest.mark.slow
def test_textbook_static_args(tmp_path):
    _, out = sweep(["experiment=seed_static_args"], tmp_path)
    df = read(out / "results.csv")
    traced = df[df["static_argnums"] == "[]"]
    static = df[df["static_argnums"] == "[1]"]
    assert len(traced) == 2 and (traced["status"] == "error").all()
    assert traced["error_type"].str.endswith("TracerIntegerConversionError").all()
    assert sorted(static["param_n"]) == [2, 3] and (static["status"] == "ok").all()
    calls = pd.concat([read(p).assign(job=p.parent.name) for p in out.glob("*/calls.csv")])
    cold = calls[calls["probe"] == "cold"]
    assert set(cold[cold["call"] == 1]["compiles"]) == {1}  # one compile per static value...
    assert set(cold[cold["call"] > 1]["compiles"]) == {0}  # ...then cached
    probe = calls[(calls["probe"] == "sequence") & (calls["status"] == "ok")]  # n = 2, 3, 2 in a fresh worker
    assert probe.groupby("job")["compiled"].apply(list).tolist() == [[True, True, False]] * 2
    assert (
        calls[(calls["probe"] == "sequence") & (calls["status"] == "error")]["error_type"]
        .str.endswith("TracerIntegerConversionError")
        .sum()
        == 6
    )  # traced n: every call fails
