"""Memory in the gates (issue 59, item 1): jitexp-compare's --fail-on takes XLA's memory analysis (exact, in bytes) and
the measured memory (over processes), a lost donation is named, the analysis across jax versions is not compared."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.unit.test_compare import fake_run

from jitexp.report.compare.cli import main
from jitexp.report.compare.gate import compare, failing
from jitexp.report.shared.memory import exact_change, metric_names, parse_threshold
from jitexp.store.csvio import write_csv

MIB = 2**20
# a training step's analysis: 4 MiB of temporaries, its 1 MiB parameters donated (aliased to the outputs)
MEMORY = {
    "temp_size_bytes": 4 * MIB,
    "argument_size_bytes": 2 * MIB,
    "output_size_bytes": 1 * MIB,
    "alias_size_bytes": 1 * MIB,
    "peak_memory_bytes": 6 * MIB,
}


def run(root: Path, seed: int, jax_version: str = "0.10.2", **memory) -> Path:
    """A run of one case (`step`, jit) at steady 1 ms, with XLA's memory analysis as given (MEMORY's by default)."""
    return fake_run(root, {"step": 1e-3}, seed=seed, jax_version=jax_version, work={**MEMORY, **memory})


def test_a_planted_temporary_fails_fail_on_temp_bytes_with_the_exact_bytes(tmp_path, capsys):
    """NEW holds one more f32 array of 512x512 (1 MiB) as a temporary: temp_bytes grows by exactly 1,048,576 bytes,
    and the gate says so in bytes, whatever the time did."""
    base = run(tmp_path / "base", 1)
    new = run(tmp_path / "new", 2, temp_size_bytes=MEMORY["temp_size_bytes"] + 512 * 512 * 4)
    code = main([str(base), str(new), "--fail-on", "temp_bytes", "--no-plot"])
    out = capsys.readouterr().out
    assert code == 1
    assert "gate: fail (1 more memory)" in out
    assert "temp_bytes 4,194,304 -> 5,242,880 bytes (+1,048,576, +25%)" in out
    table = pd.read_csv(new / "compare" / "compare.csv")
    row = table[table["metric"] == "temp_bytes"].iloc[0]
    assert (row["base_bytes"], row["new_bytes"], row["verdict"]) == (4 * MIB, 5 * MIB, "more memory")
    assert row["ratio"] == 1.25
    # the column's own name is the same metric, and a threshold above the growth passes it
    assert main([str(base), str(new), "--fail-on", "temp_size_bytes", "--no-plot"]) == 1
    assert main([str(base), str(new), "--fail-on", "temp_bytes", "--memory-threshold", "2MiB", "--no-plot"]) == 0
    assert main([str(base), str(new), "--fail-on", "temp_bytes", "--memory-threshold", "30%", "--no-plot"]) == 0
    assert main([str(base), str(new), "--fail-on", "temp_bytes", "--memory-threshold", "20%", "--no-plot"]) == 1


def test_a_run_against_one_of_the_same_code_passes_every_memory_metric(tmp_path, capsys):
    base, new = run(tmp_path / "base", 1), run(tmp_path / "new", 2)
    metrics = "temp_bytes,argument_bytes,output_bytes,alias_bytes,peak_memory_bytes"
    assert main([str(base), str(new), "--fail-on", metrics, "--no-plot"]) == 0
    table = compare(base, new, memory=metric_names(metrics))
    memory = table[table["metric"].isin(metric_names(metrics))]
    assert len(memory) == 5 and set(memory["verdict"]) == {"unchanged"}
    assert "gate: pass" in capsys.readouterr().out


def test_memory_rows_are_in_the_table_only_when_asked(tmp_path):
    base, new = run(tmp_path / "base", 1), run(tmp_path / "new", 2, temp_size_bytes=5 * MIB)
    assert set(compare(base, new)["metric"]) == {"steady", "first_call", "compile"}
    # less memory never fails
    assert failing(compare(new, base, memory=["temp_bytes"]), ["temp_bytes"]).empty


def test_a_donation_that_stopped_working_is_named(tmp_path, capsys):
    """alias bytes 1 MiB -> 0: a `donation lost` row whatever --fail-on says, failing a gate on any memory metric."""
    base = run(tmp_path / "base", 1)
    new = run(tmp_path / "new", 2, alias_size_bytes=0, peak_memory_bytes=7 * MIB)
    table = compare(base, new)
    lost = table[table["verdict"] == "donation lost"]
    assert list(lost["metric"]) == ["alias_bytes"]
    assert "donation stopped working: alias_bytes 1,048,576 -> 0 bytes" in lost["note"].iloc[0]
    assert failing(table, ["steady"]).empty  # named, but a time gate does not fail on it
    code = main([str(base), str(new), "--fail-on", "temp_bytes", "--no-plot"])
    out = capsys.readouterr().out
    assert code == 1 and "1 donation(s) lost" in out and "gate: fail (1 donation lost)" in out


def test_the_analysis_across_jax_versions_is_not_compared(tmp_path, capsys):
    base = run(tmp_path / "base", 1, jax_version="0.10.2")
    new = run(tmp_path / "new", 2, jax_version="0.10.3", temp_size_bytes=5 * MIB, alias_size_bytes=0)
    table = compare(base, new, memory=["temp_bytes"])
    row = table[table["metric"] == "temp_bytes"].iloc[0]
    assert row["verdict"] == "cannot tell (XLA's analysis is not comparable across jax_version 0.10.2 -> 0.10.3)"
    assert "donation lost" not in set(table["verdict"])  # no guess across compilers either
    assert main([str(base), str(new), "--fail-on", "temp_bytes", "--no-plot"]) == 1
    assert main([str(base), str(new), "--fail-on", "temp_bytes", "--allow-undetectable", "--no-plot"]) == 0


def with_measured(run_folder: Path, device_peak: float, seed: int, noise: float = 0.01) -> Path:
    """Give each process of the run's job a device_peak_bytes around `device_peak` (lognormal spread)."""
    path = run_folder / "0" / "processes.csv"
    procs = pd.read_csv(path)
    rng = np.random.default_rng(seed)
    procs["device_peak_bytes"] = (device_peak * rng.lognormal(0, noise, len(procs))).round()
    write_csv(procs, path)
    return run_folder


def test_measured_memory_is_judged_over_processes_like_a_time(tmp_path):
    base = with_measured(run(tmp_path / "base", 1), 8 * MIB, seed=1)
    same = with_measured(run(tmp_path / "same", 2), 8 * MIB, seed=2)
    more = with_measured(run(tmp_path / "more", 3), 10 * MIB, seed=3)
    verdict = lambda new: compare(base, new, memory=["device_peak_bytes"]).set_index("metric")  # noqa: E731
    assert verdict(same).loc["device_peak_bytes", "verdict"] == "no significant change"
    grew = verdict(more).loc["device_peak_bytes"]
    assert grew["verdict"] == "more memory" and grew["n_base"] == grew["n_new"] == 8
    assert 1.2 < grew["ratio_ci_low"] < grew["ratio"] < grew["ratio_ci_high"] < 1.3
    assert grew["note"].startswith("device_peak_bytes 8,") and "(medians over processes)" in grew["note"]
    assert failing(compare(base, more, memory=["device_peak_bytes"]), ["device_peak_bytes"]).shape[0] == 1
    # a run that did not record it per process: cannot tell, not a guess
    lacking = run(tmp_path / "old", 4)
    row = compare(base, lacking, memory=["device_peak_bytes"]).set_index("metric").loc["device_peak_bytes"]
    assert row["verdict"] == "cannot tell (no device_peak_bytes in NEW)"


def test_fail_on_names_and_thresholds():
    assert metric_names("steady, temp_size_bytes,peak_memory,temp_bytes") == [
        "steady",
        "temp_bytes",
        "peak_memory_bytes",
    ]
    assert parse_threshold("0") == (0, 0) and parse_threshold("1MiB") == (MIB, 0) and parse_threshold("2%") == (0, 0.02)
    with pytest.raises(ValueError, match="no memory threshold"):
        parse_threshold("lots")
    assert exact_change(100, 100) == "unchanged" and exact_change(100, 101) == "more memory"
    assert (
        exact_change(100, 101, (1, 0)) == "within the threshold" and exact_change(100, 90, (0, 0.05)) == "less memory"
    )


def test_an_unknown_metric_or_threshold_is_one_line(tmp_path, capsys):
    base = run(tmp_path / "base", 1)
    assert main([str(base), str(base), "--fail-on", "temp"]) == 2
    assert (
        "--fail-on='temp' is invalid; valid choices: steady, first_call, compile, temp_bytes" in capsys.readouterr().err
    )
    assert main([str(base), str(base), "--memory-threshold", "lots"]) == 2
    assert "no memory threshold" in capsys.readouterr().err
