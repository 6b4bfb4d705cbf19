"""rows.job_result: a job's columns from everything its processes and probes returned (the first process's
platform and environment, medians over processes, the probes' columns, the long files), and a job with variants:
a row per (variant, mode), each with its own identity, the others paired against the first (ab_*)."""

from __future__ import annotations

import dataclasses

import pytest

from helpers import measured
from jitexp.analysis.rows import job_result
from jitexp.config import ExperimentConfig, ModeConfig, WorkloadConfig
from jitexp.config.schema import TimingConfig
from jitexp.errors import Failure
from jitexp.records import Cold, JobRaw, ModeResult, Noise, ProcessResult, Profile


def config(**timing) -> ExperimentConfig:
    return ExperimentConfig(
        workload=WorkloadConfig(fn="pkg.fn"),
        mode=ModeConfig(eager=True, jit=True),
        size=8,
        roofline=False,
        timing=TimingConfig(**timing),
    )


def proc(p: int, **kw) -> ProcessResult:
    modes = {"eager": measured(2e-3), "jit": measured(1e-3, device_time_error="no trace events")}
    return ProcessResult(p, kw.pop("modes", modes), device_kind="gpu-ish", **kw)


def test_the_job_columns_come_from_the_first_process_and_medians_over_all():
    processes = [
        proc(
            0,
            platform="gpu",
            environment={"cpu_count": 64, "jax_version": "0.9"},
            cpu_async_dispatch=True,
            measure_s=1.0,
            peak_rss_growth_bytes=100,
            device_peak_bytes=7,
            device_open_s=0.1,
            setup_kinds={"": "setup"},
        ),
        proc(1, platform="other", measure_s=2.0, peak_rss_growth_bytes=301, setup_s=0.5, device_open_s=0.3),
        proc(2, platform="other", measure_s=0.5, setup_s=0.7, device_peak_bytes=4, setup_kinds={"": "size"}),
    ]
    raw = JobRaw(processes, "ci", load_avg_start=0.5, load_avg_end=0.7, provenance={"code_commit": "abc"}, wall_s=9.0)
    cfg = dataclasses.replace(config(), workload=WorkloadConfig(fn="pkg.fn", setup="pkg.make"))
    rows = job_result(cfg, raw, job_num=4, overrides="size=8").rows
    for row in rows:
        assert (row["job_num"], row["overrides"], row["workload"], row["size"]) == (4, "size=8", "fn", 8)
        assert (row["platform"], row["device_kind"], row["cpu_count"], row["jax_version"]) == (
            "gpu",
            "gpu-ish",
            64,
            "0.9",
        )
        assert (row["code_commit"], row["cpu_async_dispatch"], row["isolate"], row["interleave"]) == (
            "abc",
            True,
            "process",
            "rounds",
        )
        assert (row["modes"], row["measure_s"], row["load_avg_start"], row["load_avg_end"]) == (
            "eager,jit",
            3.5,
            0.5,
            0.7,
        )
        # medians over the processes that report one: 100 and 301 -> 200 (whole bytes), 7 and 4 -> 5, 0.1 and 0.3,
        # 0.5 and 0.7
        assert row["peak_rss_growth_bytes"] == 200 and isinstance(row["peak_rss_growth_bytes"], int)
        assert row["device_peak_bytes"] == 5
        assert row["inputs"] == "setup"  # the first process that found the setup says how
        assert (row["device_open_s"], row["setup_s"]) == pytest.approx((0.2, 0.6))
        assert (row["job_wall_s"], row["job_open_s"], row["prepared_processes"]) == (9.0, pytest.approx(0.4), 0)
        assert row["n_steal_replaced"] == 0 and row["status"] == "ok"
        assert row["unavailable"] == (
            "noise: not available on this host (no per-CPU steal or run-queue accounting in /proc); "
            "device_s: no trace events; peaks: roofline=false"
        )
        assert "device_time_error" not in row
        assert row["unstable"] is False


def test_a_job_whose_processes_report_no_open_setup_or_wall_time_has_no_such_columns():
    row = job_result(config(), JobRaw([proc(0), proc(1)], "ci")).rows[0]
    assert {"device_open_s", "setup_s", "peak_rss_growth_bytes", "device_peak_bytes", "job_wall_s"}.isdisjoint(row)
    assert row["load_avg_end"] is None and row["load_avg_start"] is None
    assert (row["job_num"], row["overrides"]) == (0, "")


def test_instability_uses_the_jobs_steal_limit_and_the_end_load():
    noisy = Noise(steal=0.03, run_queue_wait=0.0)
    processes = [proc(p, environment={"cpu_count": 2}, noise=noisy) for p in range(2)]
    raw = JobRaw(processes, "ci", load_avg_start=0.0, load_avg_end=9.0)
    eager, jit = job_result(config(max_steal=0.02), raw).rows
    assert jit["unstable"] is True
    assert jit["unstable_reason"] == (
        "CPU steal 3% of the time (median process; limit 2%); other work on the machine (load average 9.0: more "
        "than the job's own worker, at most 3 on 2 CPU(s))"
    )
    assert jit["unavailable"] == "device_s: no trace events; peaks: roofline=false"


def test_an_error_row_gets_no_instability_verdict():
    broken = {"eager": measured(2e-3), "jit": ModeResult(Failure("compile", "ValueError", "no", ""))}
    eager, jit = job_result(config(), JobRaw([proc(0, modes=broken)], "error")).rows
    assert jit["status"] == "error" and "unstable" not in jit and eager["unstable"] is False
    assert jit["unavailable"].startswith("noise: not available")


def test_the_device_peaks_give_the_shares_of_peak():
    processes = [proc(p, peaks={"peak_flops_per_s": 1e9}) for p in range(2)]
    processes[0].modes["jit"] = measured(1e-3, flops=1e5)
    cfg = dataclasses.replace(config(), roofline=True)
    eager, jit = job_result(cfg, JobRaw(processes, "ci")).rows
    # 1e5 flops in 1 ms: 1e8 FLOP/s, a tenth of the peak
    assert jit["peak_flops_per_s"] == 1e9 and jit["peak_flops_share"] == pytest.approx(0.1)
    assert eager["peak_flops_per_s"] == 1e9 and "peak_flops_share" not in eager
    # roofline=true and the peaks measured: nothing to say about them
    assert jit["unavailable"] == "noise: not available on this host (no per-CPU steal or run-queue accounting in /proc)"


def test_the_cache_probe_columns_land_on_their_modes_row():
    cold = ProcessResult(0, {"jit": ModeResult(cold=Cold(2.0, 0.1, 0.1, 1.5, 0.3, 1))})
    warm = ProcessResult(0, {"jit": ModeResult(cold=Cold(0.5, 0.1, 0.1, 0.1, 0.2, 1), cache_hits=1, cache_misses=0)})
    eager, jit = job_result(config(), JobRaw([proc(0)], "ci", cache=(cold, warm))).rows
    assert (jit["cache_cold_first_call_s"], jit["cache_warm_first_call_s"], jit["cache_hit"]) == (2.0, 0.5, True)
    assert not any(k.startswith("cache_") for k in eager)


def test_the_long_files_keep_replaced_processes_and_the_sequence_probe():
    kept = [proc(p, noise=Noise(steal=0.0)) for p in range(2)]
    slow = {"eager": measured(4e-3), "jit": measured(3e-3)}
    replaced = [proc(7, modes=slow, noise=Noise(steal=0.5, under_steal=True))]
    probe = ProcessResult(0, {"jit": ModeResult(calls=[{"call": 1, "s": 0.2}, {"call": 2, "s": 0.1}])})
    out = job_result(config(), JobRaw(kept, "ci", replaced=replaced, sequence={"jit": probe}), job_num=3)
    assert [(p["process"], p["mode"], p["replaced"]) for p in out.processes] == [
        (0, "eager", False),
        (0, "jit", False),
        (1, "eager", False),
        (1, "jit", False),
        (7, "eager", True),
        (7, "jit", True),
    ]
    eager, jit = out.rows
    # kept medians 1 ms against all three processes' (1, 1, 3 ms): the median is the same, the ratio 1
    assert (jit["n_steal_replaced"], jit["kept_vs_all_processes"]) == (1, 1.0)
    assert eager["kept_vs_all_processes"] == 1.0
    assert len(out.samples) == 2 * 2 * 4
    assert out.calls == [
        {"job_num": 3, "workload": "fn", "size": 8, "mode": "jit", "probe": "sequence", "call": 1, "s": 0.2},
        {"job_num": 3, "workload": "fn", "size": 8, "mode": "jit", "probe": "sequence", "call": 2, "s": 0.1},
    ]


def test_the_profile_worker_fills_the_compiled_rows_and_the_job_files():
    profile = Profile(calls=2, wall_s=1.0, execute_s=0.4, events=[{"name": "fusion"}], files={"t.json.gz": b"z"})
    worker = ProcessResult(0, {"jit": ModeResult(profile=profile)})
    out = job_result(config(), JobRaw([proc(0)], "ci", profile=worker), job_num=5)
    eager, jit = out.rows
    assert (jit["profile_calls"], jit["profile_step_s"], jit["profile_execute_s"]) == (2, 0.5, 0.4)
    assert out.profile == [{"job_num": 5, "workload": "fn", "size": 8, "mode": "jit", "name": "fusion"}]
    assert out.files == {"profile/jit/t.json.gz": b"z"}
    assert not any(k.startswith("profile") for k in eager)


# ---- variants ----------------------------------------------------------------------------------------------


def variants_config() -> ExperimentConfig:
    before = WorkloadConfig(fn="pkg.once", setup="pkg.make", params={"n": 1})
    after = dataclasses.replace(before, fn="pkg.thrice", params={"n": 3})
    mode = ModeConfig(eager=True, jit=True)

    def resolved(workload: WorkloadConfig, size: int) -> dict:
        return {
            "workload": dataclasses.asdict(workload),
            "mode": dataclasses.asdict(mode),
            "size": size,
            "dtype": "float32",
            "seed": 0,
        }

    return ExperimentConfig(
        workload=before,
        mode=mode,
        size=8,
        roofline=False,
        variants={
            "before": {"_resolved": resolved(before, 8)},
            "after": {"workload.fn": "pkg.thrice", "size": 16, "_resolved": resolved(after, 16)},
        },
    )


def variant_process(
    p: int, after_jit: ModeResult | None = None, before_eager: ModeResult | None = None
) -> ProcessResult:
    return ProcessResult(
        p,
        variants={
            "before": {"eager": before_eager or measured(4e-3), "jit": measured(1e-3)},
            "after": {"eager": measured(4e-3), "jit": after_jit or measured(2e-3, first=0.8)},
        },
        platform="cpu",
        setup_kinds={"before": "setup", "after": "size"},
    )


def test_each_variant_has_its_own_identity_and_is_paired_with_the_first():
    raw = JobRaw([variant_process(p) for p in range(6)], "ci")
    out = job_result(variants_config(), raw, job_num=2, overrides="size=8")
    rows = {(r["variant"], r["mode"]): r for r in out.rows}
    assert list(rows) == [("before", "eager"), ("before", "jit"), ("after", "eager"), ("after", "jit")]
    before, after = rows[("before", "jit")], rows[("after", "jit")]
    assert (before["workload"], before["size"], before["param_n"], before["inputs"]) == ("once", 8, 1, "setup")
    assert (after["workload"], after["size"], after["param_n"], after["inputs"]) == ("thrice", 16, 3, "size")
    assert (after["job_num"], after["overrides"], after["platform"]) == (2, "size=8", "cpu")
    assert (after["stop_reason"], after["n_processes"]) == ("ci", 6)
    # within each variant, jit against its own eager
    assert (before["speedup"], after["speedup"]) == pytest.approx((4.0, 2.0))
    # after against before, mode by mode: jit takes twice as long, eager the same
    assert (after["ab_baseline"], after["ab_steady_ratio"], after["ab_steady_n_pairs"]) == ("before", 2.0, 6)
    assert after["ab_first_call_ratio"] == pytest.approx(1.6)
    assert rows[("after", "eager")]["ab_steady_ratio"] == 1.0
    assert not any(k.startswith("ab_") for r in (before, rows[("before", "eager")]) for k in r)
    assert {(p["variant"], p["mode"]) for p in out.processes} == set(rows)
    assert len(out.processes) == 4 * 6 and all(p["replaced"] is False for p in out.processes)


def test_a_variant_row_that_failed_on_either_side_gets_no_ab_columns():
    broken = ModeResult(Failure("compile", "ValueError", "no", ""))
    processes = [variant_process(p, after_jit=broken, before_eager=broken) for p in range(2)]
    rows = {(r["variant"], r["mode"]): r for r in job_result(variants_config(), JobRaw(processes, "error")).rows}
    assert rows[("after", "jit")]["status"] == "error" and rows[("before", "eager")]["status"] == "error"
    assert rows[("after", "eager")]["status"] == "ok" and rows[("before", "jit")]["status"] == "ok"
    assert not any(k.startswith("ab_") for r in rows.values() for k in r)


def test_a_variant_row_compares_its_kept_processes_with_its_replaced_ones():
    kept = [variant_process(p) for p in range(2)]
    slow = ProcessResult(
        9,
        variants={
            "before": {"eager": measured(4e-3), "jit": measured(9e-3)},
            "after": {"eager": measured(4e-3), "jit": measured(2e-3)},
        },
    )
    rows = {
        (r["variant"], r["mode"]): r for r in job_result(variants_config(), JobRaw(kept, "ci", replaced=[slow])).rows
    }
    # before's jit: kept 1 ms, all three (1, 1, 9 ms) 1 ms too; after's jit: 2 ms throughout
    assert rows[("before", "jit")]["kept_vs_all_processes"] == 1.0
    assert rows[("after", "jit")]["kept_vs_all_processes"] == 1.0
