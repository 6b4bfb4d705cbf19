"""experiment=fit without processes (issue 59, item 2): the search's bookkeeping (analysis.fit_search: doubling, then
bisection to within fit.step), a probe's ProcessResult read as its fit.csv row (engine.fit.probe_row), the printed
answer's lines, and the fit keys' one-line refusals (config.fit.validate_fit)."""

from __future__ import annotations

import pytest

from helpers import job_config
from jitexp.analysis.fit_search import CRASH, ERROR, ESTIMATE, FITS, OOM, Search, fit_lines, is_oom, probes_needed
from jitexp.config.schema import FitConfig
from jitexp.config.validate import validate
from jitexp.engine.fit import probe_row
from jitexp.errors import ConfigError, Failure
from jitexp.records import ModeResult, ProcessResult


def run_search(start: int, maximum: int, answer: int | None, step: int = 1) -> tuple[Search, list[int]]:
    """The search against a device where every value up to `answer` fits (None: none does)."""
    search = Search(start, maximum, step)
    tried = []
    while (value := search.next()) is not None:
        tried.append(value)
        search.record(value, answer is not None and value <= answer)
    return search, tried


def test_doubling_then_bisection_finds_the_exact_boundary():
    search, tried = run_search(512, 1 << 20, 4672)
    assert tried[:5] == [512, 1024, 2048, 4096, 8192]  # doubling until one does not fit
    assert tried[5] == 6144  # then halfway between the largest that fit and the smallest that did not
    assert (search.largest, search.smallest_failing) == (4672, 4673)
    assert len(tried) == len(set(tried))  # no value probed twice
    assert probes_needed(512, 1 << 20, 4672) == len(tried) == 5 + 12  # log2(4096) bisection steps


def test_a_first_value_that_does_not_fit_bisects_downwards():
    search, tried = run_search(1000, 1 << 20, 836)
    assert tried[:2] == [1000, 500]
    assert (search.largest, search.smallest_failing) == (836, 837)


def test_nothing_fits():
    search, tried = run_search(8, 1024, None)
    assert tried == [8, 4, 2, 1]
    assert (search.largest, search.smallest_failing) == (None, 1)


def test_fit_max_stops_the_doubling_and_fits():
    search, tried = run_search(3, 20, 10**9)
    assert tried == [3, 6, 12, 20]  # the last doubling is clipped to fit.max
    assert (search.largest, search.smallest_failing) == (20, None)
    assert search.next() is None


def test_step_bounds_the_bisection_and_keeps_multiples():
    search, tried = run_search(256, 1 << 20, 5000, step=256)
    assert search.smallest_failing - search.largest <= 256
    assert search.largest <= 5000 < search.smallest_failing
    assert all(v % 256 == 0 for v in tried)
    assert len(tried) < len(run_search(256, 1 << 20, 5000)[1])


def test_a_failure_below_a_fitting_value_does_not_undo_it():
    search = Search(64, 1024)
    search.record(64, True)
    search.record(128, True)
    search.record(96, False)  # not monotone: a failure that is no memory's (a crash, say)
    assert search.largest == 128 and search.smallest_failing == 129
    assert search.next() is None


@pytest.mark.parametrize(
    ("error_type", "message", "oom"),
    [
        ("jaxlib.xla_extension.XlaRuntimeError", "RESOURCE_EXHAUSTED: Out of memory while trying to allocate", True),
        ("jax.errors.JaxRuntimeError", "RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm", True),
        ("MemoryError", "Unable to allocate 8.00 GiB for an array", True),
        ("TypeError", "unsupported operand type(s)", False),
        ("SIGKILL", "the worker process was killed", False),
        ("ValueError", "zoom and room are not OOM-free", True),
    ],
)
def test_out_of_memory_errors_are_told_from_others(error_type, message, oom):
    assert is_oom(error_type, message) is oom


def fit_result(record: dict | None = None, error: Failure | None = None, process_error: Failure | None = None):
    modes = {} if record is None and error is None else {"jit": ModeResult(error, calls=[record or {}])}
    return ProcessResult(0, modes=modes, error=process_error, platform=None if process_error else "cpu")


def test_a_probe_row_says_why():
    ok = probe_row("size", 64, fit_result({"estimate_bytes": 10, "limit_bytes": 100, "call_s": 0.1}))
    assert (ok["fits"], ok["reason"], ok["estimate_bytes"]) == (True, FITS, 10)
    over = probe_row("size", 128, fit_result({"estimate_bytes": 200, "limit_bytes": 100, "over_limit": True}))
    assert (over["fits"], over["reason"]) == (False, ESTIMATE) and "over_limit" not in over
    oom = Failure("execute", "jax.errors.JaxRuntimeError", "RESOURCE_EXHAUSTED: Out of memory", "")
    assert probe_row("size", 256, fit_result({"estimate_bytes": 90}, error=oom))["reason"] == OOM
    crash = Failure("inputs", "SIGKILL", "the worker process was killed", "")
    row = probe_row("size", 512, fit_result(process_error=crash))
    assert (row["fits"], row["reason"], row["error_phase"], row["error_type"]) == (False, CRASH, "inputs", "SIGKILL")
    other = Failure("trace", "TypeError", "bad", "")
    assert probe_row("size", 8, fit_result({}, error=other))["reason"] == ERROR


def test_the_answer_lines():
    rows = [
        {"key": "size", "value": 64, "fits": True, "reason": FITS, "estimate_bytes": 2**20, "peak_memory_bytes": 2**20,
         "limit_bytes": 2**24, "device_peak_bytes": 3 * 2**19, "platform": "tpu"},
        {"key": "size", "value": 128, "fits": False, "reason": ESTIMATE, "estimate_bytes": 2**25, "limit_bytes": 2**24},
    ]  # fmt: skip
    lines = fit_lines("size", rows, 1024, 3.21)
    assert [line.split("  ")[0] for line in lines] == [
        "largest",
        "smallest that did not",
        "estimate vs allocator",
        "search",
    ]
    assert "size=64: XLA's estimate 1.0 MiB within the limit 16.0 MiB" in lines[0]
    assert "size=128: XLA's estimate 32.0 MiB over the limit 16.0 MiB (compiled, not run)" in lines[1]
    assert "the allocator's peak 1.5 MiB (device_peak_bytes, 1.50x)" in lines[2]
    assert lines[3].endswith("2 probes in 3.2 s, one fresh process each (fit.csv)")
    cpu = fit_lines("size", [{**rows[0], "device_peak_bytes": None, "platform": "cpu"}], 64, 1.0)
    assert "not reported on cpu" in cpu[2] and "none up to fit.max=64" in cpu[1]


def refusal(**changes) -> str:
    cfg = job_config(
        [{"shape": [8, 8]}], workload={"params": {"batch": 4, "rate": 0.5, "flag": True}}, roofline=False,
        mode={"eager": False}, fit=FitConfig(**changes),
    )  # fmt: skip
    with pytest.raises(ConfigError) as caught:
        validate(cfg)
    text = str(caught.value)
    assert "\n" not in text
    return text


def test_bad_fit_keys_are_one_line_errors():
    assert "fit.key" in (text := refusal(key="workload.params.rate")) and "size, workload.params.batch" in text
    assert "workload.params.flag" not in text  # a bool is no size
    assert "fit.key" in refusal(key="dtype")
    assert "fit.max" in refusal(key="size", max=0)
    assert "fit.step" in refusal(key="size", step=0)
    assert "fit.start" in refusal(key="size", start=4096, max=1024)
    assert "fit.memory_bytes" in refusal(key="size", memory_bytes=0)
    assert "fit.max" in refusal(key="workload.params.batch", max=2)  # the first value probed (4) is above it
    assert "used only with fit.key" in (text := refusal(max=64)) and text.startswith("fit.max")


def test_fit_needs_a_compiled_mode_and_fresh_processes():
    base = {"fit": FitConfig(key="size"), "roofline": False}
    for changes, key in (({"mode": {"eager": True, "jit": False}}, "mode"), ({"isolate": "none"}, "isolate")):
        cfg = job_config([{"shape": [8, 8]}], **{**base, **changes})
        with pytest.raises(ConfigError, match=f"^{key}"):
            validate(cfg)
    assert validate(job_config([{"shape": [8, 8]}], **base)) is not None


def test_every_fit_csv_column_is_documented_once():
    from collections import Counter
    from pathlib import Path

    from jitexp.engine.fit import FIT_COLUMNS
    from unit.test_docs import table_rows, top_level_code

    text = (Path(__file__).resolve().parents[2] / "docs" / "results.md").read_text()
    [cells] = [cells for cells in table_rows(text, "| file | columns |") if top_level_code(cells[0]) == ["fit.csv"]]
    documented = Counter(top_level_code(cells[1]))
    assert sorted(documented) == sorted(FIT_COLUMNS) and set(documented.values()) == {1}, documented


def test_a_value_refuted_after_it_fit_sends_the_bisection_below_it():
    search, tried = run_search(1024, 1 << 20, 6000, step=256)
    assert search.largest == 5888 and search.smallest_failing == 6144
    search.refute(5888)  # its timed job ran out of memory: the largest other value that fit stands
    assert (search.largest, search.smallest_failing) == (5632, 5888) and search.next() is None
    search.refute(5632)
    assert (search.largest, search.smallest_failing) == (5120, 5632)
    assert search.next() == 5376  # between the two: 5376 was never tried (5632 came from the first bisection)


def test_a_timed_job_out_of_memory_is_a_row_and_the_answer_is_the_largest_that_also_ran(monkeypatch):
    """engine.fit.search with the probes and the timed job faked: the probe fits up to 6000, the timed job only up to
    5700; the answer is the largest value whose timed job ran, with every row kept."""
    from jitexp.engine import fit as engine_fit
    from jitexp.records import JobResult

    def probe(cfg, key, value):
        return {"key": key, "value": value, "fits": value <= 6000, "reason": FITS if value <= 6000 else OOM}

    timed = []

    def run(cfg, **_):
        timed.append(cfg.size)
        if cfg.size > 5700:
            row = {"status": "error", "error_phase": "execute", "error_type": "ValueError"}
            return JobResult([{**row, "error_message": "RESOURCE_EXHAUSTED: RuntimeBufferAllocationFailure"}])
        return JobResult([{"status": "ok", "mode": "jit"}])

    monkeypatch.setattr(engine_fit, "probe", probe)
    monkeypatch.setattr(engine_fit, "run", run)
    cfg = job_config([], size=1024, fit=FitConfig(key="size", max=1 << 20, step=256))
    out = engine_fit.search(lambda value: job_config([], size=value, fit=cfg.fit), cfg)
    assert out.largest == 5632 and timed == [5888, 5632] and out.job is not None
    refuted = [r for r in out.rows if r.get("error_phase") == "timed job (execute)"]
    assert [(r["value"], r["fits"], r["reason"]) for r in refuted] == [(5888, False, OOM)]
    lines = fit_lines("size", out.rows, 1 << 20, 1.0)
    assert lines[0].startswith("largest                size=5632: ")
    assert lines[1].startswith("smallest that did not  size=5888: out of memory in timed job (execute)")


def test_when_every_timed_job_runs_out_of_memory_the_answer_says_the_largest_was_not_timed(monkeypatch):
    """TPU v5e, MLP step: four timed jobs in a row ran out of memory just under where the probes passed; the block of
    the last failed job was printed under 'largest ... and it ran'. Now no job is kept and a line says so."""
    from jitexp.engine import fit as engine_fit
    from jitexp.records import JobResult

    def probe(cfg, key, value):
        return {"key": key, "value": value, "fits": value <= 6000, "reason": FITS if value <= 6000 else OOM}

    timed = []

    def run(cfg, **_):
        timed.append(cfg.size)
        row = {"status": "error", "error_phase": "execute", "error_type": "ValueError"}
        return JobResult([{**row, "error_message": "RESOURCE_EXHAUSTED: RuntimeProgramAllocationFailure"}])

    monkeypatch.setattr(engine_fit, "probe", probe)
    monkeypatch.setattr(engine_fit, "run", run)
    cfg = job_config([], size=1024, fit=FitConfig(key="size", max=1 << 20, step=256))
    out = engine_fit.search(lambda value: job_config([], size=value, fit=cfg.fit), cfg)
    assert len(timed) == engine_fit.TIMED_TRIES and out.job is None and out.untimed
    assert out.largest is not None and out.largest < min(timed)
    lines = out.lines()
    assert lines[1] == (
        f"timed job              not run at size={out.largest}: the {engine_fit.TIMED_TRIES} timed jobs above it ran"
        " out of memory"
    )
