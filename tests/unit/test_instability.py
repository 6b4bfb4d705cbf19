"""The machine's noise over a job's processes and the instability flag (jitexp.analysis.instability) fed hand-made
processes and rows: each reason's exact words, its threshold and the figures a row may lack."""

from __future__ import annotations

import math

import pytest

from jitexp.analysis.instability import (
    _pct,
    instability,
    kept_against_all,
    noise_columns,
    other_load,
    own_load,
    process_noise,
)
from jitexp.records import Noise, ProcessResult

CALM = {"median_s": 2.0, "process_median_min_s": 2.0, "process_median_max_s": 2.0}


def proc(steal=None, wait=None, probe=None) -> ProcessResult:
    return ProcessResult(0, noise=Noise(steal=steal, run_queue_wait=wait, host_probe=probe or {}))


def test_noise_columns_take_medians_and_the_largest_steal_of_the_processes_that_have_them():
    processes = [
        proc(0.01, 0.3, {"host_probe_copy_s": 1.0}),
        proc(0.09, None, {"host_probe_copy_s": 3.0, "host_probe_sleep_s": 5.0}),
        proc(None, 0.1, {"host_probe_copy_s": 2.5}),
        proc(0.02, 0.2),
    ]
    assert noise_columns(processes, 3) == {
        "n_steal_replaced": 3,
        "steal_median": 0.02,
        "steal_max": 0.09,
        "run_queue_wait_median": 0.2,
        "host_probe_copy_s": 2.5,
        "host_probe_sleep_s": 5.0,
    }


def test_noise_columns_leave_out_what_no_process_accounted():
    assert noise_columns([proc(), proc()], 0) == {"n_steal_replaced": 0}
    assert noise_columns([], 1) == {"n_steal_replaced": 1}


def test_process_noise_is_the_noise_columns_and_the_host_probes_of_one_process():
    noise = Noise(
        steal=0.1,
        steal_cold=0.2,
        run_queue_wait=0.3,
        idle=0.4,
        iowait=0.5,
        rounds_under_steal=2,
        host_probe={"host_probe_copy_s": 1e-3},
    )
    assert process_noise(ProcessResult(0, noise=noise)) == {
        "steal": 0.1,
        "steal_cold": 0.2,
        "run_queue_wait": 0.3,
        "idle": 0.4,
        "iowait": 0.5,
        "rounds_under_steal": 2,
        "host_probe_copy_s": 1e-3,
    }


def p(median_s, replaced=False, mode="jit", variant=None):
    return {"variant": variant, "mode": mode, "median_s": median_s, "replaced": replaced}


def test_kept_against_all_is_the_kept_median_over_every_process_median_of_the_mode():
    procs = [p(1.0), p(2.0), p(3.0), p(10.0, True), p(20.0, True), p(100.0, mode="eager"), p(math.nan, True)]
    assert kept_against_all(procs, None, "jit") == {"kept_vs_all_processes": 2.0 / 3.0}
    # another variant's processes are not this one's; no variant and "" are the same
    procs = [p(1.0, variant="a"), p(4.0, True, variant="a"), p(50.0, True, variant="b"), p(7.0, True, variant="")]
    assert kept_against_all(procs, "a", "jit") == {"kept_vs_all_processes": 1.0 / 2.5}
    assert kept_against_all([p(1.0, variant=""), p(3.0, True)], None, "jit") == {"kept_vs_all_processes": 0.5}


@pytest.mark.parametrize(
    "procs",
    [
        [p(1.0), p(2.0)],  # nothing replaced
        [p(1.0, True), p(2.0, True)],  # nothing kept
        [p(1.0), p(math.inf, True)],  # the replaced one has no median
        [],
    ],
)
def test_kept_against_all_is_empty_without_both_kinds(procs):
    assert kept_against_all(procs, None, "jit") == {}


@pytest.mark.parametrize(
    "value, limit, text",
    [(0.12, 0.05, "12%"), (0.104, 0.10, "10.4%"), (0.1004, 0.10, "10.0%"), (0.0951, 0.10, "9.5%"), (0.5, 0.1, "50%")],
)
def test_a_percentage_never_reads_as_the_limit_it_passes(value, limit, text):
    assert _pct(value, limit) == text


@pytest.mark.parametrize(
    "changes, reason",
    [
        ({"steal_median": 0.06}, "CPU steal 6% of the time (median process; limit 5%)"),
        ({"steal_median": 0.0504}, "CPU steal 5.0% of the time (median process; limit 5%)"),
        ({"run_queue_wait_median": 0.2}, "waited to run 20% of the time (median process; limit 5%)"),
        ({"compiles_during_timing": 3}, "3 compile(s) while timed"),
        ({"n_processes": 3, "process_rel_spread": 0.2}, "process medians spread 20% (robust cv; limit 10%)"),
        # a process median 60% above the median, then 70% below it
        (
            {"n_processes": 2, "process_median_max_s": 3.2},
            "a process median lies 60% from the median (limit 50%)",
        ),
        (
            {"n_processes": 2, "process_median_min_s": 0.6},
            "a process median lies 70% from the median (limit 50%)",
        ),
        ({"within_process_rel_spread": 0.15}, "samples within a process spread 15% (robust cv; limit 10%)"),
        (
            {"cpu_count": 2, "load_avg_start": 3.5, "load_avg_end": None},
            "other work on the machine (load average 3.5: more than the job's own worker, at most 3 on 2 CPU(s))",
        ),
        (
            {"cpu_count": 2, "load_avg_start": None, "load_avg_end": 3.4},
            "other work on the machine (load average 3.4: more than the job's own worker, at most 3 on 2 CPU(s))",
        ),
        # no CPU count (or 0): one CPU, so the job's own worker adds at most 2
        (
            {"load_avg_end": 2.5},
            "other work on the machine (load average 2.5: more than the job's own worker, at most 2 on 1 CPU(s))",
        ),
        (
            {"cpu_count": 0, "load_avg_start": 2.5, "load_avg_end": 0.5},
            "other work on the machine (load average 2.5: more than the job's own worker, at most 2 on 1 CPU(s))",
        ),
    ],
)
def test_each_reason_in_its_own_words(changes, reason):
    assert instability({**CALM, **changes}) == {"unstable": True, "unstable_reason": reason}


@pytest.mark.parametrize(
    "changes",
    [
        {},
        {"steal_median": 0.05, "run_queue_wait_median": 0.05},  # at the limit: not above it
        {"steal_median": None, "run_queue_wait_median": None},
        {"compiles_during_timing": 0},
        {"n_processes": 2, "process_rel_spread": 0.5},  # a spread of two processes says nothing
        {"n_processes": 3, "process_rel_spread": 0.10},
        {"n_processes": 3},  # no spread figure
        {"n_processes": 1, "process_median_max_s": 4.0},  # one process lies nowhere
        {"n_processes": 5, "process_median_max_s": 3.0, "process_median_min_s": 1.0},  # 50% either way: at the limit
        {"within_process_rel_spread": 0.10},
        {"cpu_count": 2, "load_avg_start": 3.0, "load_avg_end": 2.9},  # the job's own worker at most
        {"cpu_count": None, "load_avg_start": 2.0, "load_avg_end": None},
    ],
)
def test_a_steady_row_is_not_flagged(changes):
    assert instability({**CALM, **changes}) == {"unstable": False, "unstable_reason": ""}


def test_the_reasons_are_joined_in_order_and_the_steal_limit_is_the_callers():
    row = {
        **CALM,
        "steal_median": 0.3,
        "run_queue_wait_median": 0.25,
        "compiles_during_timing": 1,
        "n_processes": 4,
        "process_rel_spread": 0.5,
        "process_median_max_s": 4.0,
        "within_process_rel_spread": 0.3,
        "cpu_count": 4,
        "load_avg_end": 9.0,
    }
    assert instability(row, max_steal=0.2)["unstable_reason"] == (
        "CPU steal 30% of the time (median process; limit 20%); "
        "waited to run 25% of the time (median process; limit 20%); "
        "1 compile(s) while timed; "
        "process medians spread 50% (robust cv; limit 10%); "
        "a process median lies 100% from the median (limit 50%); "
        "samples within a process spread 30% (robust cv; limit 10%); "
        "other work on the machine (load average 9.0: more than the job's own worker, at most 5 on 4 CPU(s))"
    )
    assert not instability({**CALM, "steal_median": 0.3, "run_queue_wait_median": 0.3}, max_steal=0.3)["unstable"]


@pytest.mark.parametrize(
    "load, cpus, own, other", [(2.0, 1, 2, 0.0), (2.5, 1, 2, 0.5), (7.0, 4, 5, 2.0), (0.0, 4, 5, 0.0)]
)
def test_other_load_is_what_the_jobs_own_worker_cannot_make(load, cpus, own, other):
    assert own_load(cpus) == own
    assert other_load(load, cpus) == other
