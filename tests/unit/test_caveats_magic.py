"""Caveats only when there is something to act on (issue 23, item 8), and the %jitexp magic's options and
output (item 9). Pure functions on numbers and a stand-in for jitexp.measure: no timing is asserted."""

from __future__ import annotations

import inspect

import pandas as pd
import pytest

from jitexp import api
from jitexp.analysis.instability import instability, other_load, own_load
from jitexp.ipython import (
    OPTIONS,
    USAGE,
    evaluate_call,
    load_ipython_extension,
    measure_keywords,
    merged_kwargs,
    split_line,
)
from jitexp.report.run.build import write_report
from jitexp.report.run.caveats import caveat_summary, reason_kind, steal_caveats


def row(**extra) -> dict:
    """A steady row of a 2-CPU machine: nothing about its own figures is unstable."""
    return {
        "workload": "step",
        "mode": "jit",
        "size": 64,
        "status": "ok",
        "median_s": 1e-3,
        "ci95_low_s": 0.9e-3,
        "ci95_high_s": 1.1e-3,
        "first_call_s": 0.05,
        "process_median_min_s": 0.98e-3,
        "process_median_max_s": 1.02e-3,
        "n_processes": 6,
        "process_rel_spread": 0.02,
        "within_process_rel_spread": 0.03,
        "compiles_during_timing": 0,
        "cpu_count": 2,
        "load_avg_start": 0.1,
        "load_avg_end": 0.1,
        **extra,
    }


def with_instability(rows: list[dict]) -> pd.DataFrame:
    """The rows as results.csv holds them: unstable and its reasons from rows.instability."""
    return pd.DataFrame([{**r, **instability(r)} for r in rows])


# ---- the load average counts only other work ---------------------------------------------------------


def test_the_jobs_own_worker_is_not_other_work_but_real_foreign_load_is():
    # the idle machine: load 2.0 on 2 CPUs was the job's own worker (XLA's threads and its timing thread)
    assert other_load(2.04, 2) == 0 and other_load(own_load(2), 2) == 0 and own_load(2) == 3
    idle = instability(row(load_avg_end=2.04))
    assert idle == {"unstable": False, "unstable_reason": ""}
    assert not instability(row(load_avg_end=3.0))["unstable"]  # the most the job's worker can keep runnable
    # someone else's work: more runnable than the job could make itself, at the start or at the end
    assert other_load(4.6, 2) == pytest.approx(1.6) and other_load(8.0, 4) == pytest.approx(3.0)
    for loaded in (row(load_avg_end=4.6), row(load_avg_start=3.5)):
        flagged = instability(loaded)
        assert flagged["unstable"], loaded
        assert flagged["unstable_reason"].startswith("other work on the machine (load average ")
        assert flagged["unstable_reason"].endswith(": more than the job's own worker, at most 3 on 2 CPU(s))")
    # a worker kept from running by others says so in its own run-queue wait, whatever the load average read
    waited = instability(row(load_avg_end=2.0, run_queue_wait_median=0.2))
    assert waited["unstable"] and waited["unstable_reason"].startswith("waited to run 20% of the time")


def test_the_load_reason_is_counted_by_kind_in_the_caveats():
    df = with_instability([row(load_avg_end=5.2), row(mode="eager", load_avg_end=5.2), row(size=128)])
    lines = caveat_summary(df)
    assert lines and lines[0].startswith("unstable: 2 of 3 rows (other work on the machine: 2 rows)")


# ---- steal and the host probe: a line only when something moved ----------------------------------


def idle_variants_run() -> pd.DataFrame:
    """The issue's variants run on an idle VM: steal recorded as 0.0% everywhere, the probe steady, own load 2.0."""
    rows = []
    for variant in ("base", "new"):
        for mode in ("eager", "jit"):
            rows.append(
                row(
                    mode=mode,
                    variant=variant,
                    job_num=0,
                    load_avg_end=2.02,
                    steal_median=0.0,
                    steal_max=0.0,
                    n_steal_replaced=0,
                    host_probe_matmul_s=4.0e-4,
                    run_queue_wait_median=0.01,
                )
            )
    return with_instability(rows)


def test_an_idle_run_has_no_caveats_at_all(tmp_path):
    df = idle_variants_run()
    assert not df["unstable"].any()
    assert steal_caveats(df) == [] and caveat_summary(df) == []
    out = tmp_path / "report"
    write_report(df, out, plots=False)
    assert "Caveats" not in (out / "index.html").read_text() and "## Caveats" not in (out / "summary.md").read_text()


def test_steal_is_a_caveat_when_a_row_is_above_the_limit_or_a_process_was_replaced():
    df = idle_variants_run()
    stolen = df.copy()
    stolen.loc[1, "steal_median"] = 0.12
    stolen = with_instability(stolen.drop(columns=["unstable", "unstable_reason"]).to_dict("records"))
    lines = steal_caveats(stolen)
    assert len(lines) == 1 and lines[0].startswith("CPU steal (hypervisor): median process 0.0%..12.0% over 4 rows")
    assert "1 row(s) above timing.max_steal" in lines[0]
    replaced = df.assign(n_steal_replaced=1)  # the job replaced one process; its rows' medians are clean
    assert steal_caveats(replaced)[0].endswith("; 1 process(es) replaced under steal")
    assert steal_caveats(df.assign(steal_max=0.04)) == []  # one process a little stolen from: nothing to do


def test_the_host_probe_is_a_caveat_only_when_it_moved_between_jobs():
    df = idle_variants_run()
    second = df.assign(job_num=1, host_probe_matmul_s=4.2e-4)  # 1.05x: within the probe's own noise
    assert steal_caveats(pd.concat([df, second])) == []
    moved = df.assign(job_num=1, host_probe_matmul_s=6.0e-4)  # 1.5x: the host changed between the jobs
    lines = steal_caveats(pd.concat([df, moved]))
    assert lines == [
        "the host moved between jobs: the same small kernels, timed in each of 2 jobs (host_probe_*_s), read "
        "matmul 400 us..600 us (1.50x); figures from different jobs differ by as much for the host's own reasons"
    ]


# ---- %jitexp: jitexp.measure's options, shown once -------------------------------------------------


def test_the_magic_has_every_option_measure_has_under_the_same_name():
    keywords = set(inspect.signature(api.measure).parameters) - {"fn", "args"}
    assert {o.long for o in OPTIONS} == keywords
    assert len({o.short for o in OPTIONS}) == len(OPTIONS)  # no short flag shared
    for option in OPTIONS:
        assert f"-{option.short}, --{option.long} " in USAGE, option  # the help (%jitexp?) lists each


def test_the_magic_reads_carry_kwargs_and_values_with_spaces():
    line = (
        "-c 0:0,1:2 --kwargs {'lr': 0.1, 'n': 3} --static-argnums=1 -k mode -d 0 -n 'my step' "
        "-D cpu -z 64 -t {'processes': 2} -i none -m jit step(state, batch)"
    )
    options, call = split_line(line)
    assert call == "step(state, batch)"
    keywords = measure_keywords(options, {})
    assert keywords == {
        "carry": {0: 0, 1: 2},
        "kwargs": {"lr": 0.1, "n": 3},
        "static_argnums": [1],
        "static_argnames": ["mode"],
        "donate_argnums": [0],
        "name": "my step",
        "device": "cpu",
        "size": 64,
        "timing": {"processes": 2},
        "isolate": "none",
        "modes": ["jit"],
    }
    namespace = {"feed": {0: 0}, "opts": {"lr": 0.5}}
    assert measure_keywords(split_line("-c feed -K opts -t quick f(x)")[0], namespace) == {
        "carry": {0: 0},
        "kwargs": {"lr": 0.5},
        "timing": "quick",
    }
    assert merged_kwargs({"n": 3}, {"lr": 0.5}) == {"n": 3, "lr": 0.5}
    with pytest.raises(ValueError, match="keyword argument\\(s\\) lr given both in the call and in --kwargs"):
        merged_kwargs({"lr": 0.1}, {"lr": 0.5})
    with pytest.raises(ValueError, match="--carry takes OUT:ARG pairs"):
        measure_keywords({"carry": "[0]"}, {})
    with pytest.raises(ValueError, match="--size takes a whole number"):
        measure_keywords({"size": "big"}, {})


class Shown:
    """A stand-in Measurement: its repr is the verdict line, its HTML the table under it."""

    def __repr__(self) -> str:
        return "step size=64 float32 cpu: jit 1.00 ms"

    def _repr_html_(self) -> str:
        return f"<p><code>{self!r}</code></p><table></table>"


def test_the_magic_passes_the_options_to_measure_and_shows_its_result_once(monkeypatch, capsys):
    IPython = pytest.importorskip("IPython")
    calls = []
    monkeypatch.setattr(api, "measure", lambda fn, *args, **kw: calls.append((fn, args, kw)) or Shown())
    shell = IPython.core.interactiveshell.InteractiveShell.instance()
    try:
        load_ipython_extension(shell)
        shell.user_ns.update(step=max, state=1, batch=2, extra={"lr": 0.1})
        shell.run_cell("x = %jitexp -c {0: 0} -K extra -m jit -t quick step(state, batch, n=3)")
        assert capsys.readouterr().out == ""  # assigned: kept, not shown (like any assignment)
        assert isinstance(shell.user_ns["x"], Shown)
        assert calls == [
            (max, (1, 2), {"carry": {0: 0}, "kwargs": {"n": 3, "lr": 0.1}, "modes": ["jit"], "timing": "quick"})
        ]
        shell.run_cell("%jitexp -t quick step(state, {batch})")
        shown = capsys.readouterr().out
        assert calls[-1] == (
            max,
            (1, {2}),
            {"timing": "quick", "kwargs": {}},
        )  # {batch} is Python (a set), not IPython's {var}
        assert shown.count("step size=64 float32 cpu: jit 1.00 ms") == 1, shown  # bare: shown once, not printed too
    finally:
        IPython.core.interactiveshell.InteractiveShell.clear_instance()


@pytest.mark.parametrize(
    "reason, kind",
    [
        ("waited to run 20% of the time (median process; limit 5%)", "waited to run"),
        ("CPU steal 14% of the time (median process; limit 5%)", "CPU steal"),
        ("process medians spread 14% (robust cv; limit 10%)", "process medians spread"),
    ],
)
def test_a_reason_is_counted_by_its_kind_without_its_numbers(reason, kind):
    assert reason_kind(reason) == kind


def test_the_magic_reads_options_and_the_call_like_timeit():
    assert split_line("-m jit,aot -t quick f(x, y=2)") == ({"modes": "jit,aot", "timing": "quick"}, "f(x, y=2)")
    namespace = {"f": max, "x": 1, "rest": (2, 3), "kw": {"key": abs}}
    assert evaluate_call("f(x, *rest, **kw)", namespace) == (max, (1, 2, 3), {"key": abs})
    with pytest.raises(ValueError, match="is not a call"):
        evaluate_call("x + 1", namespace)
    with pytest.raises(ValueError, match="unknown or incomplete option '-q'") as bad:
        split_line("-q 3 f(x)")
    assert "\n" not in str(bad.value)  # one line
    with pytest.raises(ValueError, match="no call to measure"):
        split_line("-m jit")
