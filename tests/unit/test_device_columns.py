"""The accelerator's columns and the engine's hand-over, without a device: the open retry against a fake launch that
refuses, when the next worker is prepared, the device columns and the job line's split, from plain records."""

from __future__ import annotations

import dataclasses
import math

import pytest

from jitexp import compose
from jitexp.analysis.device import device_columns, job_split, unavailable
from jitexp.analysis.formatting.answer import device_clause, split_text
from jitexp.engine.handover import Handover, busy, hands_over, prepares, with_retries
from jitexp.errors import DEVICE_BUSY, Failure, device_busy
from jitexp.records import Cold, ConfigProblem, JobRaw, ModeResult, Noise, ProcessResult

# what libtpu said on the TPU v5e machine when a second process opened the chip (2026-12-05)
HELD = (
    "Unable to initialize backend 'tpu': ABORTED: The TPU is already in use by process with pid 2168. "
    "Not attempting to load libtpu.so in this process."
)


def refused(process: int = 0) -> ProcessResult:
    return ProcessResult(process, error=Failure("open", DEVICE_BUSY, HELD, "hint"))


def test_libtpus_refusal_is_recognised_and_other_failures_are_not():
    assert device_busy(HELD)
    assert not device_busy("Unable to initialize backend 'tpu': NOT_FOUND: no TPU devices")
    assert (
        busy(refused())
        and not busy(ProcessResult(0))
        and not busy(ProcessResult(0, error=Failure("execute", "X", "m", "")))
    )


def test_a_refused_open_is_tried_again_after_a_wait_until_the_device_is_free():
    answers = [refused(), refused(), ProcessResult(0, platform="tpu")]
    waits: list[float] = []
    result = with_retries(lambda: answers.pop(0), retries=5, wait_s=2.0, sleep=waits.append)
    assert result.error is None and result.platform == "tpu"
    assert waits == [2.0, 2.0] and answers == []


def test_a_device_held_through_every_retry_becomes_an_error_row_that_says_how_often_it_was_tried():
    calls = []

    def launch() -> ProcessResult:
        calls.append(1)
        return refused()

    result = with_retries(launch, retries=3, wait_s=0.5, sleep=lambda s: None)
    assert len(calls) == 4
    assert result.error is not None and result.error.error_phase == "open" and result.error.error_type == DEVICE_BUSY
    assert result.error.error_message.endswith("(tried 4 times, 0.5 s apart)")


def test_other_failures_are_not_retried():
    calls = []

    def launch() -> ProcessResult:
        calls.append(1)
        return ProcessResult(0, error=Failure("execute", "SIGSEGV", "crash", ""))

    assert with_retries(launch, retries=5, wait_s=1.0, sleep=lambda s: pytest.fail("slept")).error is not None
    assert len(calls) == 1


@pytest.fixture(scope="module")
def configs():
    """Each command line's config: `timing=quick` composed once, the others with the one key their override sets (the
    cases below share them)."""
    quick = compose(["timing=quick"])

    def timing(**changes):
        return dataclasses.replace(quick, timing=dataclasses.replace(quick.timing, **changes))

    return {
        (): quick,
        ("timing.prepare_next=true",): timing(prepare_next=True),
        ("timing.prepare_next=false",): timing(prepare_next=False),
        ("isolate=none",): dataclasses.replace(quick, isolate="none"),
    }


@pytest.mark.parametrize(
    ("overrides", "opened", "expected"),
    [
        ((), "cpu", False),
        ((), "tpu", True),  # a worker opened a TPU: the next one is forked while it measures
        ((), "gpu", True),
        (("timing.prepare_next=true",), "cpu", True),  # asked for, on a CPU too
        (("timing.prepare_next=false",), "tpu", False),
    ],
)
def test_the_next_worker_is_prepared_on_an_accelerator_or_when_asked(configs, overrides, opened, expected):
    assert prepares(configs[overrides], opened) is expected


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ((), True),
        (("timing.prepare_next=false",), False),  # the plain launcher, as before the hand-over
        (("isolate=none",), False),  # in-process: no worker to prepare
    ],
)
def test_fresh_workers_of_this_interpreter_run_through_the_handover(configs, overrides, expected):
    assert hands_over(configs[overrides]) is expected


class FakeWorker:
    """A worker as processes.start returns it: opens a TPU when waited for, then returns its process's result."""

    def __init__(self, task, log):
        self.task, self.log = task, log
        log.append("start")

    def go(self, task):
        self.task = task

    def wait(self, timeout_s, on_open=None, on_phase=None):
        on_open("tpu")
        return ProcessResult(self.task.process, platform="tpu")

    def kill(self):
        self.log.append("kill")


@pytest.mark.parametrize(("processes", "forked"), [(1, 1), (3, 3)])
def test_the_jobs_last_possible_process_prepares_no_next_worker(configs, monkeypatch, processes, forked):
    # each worker that opens a TPU has the next one forked while it measures, but not the last the job can run: a
    # quick job's one process measured beside a neighbour forking and importing for nothing (issue 61)
    from jitexp.engine import handover as handover_module
    from jitexp.engine import runner

    log: list[str] = []
    monkeypatch.setattr(handover_module.processes, "start", lambda target, task: FakeWorker(task, log))
    timing = dataclasses.replace(configs[()].timing, processes=processes, max_processes=processes)
    cfg = dataclasses.replace(configs[()], timing=timing)
    launcher = Handover(cfg)
    try:
        results, why, _ = runner.collect(cfg, handover=launcher)
    finally:
        launcher.close()
    assert [r.process for r in results] == list(range(processes)) and why == "max_processes"
    assert log == ["start"] * forked  # none forked only to be killed
    assert launcher.prepared == processes - 1


def test_a_process_may_follow_until_a_round_reaches_max_processes(configs):
    from jitexp.engine.process_plan import ProcessPlan

    timing = dataclasses.replace(configs[()].timing, processes=2, max_processes=2, interleave="processes")
    modes = dataclasses.replace(configs[()].mode, eager=True, jit=True)
    plan = ProcessPlan(dataclasses.replace(configs[()], timing=timing, mode=modes))
    follows = []
    for n in range(4):  # separate modes: a round is one process of each mode
        follows.append(plan.may_follow())
        plan.results.append(ProcessResult(n))
    assert follows == [True, True, True, False]


def test_the_device_columns_put_device_time_beside_wall_time_and_the_shares_of_the_measured_peaks():
    peaks = {"peak_flops_per_s": 2.0e14, "peak_bytes_per_s": 8.0e11}
    row = {"median_s": 6.6e-3, "device_s": 5.88e-3, "flops": 2 * 8192**3, "bytes_accessed": 3 * 2 * 8192**2}
    cols = device_columns(row, peaks)
    assert cols["host_overhead_s"] == pytest.approx(0.72e-3)
    assert cols["device_peak_flops_share"] == pytest.approx(2 * 8192**3 / 5.88e-3 / 2.0e14)
    assert cols["peak_flops_share"] == pytest.approx(2 * 8192**3 / 6.6e-3 / 2.0e14)
    assert cols["peak_bytes_share"] == pytest.approx(3 * 2 * 8192**2 / 6.6e-3 / 8.0e11)
    assert cols["peak_flops_per_s"] == 2.0e14  # on the row, so a report can draw the ceilings
    # no device time: the wall-clock shares alone; no peaks: no shares at all
    assert "device_peak_flops_share" not in device_columns({**row, "device_s": math.nan}, peaks)
    assert not any("share" in k for k in device_columns(row, {}))


def test_the_job_line_shows_device_time_and_the_share_of_peak_in_the_resource_the_call_uses_most():
    row = {"device_s": 5.88e-3, "device_peak_flops_share": 0.935, "device_peak_bytes_share": 0.01}
    assert device_clause(row) == "5.88 ms, 94% of peak FLOP/s"
    tiny = {"device_s": 6.1e-7, "device_peak_flops_share": 1e-6, "device_peak_bytes_share": 0.0042}
    assert device_clause(tiny) == "610 ns, 0.42% of peak bytes/s"
    assert device_clause({"device_s": math.nan}) == ""


def test_the_job_split_adds_each_process_open_and_compile_and_names_the_rest():
    def process(i: int, opened: float) -> ProcessResult:
        cold = Cold(first_call_s=0.5, trace_s=0.01, lower_s=0.02, compile_s=0.1, execute_s=0.37, first_call_compiles=1)
        return ProcessResult(i, modes={"jit": ModeResult(cold=cold)}, device_open_s=opened)

    raw = JobRaw([process(0, 1.5), process(1, 1.25)], "ci", wall_s=10.0, prepared=1)
    split = job_split(raw)
    assert split == pytest.approx(
        {"job_wall_s": 10.0, "job_open_s": 2.75, "job_compile_s": 0.26, "prepared_processes": 1}
    )
    assert split_text(split) == "10 s: open 2.75 s, compiling 260 ms, the rest 6.99 s"
    assert job_split(JobRaw([process(0, 1.0)], "ci")) == {}  # no wall time (a bare record): nothing to split


def test_unavailable_says_once_which_columns_this_host_cannot_give_and_why():
    tpu_host = ProcessResult(0, platform="tpu", noise=Noise(), peaks={"peak_flops_per_s": 1.0})
    rows = [{"mode": "jit", "status": "ok", "device_time_error": None}]
    assert unavailable(rows, tpu_host, roofline=True).startswith("noise: not available on this host")
    vm = ProcessResult(0, platform="cpu", noise=Noise(steal=0.0, run_queue_wait=0.01), peaks_error="copy probe: X")
    inline = [{"mode": "jit", "status": "ok", "device_time_error": "the program ran inline"}]
    note = unavailable(inline, vm, roofline=True)
    assert "noise" not in note
    assert "device_s: the program ran inline" in note and "peaks: copy probe: X" in note
    assert "device_peak_bytes: the CPU backend keeps no allocator statistics" in note
    assert "peaks: roofline=false" in unavailable(rows, tpu_host, roofline=False)


def test_counters_read_over_too_few_ticks_are_not_the_hosts_lack():
    """A timing=quick job's rounds last a tick or two of /proc/stat: its blank noise columns said the host had no
    accounting, on a host whose longer jobs had them (a newcomer's walkthrough, 2026-12-07)."""
    rows = [{"mode": "jit", "status": "ok", "device_time_error": None}]
    short = ProcessResult(0, platform="tpu", noise=Noise(accounted=True), peaks={"peak_flops_per_s": 1.0})
    note = unavailable(rows, short, roofline=True)
    assert note.startswith("noise: not measured (the rounds lasted under 10 of /proc/stat's 10 ms ticks")
    assert "not available on this host" not in note
    unread = ProcessResult(0, platform="tpu", noise=Noise(accounted=False), peaks={"peak_flops_per_s": 1.0})
    assert unavailable(rows, unread, roofline=True).startswith("noise: not available on this host")
    measured = ProcessResult(0, platform="tpu", noise=Noise(steal=0.0, accounted=True), peaks={"peak_flops_per_s": 1})
    assert "noise" not in unavailable(rows, measured, roofline=True)


BYTES = {"bytes_ceiling": "probe"}
NO_NOISE_NOTE = "noise: not available on this host (no per-CPU steal or run-queue accounting in /proc)"
NOISE = Noise(steal=0.0, run_queue_wait=0.01)


@pytest.mark.parametrize(
    ("first", "roofline", "note"),
    [
        (
            ProcessResult(0, platform="cpu", noise=Noise(), peaks_error="copy probe: X"),
            True,
            f"{NO_NOISE_NOTE}; device_s: inline; no trace; peaks: copy probe: X; "
            "device_peak_bytes: the CPU backend keeps no allocator statistics",
        ),
        # a failed first process measured no noise: that says nothing about the host
        (
            ProcessResult(0, platform="tpu", error=Failure("open", "X", "m", "")),
            False,
            "device_s: inline; no trace; peaks: roofline=false",
        ),
        (
            ProcessResult(0, platform="tpu", config_error=ConfigProblem("device", "tpu:9", "an index below 1")),
            True,
            "device_s: inline; no trace",
        ),
        # one noise column accounted is enough
        (ProcessResult(0, platform="tpu", noise=Noise(rounds_under_steal=0)), True, "device_s: inline; no trace"),
        (
            ProcessResult(0, platform="gpu", noise=NOISE, peaks_error="flops probe: Y"),
            False,
            "device_s: inline; no trace; peaks: roofline=false",
        ),
    ],
)
def test_unavailable_names_each_missing_column_group_once_in_order(first, roofline, note):
    rows = [
        {"mode": "jit", "status": "ok", "device_time_error": "no trace"},
        {"mode": "aot", "status": "ok", "device_time_error": "inline"},
        {"mode": "aot", "status": "ok", "device_time_error": "inline"},
        {"mode": "jit", "status": "ok", "device_time_error": None},
        {"mode": "jit", "status": "ok"},
        {"mode": "jit", "status": "error", "device_time_error": "failed"},  # an error row's reason is its error
        {"mode": "eager", "status": "ok", "device_time_error": "eager has no program"},
    ]
    assert unavailable(rows, first, roofline) == note


def test_unavailable_is_empty_when_the_host_and_backend_give_every_column():
    assert unavailable([{"mode": "jit", "status": "ok"}], ProcessResult(0, platform="tpu", noise=NOISE), True) == ""


def test_the_job_split_counts_replaced_processes_and_every_variants_cold_call_and_may_lack_an_open():
    cold = Cold(first_call_s=1.0, trace_s=0.25, lower_s=0.125, compile_s=0.5, execute_s=0.125, first_call_compiles=1)
    measured = ProcessResult(0, variants={"a": {"jit": ModeResult(cold=cold)}, "b": {"jit": ModeResult(cold=cold)}})
    replaced = ProcessResult(1, modes={"jit": ModeResult(cold=cold), "eager": ModeResult()})  # eager: no cold call
    split = job_split(JobRaw([measured], "ci", replaced=[replaced], wall_s=4.0))
    assert split == {"job_wall_s": 4.0, "job_open_s": None, "job_compile_s": 2.625, "prepared_processes": 0}


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        # 2 GB accessed in 0.5 s of wall time and 0.25 s on the device, against a 16 GB/s peak
        (
            {"median_s": 0.5, "device_s": 0.25, "flops": 0.0, "bytes_accessed": 2e9},
            {"host_overhead_s": 0.25, "peak_bytes_share": 0.25, "device_peak_bytes_share": 0.5, **BYTES},
        ),
        ({"median_s": 0.5, "device_s": math.nan, "bytes_accessed": 2e9}, {"peak_bytes_share": 0.25, **BYTES}),
        ({"median_s": None, "device_s": 0.25, "bytes_accessed": 2e9}, {"device_peak_bytes_share": 0.5, **BYTES}),
        (
            {"median_s": 0.0, "device_s": 0.25, "flops": 1e9},
            {"host_overhead_s": -0.25, "device_peak_flops_share": 0.5, "flops_ceiling": "probe"},
        ),
        ({"device_s": 0.25, "flops": -1.0}, {}),
    ],
)
def test_the_device_columns_leave_out_what_a_missing_or_zero_figure_cannot_give(row, expected):
    peaks = {"peak_flops_per_s": 8e9, "peak_bytes_per_s": 16e9}
    assert device_columns(row, peaks) == {**peaks, **expected}
