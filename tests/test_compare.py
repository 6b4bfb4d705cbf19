"""jitexp-compare on synthetic runs with known changes, on a run against itself, and end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import run_cli
from jitexp.comparison import compare, load_side, main
from jitexp.results import PROCESS_COLUMNS, RESULTS_CSV, SAMPLE_COLUMNS, write_csv
from jitexp.stats import change_verdict, undetectable

ENV = {
    "jax_version": "0.10.2",
    "jaxlib_version": "0.10.2",
    "cpu_model": "TestCPU",
    "hostname": "h",
    "platform": "cpu",
    "device_kind": "cpu",
    "dtype": "float32",
    "static_argnums": "[]",
    "status": "ok",
}


def fake_run(
    root: Path,
    cases: dict[str, float],
    *,
    seed: int,
    noise: float = 0.02,
    processes: int = 8,
    jax_version: str = "0.10.2",
    host: dict | None = None,
) -> Path:
    """A sweep folder with one job per case: per-process samples around the given median (seconds)."""
    rng = np.random.default_rng(seed)
    for num, (workload, median) in enumerate(cases.items()):
        folder = root / str(num)
        rows = [
            {
                **ENV,
                "jax_version": jax_version,
                "workload": workload,
                "mode": "jit",
                "size": 64,
                "job_num": num,
                "median_s": median,
                **(host or {}),
            }
        ]
        samples, procs = [], []
        for p in range(processes):
            shift = rng.lognormal(0, noise)  # between-process spread
            for r, value in enumerate(median * shift * rng.lognormal(0, noise / 2, 15)):
                samples.append(
                    {
                        "job_num": num,
                        "workload": workload,
                        "mode": "jit",
                        "size": 64,
                        "process": p,
                        "round": r,
                        "number": 10,
                        "per_call_s": value,
                    }
                )
            compile_s = 0.03 * rng.lognormal(0, noise)
            procs.append(
                {
                    "job_num": num,
                    "workload": workload,
                    "mode": "jit",
                    "size": 64,
                    "process": p,
                    "first_call_s": compile_s + 0.01,
                    "compile_s": compile_s,
                    "trace_s": 0.0,
                    "lower_s": 0.0,
                    "execute_s": 0.01,
                }
            )
        write_csv(pd.DataFrame(rows), folder / RESULTS_CSV)
        write_csv(pd.DataFrame(samples, columns=SAMPLE_COLUMNS), folder / "samples.csv")
        write_csv(pd.DataFrame(procs).reindex(columns=PROCESS_COLUMNS), folder / "processes.csv")
    return root


def test_known_changes_get_the_right_verdicts(tmp_path):
    base = fake_run(tmp_path / "base", {"slower10": 1e-3, "same": 1e-3, "noisy3": 1e-3}, seed=0)
    new = fake_run(tmp_path / "new", {"slower10": 1.10e-3, "same": 1e-3, "noisy3": 1.03e-3}, seed=1, noise=0.04)
    table = compare(base, new).set_index(["workload", "metric"])
    assert table.loc[("slower10", "steady"), "verdict"] == "slower"
    assert table.loc[("slower10", "steady"), "ratio"] == pytest.approx(1.10, rel=0.03)
    lo, hi = table.loc[("slower10", "steady"), ["ratio_ci_low", "ratio_ci_high"]]
    assert lo <= 1.10 <= hi
    assert table.loc[("same", "steady"), "verdict"] == "no significant change"
    assert table.loc[("noisy3", "steady"), "verdict"] == "no significant change"  # under the 5% threshold
    assert set(table.xs("compile", level="metric")["verdict"]) == {"no significant change"}


def test_a_run_against_itself_changes_nothing(tmp_path):
    run = fake_run(tmp_path / "run", {"a": 1e-3, "b": 5e-6}, seed=3, noise=0.1)
    table = compare(run, run)
    assert len(table) == 6 and (table["verdict"] == "no significant change").all()
    assert (table["ratio"] == 1.0).all()


def test_verdict_needs_significance_and_a_change_beyond_the_threshold():
    assert change_verdict(1.2, 0.001) == "slower" and change_verdict(0.8, 0.001) == "faster"
    assert change_verdict(1.2, 0.2) == "no significant change"  # not significant
    assert change_verdict(1.03, 0.0001) == "no significant change"  # significant but within 5%
    assert change_verdict(1.03, 0.0001, threshold=0.01) == "slower"


def test_counts_that_can_never_reach_significance_cannot_tell():
    assert undetectable(1, 1) == "1 process per side" and undetectable(1, 8) == "1 vs 8 processes per side"
    assert undetectable(3, 3) == "3 processes per side"  # exact U: the smallest two-sided p is 2/20
    assert undetectable(4, 4) is None and undetectable(6, 6) is None  # 2/70 < 0.05
    assert undetectable(5) == "5 process pairs" and undetectable(6) is None  # signed-rank: 2/2**n
    assert undetectable(4, 4, alpha=0.01) == "4 processes per side"
    assert change_verdict(3.0, 1.0, cannot="1 process per side") == "cannot tell (1 process per side)"


def test_one_process_per_side_cannot_tell_and_fails_the_gate_unless_allowed(tmp_path, capsys):
    base = fake_run(tmp_path / "base", {"w": 1e-3}, seed=0, processes=1)
    new = fake_run(tmp_path / "new", {"w": 3e-3}, seed=1, processes=1)  # 3x the time: invisible with one process
    table = compare(base, new)
    assert table["verdict"].tolist() == ["cannot tell (1 process per side)"] * 3
    assert main([str(base), str(new), "--no-plot"]) == 1
    out = capsys.readouterr().out
    assert "3 comparison(s) cannot tell" in out and "timing.processes" in out
    assert main([str(base), str(new), "--no-plot", "--allow-undetectable"]) == 0


def test_a_change_no_larger_than_the_host_probe_moved_is_within_host_drift(tmp_path, capsys):
    calm = {"host_probe_matmul_s": 1e-3, "host_probe_dispatch_s": 1e-5, "steal_median": 0.01, "steal_max": 0.02}
    busy = {"host_probe_matmul_s": 1.2e-3, "host_probe_dispatch_s": 1e-5, "steal_median": 0.12, "steal_max": 0.2}
    base = fake_run(tmp_path / "base", {"w": 1e-3, "big": 1e-3}, seed=0, host=calm)
    new = fake_run(tmp_path / "new", {"w": 1.15e-3, "big": 2e-3}, seed=1, host=busy)
    table = compare(base, new).set_index(["workload", "metric"])
    assert table.loc[("w", "steady"), "verdict"] == "within host drift"  # 1.15x while the host's matmul moved 1.2x
    assert table.loc[("big", "steady"), "verdict"] == "slower"  # 2x: more than the host moved
    assert main([str(base), str(new), "--no-plot", "--fail-on", "steady"]) == 1  # big still fails the gate
    out = capsys.readouterr().out
    assert "steal BASE: median 1.0%, max 2.0%" in out and "steal NEW: median 12.0%, max 20.0%" in out
    assert "host drift (probe NEW/BASE): dispatch 1.000x, matmul 1.200x; a steady state that moved" in out
    faster_host = {**busy, "host_probe_matmul_s": 0.8e-3}  # the host got faster: no excuse for a slower case
    quick = fake_run(tmp_path / "quick", {"w": 1.15e-3, "big": 2e-3}, seed=1, host=faster_host)
    assert compare(base, quick).set_index(["workload", "metric"]).loc[("w", "steady"), "verdict"] == "slower"
    plain = fake_run(tmp_path / "old", {"w": 1e-3}, seed=0)  # a run from before the probe existed
    assert compare(plain, new).set_index(["workload", "metric"]).loc[("w", "steady"), "verdict"] == "slower"


def test_cli_exit_code_files_environment_and_unmatched_cases(tmp_path, capsys):
    base = fake_run(tmp_path / "base", {"w": 1e-3, "gone": 1e-3}, seed=0)
    new = fake_run(tmp_path / "new", {"w": 1.3e-3, "added": 1e-3}, seed=1, jax_version="0.10.3")
    assert main([str(base), str(new), "--out", str(tmp_path / "out")]) == 1  # w is 30% slower
    out = capsys.readouterr().out
    assert "differs: jax_version: 0.10.2 -> 0.10.3" in out and "on one machine" in out
    assert "BASE only: workload=gone" in out and "NEW only: workload=added" in out
    assert {"compare.csv", "compare.md", "compare.png"} <= {p.name for p in (tmp_path / "out").iterdir()}
    assert main([str(base), str(new), "--fail-on", "compile", "--out", str(tmp_path / "out")]) == 0
    assert main([str(base), str(new), "--fail-on", "speed"]) == 2


@pytest.mark.slow
@pytest.mark.serial  # two measured runs: jit's steady state must come out faster
def test_eager_base_against_jit_new_end_to_end(tmp_path):
    runs = {}
    for mode in ("eager", "jit"):
        out = tmp_path / mode
        proc = run_cli(
            [
                f"mode={mode}",
                "workload=elementwise_chain",
                "size=10000",
                "timing=quick",
                "timing.processes=5",
                "timing.max_processes=5",
                "timing.min_sample_time_s=0.005",
                f"hydra.run.dir={out}",
            ],
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs[mode] = out
    proc = run_cli(
        [str(runs["eager"]), str(runs["jit"]), "--ignore", "mode", "--no-plot"], cwd=tmp_path, name="jitexp-compare"
    )
    assert proc.returncode == 0, proc.stderr  # faster is no failure
    table = pd.read_csv(runs["jit"] / "compare" / "compare.csv").set_index("metric")
    for metric in ("steady", "first_call"):  # the verdict follows ratio and p-value (timings themselves vary with load)
        ratio, p, verdict = table.loc[metric, ["ratio", "p_value", "verdict"]]
        assert verdict == change_verdict(ratio, p), metric
    assert table.loc["steady", "ratio"] < 1  # 49 eager dispatches against one fused kernel: jit is faster here
    assert load_side(runs["jit"]).rows["mode"].tolist() == ["jit"]
