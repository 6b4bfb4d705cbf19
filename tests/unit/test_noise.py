"""The machine's own noise: steal shares from fake /proc/stat counters, the replacement rule, the host probe, pinning.
A job's noise columns through real pinned workers, and the pinning mistake on the command line: tests/e2e/test_noise_job.py."""

from __future__ import annotations

import pandas as pd
import pytest

from jitexp import noise
from jitexp.analysis.instability import instability, noise_columns
from jitexp.config import ExperimentConfig, ModeConfig, TimingConfig
from jitexp.engine import runner
from jitexp.records import Noise, ProcessResult
from jitexp.worker.timing import measure_rounds, plain_loop

# user nice system idle iowait irq softirq steal
START = (1000, 0, 100, 500, 10, 0, 0, 50)


IDLE_CPU = (0, 0, 0, 1000, 0, 0, 0, 0)


def reading(mine, other=IDLE_CPU, wait_ns=None, wall_ns=0) -> noise.Reading:
    """Counters of a worker on CPU 0 of two (CPU 1: someone else's)."""
    return noise.Reading({0: tuple(mine), 1: tuple(other)}, frozenset([0]), wait_ns, wall_ns)


def stat_lines(*cpus) -> str:
    total = [sum(c[k] for c in cpus) for k in range(8)]
    lines = ["cpu  " + " ".join(map(str, total)) + " 0 0"]
    lines += [f"cpu{i} " + " ".join(map(str, c)) + " 0 0" for i, c in enumerate(cpus)]
    return "\n".join(lines) + "\nintr 1 2 3\n"


def test_cpu_times_reads_every_cpu_line_and_refuses_a_kernel_without_steal(tmp_path):
    full = tmp_path / "stat"
    full.write_text(stat_lines(START, IDLE_CPU))
    now = noise.cpu_times(str(full))
    assert now is not None and now.cpus == {0: START, 1: IDLE_CPU}
    assert now.on <= {0, 1} and len(now.on) >= 1  # the CPU this thread is on (or the pinned set)
    old = tmp_path / "old"
    old.write_text("cpu  1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\n")  # no steal field: not accounted
    assert noise.cpu_times(str(old)) is None
    assert noise.cpu_times(str(tmp_path / "missing")) is None


def test_shares_are_of_the_workers_own_cpu_and_include_its_run_queue_wait():
    after = (1080, 0, 110, 500, 10, 0, 0, 80)  # 120 ticks on CPU 0: 30 stolen
    stolen_elsewhere = (0, 0, 0, 1000, 0, 0, 0, 120)  # CPU 1 (not the worker's) stolen from all the time
    s = noise.shares(reading(START, wait_ns=0, wall_ns=0), reading(after, stolen_elsewhere, 300_000_000, 1_200_000_000))
    assert s is not None and s.steal == pytest.approx(0.25) and s.idle == 0 and s.ticks == 120
    assert s.run_queue == pytest.approx(0.25)  # 0.3 s of 1.2 s waiting to run
    # the whole machine's share would read (30 + 120) / 240: a neighbour's steal is not the worker's
    moved = noise.Reading({0: after, 1: stolen_elsewhere}, frozenset([1]), None, 0)  # migrated to CPU 1
    both = noise.shares(reading(START), moved)
    assert both is not None and both.ticks == 240 and both.steal == pytest.approx(150 / 240) and both.run_queue is None
    assert noise.shares(reading(START), reading(START)) is None  # no tick passed
    assert noise.shares(reading(START), reading((1003, 0, 100, 500, 10, 0, 0, 51))) is None  # 4 ticks: below MIN_TICKS
    assert noise.shares(None, reading(after)) is None


def test_a_busy_thread_reads_its_own_cpu_and_run_queue(tmp_path):
    import time

    before = noise.cpu_times()
    if before is None or before.wait_ns is None:
        pytest.skip("no per-CPU /proc/stat or schedstat here")
    end = time.perf_counter() + 0.15
    while time.perf_counter() < end:
        pass
    s = noise.shares(before, noise.cpu_times(), min_ticks=1)
    assert s is not None and s.ticks >= 10  # 0.15 s of one CPU (or two, if it moved) is >= 15 jiffies
    assert s.run_queue is not None and 0.0 <= s.run_queue <= 1.0


def test_rounds_read_the_counters_around_each_round_and_the_rule_needs_most_rounds_marked():
    readings = iter([reading(START[:7] + (50 + 2 * i,)) for i in range(100)])  # each: 2 more steal ticks only
    policy = TimingConfig(warmup=0, min_samples=5, max_samples=5, min_sample_time_s=1e-5, max_time_s=1.0)
    rounds = measure_rounds({"a": plain_loop(lambda: 1, lambda x: x)}, policy, tick=lambda: next(readings))
    assert len(rounds.ticks) == 6  # before the first round and after each of the 5
    per_round = noise.round_steal(rounds.ticks)
    assert per_round == [1.0] * 5
    assert noise.mostly_under_steal(per_round, 0.3, max_steal=0.05)
    one_tick = [START]  # 40 rounds of one tick each, every other one stolen: a round's own share is 0 or 1
    for i in range(40):
        last = list(one_tick[-1])
        last[7 if i % 2 else 0] += 1
        one_tick.append(tuple(last))
    widened = noise.round_steal([reading(t) for t in one_tick])
    assert all(0.4 <= s <= 0.6 for s in widened)  # each over >= 10 ticks around its round
    assert noise.round_steal([reading(START), None, reading(START)]) == [None, None]  # not accounted
    assert not noise.mostly_under_steal([0.5, 0.0, 0.0, None], 0.3, max_steal=0.05)  # one marked round of three
    assert not noise.mostly_under_steal(per_round, 0.01, max_steal=0.05)  # the process's own share disagrees
    assert not noise.mostly_under_steal([None, None], None, max_steal=0.05)  # not accounted: never replaced


def fake_process(p: int, under_steal: bool, steal: float | None = 0.01) -> ProcessResult:
    return ProcessResult(p, noise=Noise(steal=steal, under_steal=under_steal, host_probe={"host_probe_copy_s": 1e-3}))


def test_a_process_measured_under_steal_is_replaced_while_the_budget_allows(monkeypatch):
    verdicts = iter([True, False, True, False, True, True, True, True])
    started = []

    def fake_measure(task, cfg):
        started.append(task.process)
        return fake_process(task.process, next(verdicts))

    monkeypatch.setattr(runner, "run_task", fake_measure)
    monkeypatch.setattr(runner.pyenvs, "enough", lambda *a: True)
    cfg = ExperimentConfig(mode=ModeConfig(jit=True), timing=TimingConfig(processes=3, max_processes=6, job_time_s=60))
    kept, stop, replaced = runner.collect(cfg)
    # p0 under steal -> replaced by another p0; p1 under steal -> replaced; p2 under steal with 5 started
    # and max_processes 6 -> replaced (6th start) is not allowed: the 6th is kept whatever it saw
    assert started == [0, 0, 1, 1, 2, 2]
    assert [r.process for r in kept] == [0, 1, 2] and len(replaced) == 3 and stop == "ci"
    verdicts, started = iter([True] * 6), []
    kept, stop, replaced = runner.collect(cfg)
    # p0 under steal -> replaced; its replacement under steal too: the steal persists, nothing more is replaced
    assert started == [0, 0, 1, 2] and [r.process for r in kept] == [0, 1, 2] and len(replaced) == 1
    cfg_quick = ExperimentConfig(mode=ModeConfig(jit=True), timing=TimingConfig(processes=1, max_processes=1))
    verdicts = iter([True])
    kept, _, replaced = runner.collect(cfg_quick)
    assert len(kept) == 1 and replaced == []  # no budget for a replacement: kept, and the row says steal


def test_noise_columns_and_the_steal_reason():
    cols = noise_columns([fake_process(0, False, 0.02), fake_process(1, False, 0.12), fake_process(2, False, None)], 2)
    assert cols["steal_median"] == pytest.approx(0.07) and cols["steal_max"] == pytest.approx(0.12)
    assert cols["n_steal_replaced"] == 2 and cols["host_probe_copy_s"] == pytest.approx(1e-3)
    none = noise_columns([fake_process(0, False, None)], 0)
    assert "steal_median" not in none and "steal_max" not in none  # not accounted: empty, not zero
    row = {"median_s": 1.0, "process_median_min_s": 1.0, "process_median_max_s": 1.0, "steal_median": 0.12}
    assert "CPU steal 12%" in instability(row, max_steal=0.05)["unstable_reason"]
    assert not instability({**row, "steal_median": 0.01}, max_steal=0.05)["unstable"]


def test_a_mode_that_failed_in_every_variant_stops_the_job(monkeypatch):
    from jitexp.errors import Failure
    from jitexp.records import ModeResult

    broken = ModeResult(Failure("trace", "TypeError", "no", ""))
    started = []

    def fake_measure(task, cfg):
        started.append(task.process)
        return ProcessResult(task.process, variants={"a": {"jit": broken}, "b": {"jit": broken}})

    monkeypatch.setattr(runner, "run_task", fake_measure)
    cfg = ExperimentConfig(mode=ModeConfig(jit=True), timing=TimingConfig(processes=3, max_processes=6))
    kept, stop, _ = runner.collect(cfg)
    assert started == [0] and stop == "error"  # not three processes that all fail the same way
    half = ProcessResult(0, variants={"a": {"jit": broken}, "b": {"jit": ModeResult()}})
    assert not half.mode_failed("jit") and ProcessResult(0, modes={"jit": broken}).mode_failed("jit")


def test_replaced_processes_stay_in_processes_csv_and_the_row_says_what_replacing_did():
    import numpy as np

    from jitexp.analysis.rows import job_result
    from jitexp.records import Cold, JobRaw, ModeResult

    def process(p: int, level: float, stolen: bool) -> ProcessResult:
        samples = np.full(12, level) * (1 + 0.01 * np.arange(12) / 12)
        mode = ModeResult(cold=Cold(0.01, 0.001, 0.001, 0.005, 0.003, 1), samples_s=samples, number=10)
        return ProcessResult(p, modes={"jit": mode}, noise=Noise(steal=0.3 if stolen else 0.0, under_steal=stolen))

    kept = [process(p, 1e-3, False) for p in range(3)]
    gone = [process(p, 2e-3, True) for p in range(3)]  # slower under steal, then replaced
    cfg = ExperimentConfig(mode=ModeConfig(jit=True))
    out = job_result(cfg, JobRaw(kept, "ci", replaced=gone))
    procs = pd.DataFrame(out.processes)
    assert len(procs) == 6 and procs["replaced"].tolist() == [False] * 3 + [True] * 3
    assert procs.loc[procs["replaced"], "median_s"].min() > procs.loc[~procs["replaced"], "median_s"].max()
    row = out.row
    assert row["n_steal_replaced"] == 3
    # kept medians ~1.0 ms against all six (median ~1.5 ms): the kept figure reads a third low
    assert row["kept_vs_all_processes"] == pytest.approx(1 / 1.5, rel=0.02)
    assert "kept_vs_all_processes" not in job_result(cfg, JobRaw(kept, "ci")).row  # nothing replaced: no column
