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


def plugin_session(tmp_path: Path, fail_on: tuple[str, ...], memory_threshold: str = "0"):
    from jitexp.pytest_plugin import Session

    return Session(
        root=tmp_path / ".jitexp",
        save=None,
        compare="main",
        fail_on=fail_on,
        threshold=0.05,
        allow_undetectable=False,
        disable=False,
        timing=None,
        memory_threshold=parse_threshold(memory_threshold),
    )


def test_the_pytest_gate_fails_a_test_whose_temporaries_grew(tmp_path):
    """The plugin's check against a saved baseline (Session.check, as a test's jitexp_measure calls it): with
    --jitexp-fail-on=temp_bytes a test whose temporaries grew by 1 MiB fails, its line naming the bytes; the same
    case unchanged passes, and so does the grown one under a time-only gate."""
    from jitexp.pytest_plugin import Entry
    from jitexp.report.compare.runs import load_side

    base = load_side(run(tmp_path / "base", 1))
    grown, same = run(tmp_path / "grown", 2, temp_size_bytes=5 * MIB), run(tmp_path / "same", 3)
    gate = plugin_session(tmp_path, ("steady", "temp_bytes"))
    with pytest.raises(pytest.fail.Exception) as failed:
        gate.check("test_step", None, base, grown, Entry("test_step", ""), [])  # type: ignore[arg-type]
    assert str(failed.value) == (
        "jitexp: test_step: jit temp_bytes: more memory than the baseline 'main': "
        "temp_bytes 4,194,304 -> 5,242,880 bytes (+1,048,576, +25%)"
    )
    entry = Entry("test_step", "")
    gate.check("test_step", None, base, same, entry, [])  # type: ignore[arg-type]
    plugin_session(tmp_path, ("steady",)).check("test_step", None, base, grown, Entry("t", ""), [])  # type: ignore[arg-type]
    plugin_session(tmp_path, ("temp_bytes",), "1MiB").check("t", None, base, grown, Entry("t", ""), [])  # type: ignore[arg-type]
    lost = run(tmp_path / "lost", 4, alias_size_bytes=0)
    with pytest.raises(pytest.fail.Exception, match="jit donation lost against the baseline 'main': donation stopped"):
        gate.check("test_step", None, base, lost, Entry("test_step", ""), [])  # type: ignore[arg-type]


def memory_history(root: Path, temps: list[int], jax: list[str] | None = None) -> None:
    """One run per commit c1..cN of a matmul jit case whose temporaries are `temps` bytes (and the steady state the
    same 1 ms throughout, so only memory can step)."""
    from tests.helpers import history_run

    for i, temp in enumerate(temps, start=1):
        when = (f"2026-01-{i:02d}T10:00:00+00:00", f"2026-02-{i:02d}T10:00:00")
        version = {"jax_version": jax[i - 1]} if jax else {}
        history_run(root, f"r{i:02d}", f"c{i}", *when, 1e-3, temp_size_bytes=temp, **version)


def test_history_finds_a_memory_step_at_the_commit_that_made_it(tmp_path, capsys):
    """temp_bytes 4 MiB for c1..c6, 5 MiB from c7: one exact step between c6 and c7, established from its first run
    (the analysis is deterministic), failing --fail-on-step on temp_bytes (or its column's name); none in steady."""
    from jitexp.report.history import cli as history_cli

    memory_history(tmp_path / "runs", [4 * MIB] * 6 + [5 * MIB] * 6)
    out = tmp_path / "history"
    args = [str(tmp_path / "runs" / "r*"), "--out", str(out)]
    assert history_cli.main([*args, "--fail-on-step", "--fail-on", "temp_bytes"]) == 1  # the newest runs: on it
    steps = pd.read_csv(out / "steps.csv")
    step = steps[steps["metric"] == "temp_bytes"]
    assert len(step) == 1 and set(steps["metric"]) == {"temp_bytes"}
    row = step.iloc[0]
    assert (row["commit_before"], row["commit_after"], row["ratio"], row["ci_low"], row["ci_high"]) == (
        "c6",
        "c7",
        1.25,
        1.25,
        1.25,
    )
    assert row["direction"] == "more" and bool(row["established"])
    assert row["evidence"] == "exact: 4,194,304 -> 5,242,880 bytes (XLA's analysis)"
    assert "temp_bytes: 1.25x the memory, between c6..c7" in capsys.readouterr().out  # exact: no interval
    assert history_cli.main([*args, "--fail-on-step"]) == 0  # the default gate: times only
    # a step in the newest run is established at once and fails the gate: no second run needed to rule out noise
    memory_history(tmp_path / "newest", [4 * MIB] * 5 + [5 * MIB])
    newest = [str(tmp_path / "newest" / "r*"), "--out", str(tmp_path / "h2"), "--fail-on-step"]
    assert history_cli.main([*newest, "--fail-on", "temp_size_bytes"]) == 1
    assert history_cli.main([*newest, "--fail-on", "steady"]) == 0


def test_a_memory_change_with_the_jax_version_is_not_a_step(tmp_path):
    from jitexp.report.history import cli as history_cli

    memory_history(tmp_path / "runs", [4 * MIB] * 4 + [5 * MIB] * 2, jax=["0.10.2"] * 4 + ["0.10.3"] * 2)
    out = tmp_path / "history"
    assert (
        history_cli.main(
            [str(tmp_path / "runs" / "r*"), "--out", str(out), "--fail-on-step", "--fail-on", "temp_bytes"]
        )
        == 0
    )
    row = pd.read_csv(out / "steps.csv").set_index("metric").loc["temp_bytes"]
    assert not row["established"]
    assert row["evidence"] == (
        "4,194,304 -> 5,242,880 bytes across jax 0.10.2 -> 0.10.3: XLA's analysis is not comparable there "
        "(not established)"
    )
