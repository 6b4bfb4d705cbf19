"""jitexp-compare on synthetic runs with known changes, on a run against itself, and its gate (end to end, on two
measured runs: tests/e2e/test_compare_measured.py)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jitexp.analysis import formatting
from jitexp.analysis.stats import change_verdict, undetectable
from jitexp.report.compare.cli import main
from jitexp.report.compare.gate import BETWEEN_RUN_SD, compare, metric_row
from jitexp.report.compare.runs import Side, load_side
from jitexp.store.csvio import write_csv
from jitexp.store.folders import RESULTS_CSV
from jitexp.store.schema import PROCESS_COLUMNS, SAMPLE_COLUMNS

ENV = {
    "jax_version": "0.10.2",
    "jaxlib_version": "0.10.2",
    "cpu_model": "TestCPU",
    "hostname": "h",
    "platform": "cpu",
    "device_kind": "cpu",
}
CASE = {"dtype": "float32", "static_argnums": "[]"}
# a compute-bound case: its flops at the matmul probe's rate dwarf one dispatch and its bytes at the copy rate
COMPUTE = {"flops": 1e9, "bytes_accessed": 1e6}
CALM = {"host_probe_matmul_s": 1e-3, "host_probe_dispatch_s": 1e-5, "host_probe_copy_s": 1e-4}


def fake_run(
    root: Path,
    cases: dict[str, float],
    *,
    seed: int,
    noise: float = 0.02,
    processes: int = 8,
    jax_version: str = "0.10.2",
    host: dict | None = None,
    host_noise: float = 0.01,
    work: dict | None = None,
    errors: dict[str, dict] | None = None,
    env: bool = True,
) -> Path:
    """A sweep folder with one job per case: per-process samples around the given median (seconds).

    host: host_probe_* medians, each process reading its own value around them (host_noise, lognormal);
    work: extra row columns (flops, bytes_accessed); errors: {case: error columns} makes that case's job
    an error row (no samples); env False leaves the environment out of error rows (a crash before the
    worker reported it).
    """
    rng = np.random.default_rng(seed)
    for num, (workload, median) in enumerate(cases.items()):
        folder = root / str(num)
        ident = {"workload": workload, "mode": "jit", "size": 64, "job_num": num}
        if errors and workload in errors:
            row = {**ident, **CASE, "status": "error", **errors[workload]}
            if env:
                row.update(ENV, jax_version=jax_version)
            write_csv(pd.DataFrame([row]), folder / RESULTS_CSV)
            continue
        samples, procs, probes = [], [], []
        for p in range(processes):
            shift = rng.lognormal(0, noise)  # between-process spread
            for r, value in enumerate(median * shift * rng.lognormal(0, noise / 2, 15)):
                samples.append({**ident, "process": p, "round": r, "number": 10, "per_call_s": value})
            compile_s = 0.03 * rng.lognormal(0, noise)
            probe = {col: value * rng.lognormal(0, host_noise) for col, value in (host or {}).items()}
            probes.append(probe)
            procs.append(
                {
                    **ident,
                    "process": p,
                    "first_call_s": compile_s + 0.01,
                    "compile_s": compile_s,
                    "trace_s": 0.0,
                    "lower_s": 0.0,
                    "execute_s": 0.01,
                    **probe,
                }
            )
        medians = {col: float(np.median([p[col] for p in probes])) for col in (host or {})}
        row = {**ident, **CASE, **ENV, "status": "ok", "jax_version": jax_version, "median_s": median}
        write_csv(pd.DataFrame([{**row, **medians, **(work or {})}]), folder / RESULTS_CSV)
        write_csv(pd.DataFrame(samples, columns=SAMPLE_COLUMNS), folder / "samples.csv")
        write_csv(pd.DataFrame(procs).reindex(columns=PROCESS_COLUMNS), folder / "processes.csv")
    return root


def verdicts(base: Path, new: Path, **options) -> dict[tuple[str, str], str]:
    table = compare(base, new, **options)
    return dict(zip(zip(table["workload"], table["metric"]), table["verdict"]))


# ---- statistics ---------------------------------------------------------------------------------------


def test_ratio_interval_and_p_on_known_values():
    # every NEW process takes exactly twice a BASE process: the log differences are log 2 plus a set
    # symmetric about 0, so the Hodges-Lehmann ratio is exactly 2
    base = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5]
    new = [2 * v for v in base]
    row = metric_row("first_call", base, new, threshold=0.05, alpha=0.05, between_run_sd=0.0)
    assert row["ratio"] == pytest.approx(2.0, rel=1e-12)
    assert row["base_s"] == pytest.approx(1.25) and row["new_s"] == pytest.approx(2.5)
    # fully separated 6 vs 6: the exact two-sided Mann-Whitney p is 2 / C(12, 6) = 2 / 924
    assert row["p_value"] == pytest.approx(2 / 924, rel=1e-9)
    # the tabulated two-sided 5% critical U for 6 vs 6 is 5: the CI runs from the 6th to the 31st of the
    # 36 sorted differences. Those are log 2 + log(b_j / b_i): the 6th smallest is log 2 + log(1.2 / 1.5)
    # (1.0/1.5, 1.0/1.4, 1.1/1.5, 1.0/1.3, 1.1/1.4 are the five below it), the 31st log 2 + log(1.5 / 1.2)
    assert row["ratio_ci_low"] == pytest.approx(2 * 1.2 / 1.5, rel=1e-9)
    assert row["ratio_ci_high"] == pytest.approx(2 * 1.5 / 1.2, rel=1e-9)
    assert row["verdict"] == "slower" and (row["n_base"], row["n_new"]) == (6, 6)
    # a between-run sd of 0.1 adds 2 x 0.1^2 to the log ratio's variance: wider, less significant, same ratio
    wide = metric_row("first_call", base, new, threshold=0.05, alpha=0.05, between_run_sd=0.1)
    assert wide["ratio"] == row["ratio"]
    assert wide["ratio_ci_low"] < row["ratio_ci_low"] and wide["ratio_ci_high"] > row["ratio_ci_high"]
    assert wide["verdict"] == "slower"  # log 2 is far beyond that noise...
    drift = metric_row("first_call", base, new, threshold=0.05, alpha=0.05, between_run_sd=0.5)
    assert drift["verdict"] == "no significant change"  # ...but not beyond runs that move by 50% (sd) each
    assert drift["ratio_ci_low"] < 1 < drift["ratio_ci_high"] and drift["p_value"] > 0.05


def test_the_between_run_constants_are_the_measured_ones():
    # docs/decisions.md: 8 A/A runs of 2026-12-03 (pairs estimator, the larger of eager's and jit's)
    assert BETWEEN_RUN_SD == {"steady": 0.077, "first_call": 0.11, "compile": 0.12}


def test_known_changes_get_the_right_verdicts(tmp_path):
    cases = {"slower50": 1e-3, "slower10": 1e-3, "same": 1e-3, "noisy3": 1e-3}
    base = fake_run(tmp_path / "base", cases, seed=0)
    new = fake_run(
        tmp_path / "new", {"slower50": 1.5e-3, "slower10": 1.1e-3, "same": 1e-3, "noisy3": 1.03e-3}, seed=1, noise=0.04
    )
    table = compare(base, new).set_index(["workload", "metric"])
    assert table.loc[("slower50", "steady"), "verdict"] == "slower"
    assert table.loc[("slower50", "steady"), "ratio"] == pytest.approx(1.5, rel=0.03)
    lo, hi = table.loc[("slower50", "steady"), ["ratio_ci_low", "ratio_ci_high"]]
    assert lo <= 1.5 <= hi
    # 10% between two runs is inside what two runs of the same code move apart (BETWEEN_RUN_SD)...
    assert table.loc[("slower10", "steady"), "verdict"] == "no significant change"
    assert table.loc[("slower10", "steady"), "ratio_ci_low"] < 1 < table.loc[("slower10", "steady"), "ratio_ci_high"]
    # ...though within the runs alone it is significant: the between-run term is what decides
    side_a, side_b = load_side(base), load_side(new)
    steady = lambda side: next(v["steady"] for k, v in side.values.items() if k[0].endswith("/1"))  # noqa: E731
    assert metric_row("steady", steady(side_a), steady(side_b), 0.05, 0.05, between_run_sd=0.0)["verdict"] == "slower"
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


def test_a_metric_one_run_lacks_cannot_tell(tmp_path, capsys):
    base = fake_run(tmp_path / "base", {"w": 1e-3}, seed=0)
    new = fake_run(tmp_path / "new", {"w": 1e-3}, seed=1)
    procs = pd.read_csv(new / "0" / "processes.csv")
    procs["compile_s"] = np.nan  # NEW recorded no compile times
    procs.to_csv(new / "0" / "processes.csv", index=False)
    assert verdicts(base, new)[("w", "compile")] == "cannot tell (no compile in NEW)"
    assert verdicts(new, base)[("w", "compile")] == "cannot tell (no compile in BASE)"
    assert main([str(base), str(new), "--no-plot"]) == 1
    assert "gate: fail (1 cannot tell)" in capsys.readouterr().out
    assert main([str(base), str(new), "--no-plot", "--allow-undetectable"]) == 0
    assert main([str(base), str(new), "--no-plot", "--fail-on", "steady"]) == 0  # compile is not judged


# ---- host drift: information, an excuse only when asked -------------------------------------------------


def test_a_slowdown_the_host_probe_shares_fails_unless_excused(tmp_path, capsys):
    moved = {**CALM, "host_probe_matmul_s": 1.3e-3}
    base = fake_run(tmp_path / "base", {"w": 1e-3}, seed=0, host=CALM, work=COMPUTE)
    new = fake_run(tmp_path / "new", {"w": 1.3e-3}, seed=1, host=moved, work=COMPUTE)
    row = compare(base, new).set_index("metric").loc["steady"]
    assert row["verdict"] == "slower" and row["host_probe"] == "matmul"
    assert row["host_ratio"] == pytest.approx(1.3, rel=0.02) and row["host_ratio_ci_low"] > 1
    # the host's NEW/BASE with its CI, the direction of every ratio jitexp-compare prints (issue 50)
    assert re.fullmatch(r"host matmul 1\.(2|3)\d* \(1\.[\d.]+-1\.[\d.]+\)", row["note"]), row["note"]
    assert main([str(base), str(new), "--no-plot", "--fail-on", "steady", "--all"]) == 1
    out = " ".join(capsys.readouterr().out.split())  # the header's lines wrap at 120 characters
    steady = r"(0\.9\d*|1|1\.0\d*) \([\d.]+-[\d.]+\)"
    assert re.search(
        rf"host drift \(each probe's NEW/BASE over processes, 95% CI\): dispatch {steady}, copy {steady}, "
        r"matmul 1\.(2|3)\d* \(1\.[\d.]+-1\.[\d.]+\); information only",
        out,
    ), out
    assert re.search(r"steady 1(\.\d+)? ms 1\.\d+ ms 1\.(2|3)\d* \(1\.[\d.]+-1\.[\d.]+\) [\d.e-]+ slower", out), out
    assert "1 slower steady state(s) where the matching host probe moved the same way" in out
    assert "gate: fail (1 slower)" in out
    assert main([str(base), str(new), "--no-plot", "--fail-on", "steady", "--excuse-host-drift"]) == 0
    out = capsys.readouterr().out
    assert "within host drift" in out and "gate: pass" in out
    assert (
        compare(base, new, excuse_host_drift=True).set_index("metric").loc["steady", "verdict"] == "within host drift"
    )
    # a case that moved much further than its probe is still slower when the excuse is asked for
    far = fake_run(tmp_path / "far", {"w": 2e-3}, seed=1, host=moved, work=COMPUTE)
    assert verdicts(base, far, excuse_host_drift=True)[("w", "steady")] == "slower"


def test_only_the_probe_of_the_same_kind_of_work_excuses(tmp_path):
    base = fake_run(tmp_path / "base", {"w": 1e-3}, seed=0, host=CALM, work=COMPUTE)
    dispatch_moved = {**CALM, "host_probe_dispatch_s": 1.3e-5}  # the matmul probe did not move
    new = fake_run(tmp_path / "new", {"w": 1.3e-3}, seed=1, host=dispatch_moved, work=COMPUTE)
    row = compare(base, new, excuse_host_drift=True).set_index("metric").loc["steady"]
    assert row["host_probe"] == "matmul" and row["verdict"] == "slower"
    assert main([str(base), str(new), "--no-plot", "--fail-on", "steady", "--excuse-host-drift"]) == 1
    # the user may name the probe that stands for their work
    assert main([str(base), str(new), "--no-plot", "--fail-on", "steady", "--excuse-host-drift=dispatch"]) == 0
    # a tiny jitted call is dispatch-bound: there the dispatch probe is the matching one
    tiny = {"flops": 8.0, "bytes_accessed": 64.0}
    small_base = fake_run(tmp_path / "small_base", {"t": 5e-6}, seed=0, host=CALM, work=tiny)
    small_new = fake_run(tmp_path / "small_new", {"t": 6.5e-6}, seed=1, host=dispatch_moved, work=tiny)
    row = compare(small_base, small_new, excuse_host_drift=True).set_index("metric").loc["steady"]
    assert row["host_probe"] == "dispatch" and row["verdict"] == "within host drift"


def test_a_probe_that_did_not_move_significantly_excuses_nothing(tmp_path):
    base = fake_run(tmp_path / "base", {"w": 1e-3}, seed=0, host=CALM, work=COMPUTE, host_noise=0.6)
    noisy = {**CALM, "host_probe_matmul_s": 1.3e-3}
    new = fake_run(tmp_path / "new", {"w": 1.3e-3}, seed=1, host=noisy, work=COMPUTE, host_noise=0.6)
    row = compare(base, new, excuse_host_drift=True).set_index("metric").loc["steady"]
    assert row["host_ratio_ci_low"] <= 1  # the probe's processes spread too much to say the host moved
    assert row["verdict"] == "slower"
    faster_host = {**CALM, "host_probe_matmul_s": 0.8e-3}  # the host got faster: no excuse for a slower case
    quick = fake_run(tmp_path / "quick", {"w": 1.3e-3}, seed=1, host=faster_host, work=COMPUTE)
    assert verdicts(base, quick, excuse_host_drift=True)[("w", "steady")] == "slower"
    plain = fake_run(tmp_path / "old", {"w": 1e-3}, seed=0)  # a run from before the probe existed
    moved = fake_run(tmp_path / "moved", {"w": 1.3e-3}, seed=1, host=noisy, work=COMPUTE)
    assert verdicts(plain, moved, excuse_host_drift=True)[("w", "steady")] == "slower"
    unknown = fake_run(tmp_path / "unknown", {"w": 1e-3}, seed=0, host=CALM)  # no flops or bytes: no match
    row = compare(unknown, moved, excuse_host_drift=True).set_index("metric").loc["steady"]
    assert row["host_probe"] == "" and row["verdict"] == "slower"


def test_steal_and_probe_lines(tmp_path, capsys):
    calm = {"steal_median": 0.01, "steal_max": 0.02}
    busy = {"steal_median": 0.12, "steal_max": 0.2}
    base = fake_run(tmp_path / "base", {"w": 1e-3}, seed=0, host=CALM, work={**COMPUTE, **calm})
    new = fake_run(tmp_path / "new", {"w": 1e-3}, seed=1, host=CALM, work={**COMPUTE, **busy})
    assert main([str(base), str(new), "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "steal BASE: median 1.0%, max 2.0%" in out and "steal NEW: median 12.0%, max 20.0%" in out
    old = fake_run(tmp_path / "old", {"w": 1e-3}, seed=0)
    assert main([str(old), str(new), "--no-plot"]) == 0
    assert "host drift: no host probe recorded on both sides" in capsys.readouterr().out


# ---- broken, missing, nothing in common -----------------------------------------------------------------

BOOM = {"error_phase": "execute", "error_type": "ValueError", "error_message": "boom"}
CRASH = {"error_phase": "crash", "error_type": "SIGSEGV", "error_message": "Segmentation fault"}


def test_a_case_that_errors_in_new_is_broken_and_fails_whatever_fail_on(tmp_path, capsys):
    base = fake_run(tmp_path / "base", {"w": 1e-3, "v": 1e-3}, seed=0)
    new = fake_run(tmp_path / "new", {"w": 1e-3, "v": 1e-3}, seed=1, errors={"v": BOOM})
    table = compare(base, new)
    broken = table[table["verdict"] == "broken"]
    assert broken["workload"].tolist() == ["v"] and broken["metric"].tolist() == ["status"]
    assert broken["note"].iloc[0] == "error in NEW: execute: ValueError: boom"
    assert table.index[table["verdict"] == "broken"].tolist() == [0]  # listed first
    for fail_on in ("steady", "compile"):
        assert main([str(base), str(new), "--no-plot", "--fail-on", fail_on, "--allow-undetectable"]) == 1
        out = capsys.readouterr().out
        assert "1 case(s) broken: ok in BASE, an error in NEW" in out and "gate: fail (1 broken)" in out
    # a crash before the worker reported its device still matches the case it broke
    crashed = fake_run(tmp_path / "crashed", {"w": 1e-3, "v": 1e-3}, seed=1, errors={"v": CRASH}, env=False)
    assert verdicts(base, crashed)[("v", "status")] == "broken"
    # an error in BASE that NEW fixed is not compared, and is said so
    assert main([str(new), str(base), "--no-plot"]) == 0
    assert "error in BASE, ok in NEW: workload=v" in capsys.readouterr().out


def test_a_case_missing_from_new_fails_unless_allowed(tmp_path, capsys):
    base = fake_run(tmp_path / "base", {"w": 1e-3, "gone": 1e-3}, seed=0)
    new = fake_run(tmp_path / "new", {"w": 1e-3}, seed=1)
    assert verdicts(base, new)[("gone", "status")] == "missing"
    assert main([str(base), str(new), "--no-plot"]) == 1
    out = capsys.readouterr().out
    assert "1 case(s) of BASE missing from NEW" in out and "gate: fail (1 missing)" in out
    assert main([str(base), str(new), "--no-plot", "--allow-missing"]) == 0
    assert "gate: pass" in capsys.readouterr().out


def test_no_case_in_common_fails_with_one_line(tmp_path, capsys):
    base = fake_run(tmp_path / "base", {"a": 1e-3}, seed=0)
    new = fake_run(tmp_path / "new", {"b": 1e-3}, seed=1)
    for extra in ([], ["--allow-missing"]):
        assert main([str(base), str(new), "--no-plot", *extra]) == 1
        captured = capsys.readouterr()
        assert captured.out == ""
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("jitexp-compare: no case in common: BASE has 1 case(s), NEW 1")


def test_the_header_of_a_run_with_only_error_rows(tmp_path, capsys):
    base = fake_run(tmp_path / "base", {"w": 1e-3}, seed=0)
    # errors raised in the worker: the rows carry the worker's environment, the same machine as BASE
    raised = fake_run(tmp_path / "raised", {"w": 1e-3}, seed=1, errors={"w": BOOM})
    assert main([str(base), str(raised), "--no-plot"]) == 1
    out = capsys.readouterr().out
    head = out.splitlines()[0]
    assert "(on one machine;" in head and "across machines" not in out
    assert "differs:" not in out and "jax_version" not in out
    # crashes before the worker reported anything: the machine is unknown, not another one
    crashed = fake_run(tmp_path / "crashed", {"w": 1e-3}, seed=1, errors={"w": CRASH}, env=False)
    assert main([str(base), str(crashed), "--no-plot"]) == 1
    out = capsys.readouterr().out
    assert "(machine of NEW unknown;" in out.splitlines()[0] and "across machines" not in out
    assert "-> -" not in out and "differs:" not in out
    assert "broken" in out and "error in NEW: crash: SIGSEGV: Segmentation fault" in out


def test_the_ratio_chart_has_a_scale_on_both_sides_of_one_and_labels_only_what_differs(tmp_path, monkeypatch):
    from jitexp.report.compare import chart as plot_compare

    table = pd.DataFrame(
        {
            "workload": ["w", "w"],
            "size": [1000, 1000],
            "mode": ["eager", "jit"],
            "metric": ["steady", "steady"],
            "ratio": [0.8, 1.45],
            "ratio_ci_low": [0.75, 1.38],
            "ratio_ci_high": [0.86, math.inf],  # an open bound: no whisker
            "verdict": ["faster", "slower"],
        }
    )
    from matplotlib.figure import Figure

    saved, real = [], Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda fig, *a, **k: saved.append(fig) or real(fig, *a, **k))
    plot_compare.compare_chart(table, ["workload", "size", "mode"], 0.05, tmp_path / "compare.png")
    assert (tmp_path / "compare.png").stat().st_size > 0
    ax = saved[0].axes[0]
    low, high = ax.get_xlim()
    labelled = [
        tick.get_loc()
        for tick in ax.xaxis.get_major_ticks() + ax.xaxis.get_minor_ticks()
        if tick.label1.get_text() and low <= tick.get_loc() <= high
    ]
    assert any(t > 1.1 for t in labelled) and any(t < 0.9 for t in labelled), labelled  # a scale past 1 too
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert rows == ["eager [steady] 0.8 faster", "jit [steady] 1.45 slower"]  # only what differs, NEW/BASE
    title = saved[0].texts[0].get_text().replace("\n", " ")  # the direction, then what both rows share, once
    assert title == "NEW/BASE: NEW's time over BASE's, above 1 NEW is slower; workload=w, size=1000"


def test_cli_exit_code_files_environment_and_unmatched_cases(tmp_path, capsys):
    base = fake_run(tmp_path / "base", {"w": 1e-3, "gone": 1e-3}, seed=0)
    new = fake_run(tmp_path / "new", {"w": 1.3e-3, "added": 1e-3}, seed=1, jax_version="0.10.3")
    assert main([str(base), str(new), "--out", str(tmp_path / "out")]) == 1  # w is 30% slower, gone is missing
    out = capsys.readouterr().out
    assert "differs: jax_version: 0.10.2 -> 0.10.3" in out and "on one machine" in out
    assert "NEW only: workload=added" in out and "gate: fail (1 missing, 1 slower)" in out
    table = pd.read_csv(tmp_path / "out" / "compare.csv")
    assert set(zip(table["workload"], table["verdict"])) >= {("gone", "missing"), ("w", "slower")}
    assert {"compare.csv", "compare.md", "compare.png"} <= {p.name for p in (tmp_path / "out").iterdir()}
    again = ["--out", str(tmp_path / "out"), "--no-plot"]  # the picture is checked above
    assert main([str(base), str(new), "--fail-on", "compile", "--allow-missing", *again]) == 0
    assert main([str(base), str(new), "--fail-on", "compile", *again]) == 1  # missing
    capsys.readouterr()
    assert main([str(base), str(new), "--fail-on", "speed"]) == 2
    assert main([str(base), str(new), "--excuse-host-drift=cpu"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "jitexp-compare: error: --fail-on='speed' is invalid; valid choices: steady, first_call, compile, temp_bytes, "
        "argument_bytes, output_bytes, alias_bytes, peak_memory_bytes, device_peak_bytes, peak_rss_growth_bytes",
        "jitexp-compare: error: --excuse-host-drift='cpu' is invalid; valid choices: auto, dispatch, copy, matmul",
    ]


def test_help_names_every_gate_flag(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for flag in ("--excuse-host-drift", "--allow-missing", "--allow-undetectable", "--fail-on"):
        assert flag in text
    assert "a case broke (ok in BASE, an error in NEW: always)" in text


def test_processes_replaced_under_steal_are_on_record_but_not_compared(tmp_path):
    base = fake_run(tmp_path / "base", {"f": 1e-3}, seed=3)
    new = fake_run(tmp_path / "new", {"f": 1e-3}, seed=4)
    procs_file = new / "0" / "processes.csv"
    procs = pd.read_csv(procs_file).assign(replaced=False)
    stolen = procs.assign(replaced=True, first_call_s=procs["first_call_s"] * 10, compile_s=procs["compile_s"] * 10)
    write_csv(pd.concat([procs, stolen]).reindex(columns=PROCESS_COLUMNS), procs_file)
    assert load_side(new).values[(str(new / "0"), "", "", "jit")]["compile"] == pytest.approx(
        procs["compile_s"].tolist()
    )
    table = compare(base, new).set_index("metric")
    assert table.loc["compile", "verdict"] == "no significant change"  # ten times slower replaced ones: not seen


def test_another_device_count_or_mesh_is_another_case_and_a_run_without_those_columns_still_matches(tmp_path):
    one = fake_run(tmp_path / "one", {"w": 1e-3}, seed=0, work={"device_count": 1, "mesh": ""})
    four = fake_run(tmp_path / "four", {"w": 2e-3}, seed=1, work={"device_count": 4, "mesh": "data=4"})
    table = compare(one, four)
    assert set(table["verdict"]) == {"missing"}, table  # 4 devices are not 1 device slower: BASE's case is not in NEW
    old = fake_run(tmp_path / "old", {"w": 1e-3}, seed=2)  # written before device columns existed
    assert verdicts(old, one)[("w", "steady")] == "no significant change"


def test_a_status_row_says_no_process_was_compared_and_leaves_every_figure_empty():
    from jitexp.report.compare.gate import _status_row
    from jitexp.report.compare.runs import COLUMNS, NOTE

    row = _status_row("broken")
    assert (row["metric"], row["verdict"], row["n_base"], row["n_new"], row[NOTE]) == ("status", "broken", 0, 0, "")
    figures = [c for c in COLUMNS if c not in ("metric", "verdict", "n_base", "n_new", NOTE) and c in row]
    assert figures and all(isinstance(row[c], float) and math.isnan(row[c]) for c in figures), row


def test_a_failure_in_new_is_told_by_its_phase_type_and_message_or_else_its_status():
    from jitexp.report.compare.gate import _failure

    row = {"error_phase": "run", "error_type": "ValueError", "error_message": "bad shape", "status": "error"}
    assert _failure(row) == "error in NEW: run: ValueError: bad shape"
    assert _failure({"error_phase": math.nan, "status": "timeout"}) == "error in NEW: status timeout"


def test_the_gate_by_default_fails_cannot_tell_and_missing_cases():
    from jitexp.report.compare.gate import failing

    table = pd.DataFrame(
        {
            "metric": ["steady", "steady", "status", "steady", "compile"],
            "verdict": ["slower", "cannot tell (1 process per side)", "missing", "faster", "slower"],
        }
    )
    assert list(failing(table, ["steady"]).index) == [0, 1, 2]
    assert list(failing(table, ["steady"], allow_undetectable=True, allow_missing=True).index) == [0]


def test_the_table_lists_broken_then_missing_then_the_largest_changes_first(tmp_path):
    base = fake_run(tmp_path / "base", {"same": 1e-3, "double": 1e-3, "half": 1e-3, "v": 1e-3, "gone": 1e-3}, seed=0)
    new = fake_run(
        tmp_path / "new", {"same": 1e-3, "double": 2e-3, "half": 0.6e-3, "v": 1e-3}, seed=1, errors={"v": BOOM}
    )
    table = compare(base, new)
    assert list(table.index) == list(range(len(table))) and "index" not in table.columns
    assert list(table["verdict"][:2]) == ["broken", "missing"] and table["note"][1] == "not in NEW"
    steady = table[table["metric"] == "steady"]
    assert list(steady["workload"]) == ["double", "half", "same"]  # by |log ratio|: 2x, then 1/0.6 = 1.67x, then ~1
    assert (table.loc[table["verdict"] == "missing", ["n_base", "n_new"]] == 0).all(axis=None)


def test_a_metric_only_one_side_has_counts_the_processes_of_that_side(tmp_path):
    base = fake_run(tmp_path / "base", {"w": 1e-3}, seed=0)
    new = fake_run(tmp_path / "new", {"w": 1e-3}, seed=1, processes=6)
    procs = pd.read_csv(new / "0" / "processes.csv")
    procs["compile_s"] = np.nan
    procs.to_csv(new / "0" / "processes.csv", index=False)
    row = compare(base, new).set_index("metric").loc["compile"]
    assert (row["verdict"], row["n_base"], row["n_new"]) == ("cannot tell (no compile in NEW)", 8, 0)


def test_metric_row_uses_its_threshold():
    base, new = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0], [1.07, 1.08, 1.06, 1.09, 1.05, 1.07]  # ~7% slower
    assert metric_row("compile", base, new, 0.05, 0.05, between_run_sd=0.0)["verdict"] == "slower"
    assert metric_row("compile", base, new, 0.1, 0.05, between_run_sd=0.0)["verdict"] == "no significant change"


def hand_side(cases: dict[str, dict[str, list]], size: int = 64, errors: tuple[str, ...] = ()) -> Side:
    """A run built by hand: one ok row per case (job folder = workload) with the given per-process values."""
    rows = pd.DataFrame([{"workload": w, "mode": "jit", "size": size, "_job": w} for w in cases])
    values = {(w, "", "", "jit"): v for w, v in cases.items()}
    failed = pd.DataFrame([{"workload": w, "mode": "jit", "size": size, "_job": w, "status": "error"} for w in errors])
    return Side(rows=rows, values=values, errors=failed)


SAME = [1e-3, 1e-3, 1e-3, 1e-3]
DOUBLED = [2e-3, 2e-3, 2e-3, 2e-3]


def test_a_metric_neither_side_has_skips_only_that_metric():
    side = hand_side({"w": {"first_call": SAME, "compile": SAME}})
    assert list(compare(side, side)["metric"]) == ["first_call", "compile"]


def test_a_metric_only_new_has_counts_the_processes_of_new():
    base = hand_side({"w": {"first_call": SAME}})
    new = hand_side({"w": {"first_call": SAME, "compile": SAME[:3]}})
    row = compare(base, new).set_index("metric").loc["compile"]
    assert (row["verdict"], row["n_base"], row["n_new"]) == ("cannot tell (no compile in BASE)", 0, 3)


def test_ignored_columns_are_left_out_of_the_match():
    base, new = hand_side({"w": {"compile": SAME}}), hand_side({"w": {"compile": SAME}}, size=128)
    assert list(compare(base, new)["verdict"]) == ["missing"]
    table = compare(base, new, ignore=["size"])
    assert list(table.columns[:2]) == ["workload", "mode"]
    assert list(table["verdict"]) == ["no significant change"]


def test_broken_comes_before_missing_whatever_the_order_of_the_cases():
    base = hand_side({"gone": {"compile": SAME}, "v": {"compile": SAME}})
    new = hand_side({}, errors=("v",))
    assert list(compare(base, new)[["workload", "verdict"]].itertuples(index=False)) == [
        ("v", "broken"),
        ("gone", "missing"),
    ]


def test_a_row_without_a_ratio_sorts_as_no_change_keeping_its_place():
    # steady only in BASE: 'cannot tell' with no ratio, as large a change as compile's exact 1.0 (none): the
    # case order stays; compile's 2x comes first
    base = hand_side({"w": {"steady": [np.ones(3)] * 4, "first_call": SAME, "compile": SAME}})
    new = hand_side({"w": {"first_call": DOUBLED, "compile": SAME}})
    table = compare(base, new)
    assert list(table["metric"]) == ["first_call", "steady", "compile"]
    assert list(table["ratio"][[0, 2]]) == [2.0, 1.0] and math.isnan(table["ratio"][1])


def test_metric_row_uses_its_alpha():
    base, new = [1.0, 1.01, 0.99], [2.0, 2.01, 1.99]  # 3 processes a side: p = 0.1 at best
    assert metric_row("compile", base, new, 0.05, 0.5, between_run_sd=0.0)["verdict"] == "slower"
    assert (
        metric_row("compile", base, new, 0.05, 0.05, between_run_sd=0.0)["verdict"]
        == "cannot tell (3 processes per side)"
    )


def test_host_drift_excuses_by_the_threshold_given():
    # steady 1.5x slower, the matmul probe 1.4x slower: 1.5 / 1.4 = 1.07 is beyond 5%, within 10%
    spread = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01, 0.99]
    base = hand_side({"w": {"steady": [np.array([s]) for s in spread], "host_probe_matmul_s": spread}})
    new = hand_side(
        {"w": {"steady": [np.array([1.5 * s]) for s in spread], "host_probe_matmul_s": [1.4 * s for s in spread]}}
    )
    verdict = {t: compare(base, new, threshold=t, excuse_host_drift="matmul")["verdict"][0] for t in (0.05, 0.1)}
    assert verdict == {0.05: "slower", 0.1: "within host drift"}


# ---- one direction, a table that fits (issue 50) ---------------------------------------------------------------


def test_text_table_csv_and_chart_read_new_over_base_one_way(tmp_path, capsys, monkeypatch):
    """A case 30% slower and one 20% faster: the table, compare.csv and compare.png all say NEW/BASE (1.3 and 0.8),
    'slower' above 1; the default table names only what differs and every line fits 120 characters."""
    from matplotlib.figure import Figure

    base = fake_run(tmp_path / "base", {"slow": 1e-3, "quick": 1e-3}, seed=0, host=CALM, work=COMPUTE)
    new = fake_run(tmp_path / "new", {"slow": 1.3e-3, "quick": 0.8e-3}, seed=1, host=CALM, work=COMPUTE)
    saved, real = [], Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda fig, *a, **k: saved.append(fig) or real(fig, *a, **k))
    assert main([str(base), str(new), "--out", str(tmp_path / "out"), "--fail-on", "steady"]) == 1
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 120, out
    csv = pd.read_csv(tmp_path / "out" / "compare.csv").set_index(["workload", "metric"])
    table = out.split("\n\n")[1].splitlines()  # the shared line, the header, the rule, then the rows
    assert table[0].startswith("every row: size=64") and "NEW/BASE (95% CI)" in table[1]
    assert "size" not in table[1].split()  # the same in every row: on the line above, not a column
    labels = [t.get_text() for t in saved[0].axes[0].get_yticklabels()]
    for workload, word in (("slow", "slower"), ("quick", "faster")):
        ratio = csv.loc[(workload, "steady"), "ratio"]
        assert (ratio > 1) == (word == "slower") and csv.loc[(workload, "steady"), "verdict"] == word
        printed = formatting.three_digits(ratio)
        row = next(r for r in table if r.startswith(workload) and " steady " in r)
        assert f" {printed} (" in row and row.rstrip().endswith(word), row  # the table: NEW/BASE, then the verdict
        assert f"{workload} [steady] {printed} {word}" in labels  # the chart: the same figure and word
    assert "notes:" in out and "slow jit steady: host matmul " in out  # the note column's text, under the table
    assert main([str(base), str(new), "--out", str(tmp_path / "out"), "--no-plot", "--all"]) == 1
    every = capsys.readouterr().out.split("\n\n")[1].splitlines()
    assert {"size", "note", "processes"} <= set(every[0].split()) and "every row:" not in every[0]


def test_a_time_that_became_no_speedup_in_new_is_broken():
    from jitexp.report.compare.gate import not_work

    base = pd.DataFrame([{"mode": "jit", "verdict": "faster"}])
    differs = pd.DataFrame([{"mode": "jit", "verdict": "result differs"}])
    assert not_work(base, differs) == "NEW's time is no speedup: result differs"
    assert not_work(differs, differs) == ""  # already so in BASE: compared as before, not newly broken
    assert not_work(base, base) == ""
    assert not_work(pd.DataFrame([{"mode": "jit"}]), pd.DataFrame([{"mode": "jit", "verdict": "no work"}])) == (
        "NEW's time is no speedup: no work"
    )
    assert not_work(base, pd.DataFrame([{"mode": "jit"}])) == ""  # a row without a verdict (one mode)
    missing = pd.DataFrame({"mode": ["jit"], "verdict": pd.array([pd.NA], dtype="string")})  # as read from a CSV
    assert not_work(missing, missing) == "" and not_work(missing, differs) == "NEW's time is no speedup: result differs"


def test_compare_lists_a_case_whose_new_time_is_no_speedup_as_broken_first():
    from dataclasses import replace

    from jitexp.report.compare.gate import failing

    side = hand_side({"w": {"compile": SAME}, "x": {"compile": SAME}})
    base = replace(side, rows=side.rows.assign(verdict="faster"))
    new = replace(side, rows=side.rows.assign(verdict=["faster", "result differs"]))
    table = compare(base, new)
    assert list(table[["workload", "metric", "verdict"]].itertuples(index=False)) == [
        ("x", "status", "broken"),
        ("w", "compile", "no significant change"),
        ("x", "compile", "no significant change"),
    ]
    assert table["note"][0] == "NEW's time is no speedup: result differs"
    assert (table.loc[0, ["n_base", "n_new"]] == 0).all() and math.isnan(table["ratio"][0])
    assert list(failing(table, ["steady"]).index) == [0]  # broken fails whatever --fail-on says
    assert list(compare(new, new)["verdict"]) == ["no significant change"] * 2  # already so in BASE: not broken
