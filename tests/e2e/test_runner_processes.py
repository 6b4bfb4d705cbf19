"""The runner through its Python API with fresh worker processes: several processes a job, a crash and a hang,
the driver without JAX, the preflight's child, the disk cache cold against warm, a worker's memory. The rest runs
in-process: tests/inprocess/test_runner_jobs.py."""

from __future__ import annotations

import numpy as np
import pytest

from jitexp import compose, run

QUICK = ["timing=quick"]


def job(*overrides: str):
    return run(compose([*QUICK, *overrides]))


def test_default_job_pairs_eager_and_jit():
    result = job("size=32", "timing.processes=2", "timing.max_processes=2", "timing.cold_processes=2")
    eager, jit = result.by_mode("eager"), result.by_mode("jit")
    assert [r["mode"] for r in result.rows] == ["eager", "jit"]
    assert eager["status"] == jit["status"] == "ok"
    assert jit["n_processes"] == 2 and jit["ci_scope"] == "between_processes"
    kept = [p for p in result.processes if not p["replaced"]]  # a process replaced under steal keeps its index
    per_process = {m: {p["process"]: p["median_s"] for p in kept if p["mode"] == m} for m in ("eager", "jit")}
    ratios = [per_process["eager"][p] / per_process["jit"][p] for p in (0, 1)]
    # the Hodges-Lehmann estimate of two per-process ratios: the mean of their logs (their Walsh averages' median)
    assert jit["baseline_mode"] == "eager" and jit["speedup"] == pytest.approx(float(np.sqrt(ratios[0] * ratios[1])))
    assert jit["speedup_ci_low"] <= jit["speedup"] <= jit["speedup_ci_high"]
    # two processes: no 95% Wilcoxon interval exists (it needs 6), and the verdict says so
    assert jit["speedup_ci_low"] == 0 and jit["speedup_ci_high"] == float("inf")
    assert jit["verdict"] == "cannot tell (fewer than 6 processes for a 95% interval)"
    assert "speedup" not in eager or eager.get("speedup") is None
    assert {(s["process"], s["mode"]) for s in result.samples} == {(p, m) for p in (0, 1) for m in ("eager", "jit")}
    rounds = {p: sorted(s["round"] for s in result.samples if s["process"] == p and s["mode"] == "jit") for p in (0, 1)}
    assert all(r == list(range(len(r))) for r in rounds.values())
    cold = {(p["process"], p["mode"]): p["cold_position"] for p in kept}
    assert cold == {(0, "eager"): 0, (0, "jit"): 1, (1, "jit"): 0, (1, "eager"): 1}  # rotated per process
    with pytest.raises(ValueError, match="by_mode"):
        _ = result.row


def test_modes_in_processes_of_their_own_are_paired_by_index():
    result = job("size=32", "timing.processes=2", "timing.max_processes=2", "timing.interleave=processes")
    eager, jit = result.by_mode("eager"), result.by_mode("jit")
    assert eager["status"] == jit["status"] == "ok" and jit["interleave"] == "processes"
    assert jit["n_processes"] == 2 and jit["baseline_mode"] == "eager" and jit["speedup"] > 0
    kept = [p for p in result.processes if not p["replaced"]]
    assert sorted((p["process"], p["mode"]) for p in kept) == [(0, "eager"), (0, "jit"), (1, "eager"), (1, "jit")]
    # every mode's cold call was the first of its process: none followed another mode's (rounds gives {0, 1})
    assert {p["cold_position"] for p in kept} == {0}
    assert jit["max_abs_err_vs_eager"] is not None  # jit's first process computed eager's reference itself


def test_a_mode_that_fails_in_processes_of_its_own_leaves_the_others_theirs():
    result = job(
        "workload=conditional", "size=8", "timing.processes=3", "timing.max_processes=3", "timing.interleave=processes"
    )
    eager, jit = result.by_mode("eager"), result.by_mode("jit")
    assert jit["status"] == "error" and jit["error_type"] == "jax.errors.TracerBoolConversionError"
    assert eager["status"] == "ok" and eager["n_processes"] == 3  # jit failed in its first process; eager went on


@pytest.mark.serial  # timing.timeout_s=1 must fire in the hang, not earlier on a loaded machine
def test_a_crash_and_a_hang_are_error_rows(tmp_path, monkeypatch):
    (tmp_path / "faulty.py").write_text(
        "import os, time\ndef die(x):\n    os._exit(3)\ndef hang(x):\n    time.sleep(60)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    crash = job("mode=jit", "workload=custom", "workload.fn=faulty.die", "workload.args=[{shape:[2]}]").row
    assert (crash["status"], crash["error_phase"], crash["error_type"]) == ("error", "trace", "exit 3")
    hang = job(
        "mode=eager", "workload=custom", "workload.fn=faulty.hang", "workload.args=[{shape:[2]}]", "timing.timeout_s=1"
    ).row
    assert (hang["status"], hang["error_phase"], hang["error_type"]) == ("error", "execute", "Timeout")


def test_the_driver_never_imports_jax():
    import subprocess
    import sys

    code = (
        "import sys, jitexp\n"
        "result = jitexp.run(jitexp.compose(['timing=quick', 'size=8']))\n"
        "assert [r['status'] for r in result.rows] == ['ok', 'ok'], result.rows\n"
        "print('jax' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_disk_cache_cold_against_warm_in_fresh_workers(tmp_path):
    result = job("experiment=compilation_cache", "size=32", f"compilation_cache_dir={tmp_path / 'xla'}")
    jit = result.by_mode("jit")
    assert jit["cache_hit"] is True
    assert jit["cache_warm_trace_s"] > 0 and jit["cache_warm_lower_s"] > 0  # trace and lower still run
    assert "cache_hit" not in result.by_mode("eager")
    assert [p.name for p in (tmp_path / "xla").iterdir() if p.name.startswith("jitexp-cache-probe-")] == []


def test_memory_columns():
    result = job("size=64")
    assert {r["peak_rss_growth_bytes"] for r in result.rows} == {result.rows[0]["peak_rss_growth_bytes"]} != {None}
    assert result.rows[0]["peak_rss_growth_bytes"] > 0
    assert result.by_mode("jit")["argument_size_bytes"] == 2 * 64 * 64 * 4 and "device_peak_bytes" not in result.rows[0]


def test_the_preflights_child_keeps_its_process_and_once_dead_is_not_started_again():
    # engine.processes.Child: one process answers every call (its imports kept); when it dies the caller is told
    # so, and checks in itself from then on
    import os

    from jitexp.engine.processes import Child

    child = Child("jitexp.worker.entry")
    try:
        first = child.call("os", "getpid")
        assert first[0] and first[1] != os.getpid() and child.call("os", "getpid") == first
        assert child.call("os", "_exit", 3) == (False, None) and child.dead
        assert child.call("os", "getpid") == (False, None)  # not started again
    finally:
        child.close()


def test_the_next_worker_is_prepared_while_one_measures_and_each_open_is_recorded():
    # timing.prepare_next=true does on a CPU what an accelerator's job does by default (engine.handover)
    result = job(
        "workload=add_one",
        "mode=jit",
        "size=8",
        "timing.processes=3",
        "timing.max_processes=3",
        "timing.prepare_next=true",
    )
    jit = result.by_mode("jit")
    assert jit["status"] == "ok" and jit["n_processes"] == 3
    assert jit["prepared_processes"] == 2  # processes 1 and 2 were forked while the one before measured
    kept = sorted(p["process"] for p in result.processes if not p["replaced"])
    assert kept == [0, 1, 2]  # each prepared worker ran as the process the driver's go named
    assert all(p["device_open_s"] > 0 for p in result.processes)
    assert jit["device_open_s"] > 0 and jit["job_open_s"] >= jit["device_open_s"]
    assert jit["job_wall_s"] > jit["job_open_s"] + jit["job_compile_s"]
    assert jit["flops"] > 0  # process 0 (the extras) is still the one that ran first


def test_a_cpu_job_on_the_default_device_says_where_it_ran_and_why_columns_are_empty():
    result = job("workload=add_one", "mode=jit", "size=1000", "timing.processes=1", "timing.max_processes=1")
    jit = result.by_mode("jit")
    assert (jit["platform"], jit["device_kind"]) == ("cpu", "cpu")  # device=auto on a machine with no accelerator
    assert jit["peak_flops_per_s"] > 0 and jit["peak_bytes_per_s"] > 0
    assert "device_peak_bytes: the CPU backend keeps no allocator statistics" in jit["unavailable"]
    assert jit["prepared_processes"] == 0  # auto on a CPU: no hand-over
