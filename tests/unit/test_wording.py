"""One direction for every ratio (issue 23): N >= 1 in words, faster or slower, with its CI in that same
direction; a significant change under the threshold said so; the plugin's summary uncut; the page's verdict
table with absolute times; the baseline variant first."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from helpers import ok
from jitexp.analysis import formatting
from jitexp.pytest_plugin import Entry, Session, deciding
from jitexp.report.compare.gate import failing
from jitexp.report.compare.runs import COLUMNS
from jitexp.report.compare.text import render
from jitexp.report.plots import speedup as plot_speedup
from jitexp.report.run import tables
from jitexp.report.run.page import verdict_table
from jitexp.report.run.views import ab_view

# ---- the phrase ---------------------------------------------------------------------------------------


def variant_row(ratio: float, lo: float, hi: float, p: float, verdict: str) -> dict:
    """The loop variant's eager row against the scan baseline, with its steady-state ab_* columns."""
    return {
        "mode": "eager",
        "variant": "loop",
        "ab_baseline": "scan",
        "ab_steady_ratio": ratio,
        "ab_steady_ratio_ci_low": lo,
        "ab_steady_ratio_ci_high": hi,
        "ab_steady_p_value": p,
        "ab_steady_verdict": verdict,
    }


def test_a_time_ratio_below_one_reads_faster_with_its_ci_inverted():
    # the clause: "loop eager 7.42x faster than scan (95% CI 0.126x-0.141x, p=0.031)"
    phrase = formatting.ab_phrase(variant_row(0.1348, 0.126, 0.141, 0.031, "faster"))
    assert phrase == "loop eager 7.42x faster than scan (95% CI 7.09x-7.94x, p=0.031)"


def test_a_speedup_below_one_reads_slower_with_its_ci_inverted():
    assert formatting.speedup_phrase("jit", "eager", 0.5, 0.4, 0.625, "slower") == (
        "jit 2x slower than eager (95% CI 1.6x-2.5x)"
    )
    assert formatting.speedup_phrase("jit", "eager", 1.94, 1.8, 2.09, "faster") == (
        "jit 1.94x faster than eager (95% CI 1.8x-2.09x)"
    )
    # not significant: still a direction in words, and the CI that same way round
    assert formatting.speedup_phrase("jit", "eager", 1 / 1.05, 1 / 1.16, 1 / 0.95, "no significant difference") == (
        "jit 1.05x slower than eager: no significant difference (95% CI 0.95x-1.16x)"
    )


def test_every_figure_in_the_one_line_answer_is_at_least_one_and_worded():
    common = dict(workload="w", size=8, dtype="float32", device_kind="cpu", status="ok", n_processes=6)
    paired = dict(baseline_mode="eager", compile_s=0.03, break_even_calls=2.0, ahead_until_calls=math.nan)
    rows = []
    for variant, jit_speedup in (("scan", 13.3), ("loop", 11.0)):
        base = {**common, "variant": variant, "median_s": 1e-3, "ci95_low_s": 0.9e-3, "ci95_high_s": 1.1e-3}
        jit = {**base, "mode": "jit", "median_s": 1e-3 / jit_speedup, **paired}
        jit.update(speedup=jit_speedup, speedup_ci_low=jit_speedup * 0.9, speedup_ci_high=jit_speedup * 1.1)
        jit["verdict"] = "faster"
        rows += [{**base, "mode": "eager"}, jit]
    rows[2].update(variant_row(0.1348, 0.126, 0.141, 0.031, "faster"))
    rows[3].update({**variant_row(1.21, 0.9, 1.6, 0.2, "no significant change"), "mode": "jit"})
    line = formatting.job_summary(rows)
    assert "loop eager 7.42x faster than scan (95% CI 7.09x-7.94x" in line
    assert "loop jit 1.21x slower than scan: no significant change (95% CI 0.9x-1.6x, p=0.2)" in line
    assert " vs scan" not in line  # the old "loop jit vs scan 1.21x" had no direction
    figures = re.findall(r"([\d.]+)x (faster|slower) than", line)
    assert len(figures) == 4 and all(float(n) >= 1 for n, _ in figures), line


def test_a_significant_change_under_the_threshold_says_so_and_not_no_change():
    within = formatting.ab_phrase(variant_row(1.05, 1.02, 1.10, 0.031, "no significant change"))
    assert within == "loop eager 1.05x slower than scan, within the 5% threshold (95% CI 1.02x-1.1x, p=0.031)"
    assert "no significant" not in within
    plain = formatting.ab_phrase(variant_row(1.05, 0.98, 1.12, 0.2, "no significant change"))
    assert plain.endswith(": no significant change (95% CI 0.98x-1.12x, p=0.2)")
    assert formatting.verdict_words("no significant change", 0.031, threshold=0.1) == "within the 10% threshold"
    assert formatting.verdict_words("no significant change", 0.05) == "no significant change"  # p >= alpha
    assert formatting.verdict_words("slower", 0.001) == "slower"


def test_a_figure_that_rounds_to_one_has_no_direction():
    phrase = formatting.ab_phrase(variant_row(1.0, 0.98, 1.02, 1.0, "no significant change"))
    assert phrase == "loop eager as fast as scan: no significant change (95% CI 0.98x-1.02x, p=1)"
    assert formatting.ratio_cell(float("nan")) == "-" and formatting.ratio_cell(0.5) == "2x faster"


def test_the_plot_label_of_a_speedup_below_one_reads_slower():
    assert plot_speedup._speedup_label(0.5, 0.4, 0.625, "slower", None) == "2x slower\nCI 1.6-2.5x"
    assert plot_speedup._speedup_label(1.05, 0.95, 1.16, "no significant difference", None) == (
        "1.05x faster, n.s.\nCI 0.95-1.16x"
    )


# ---- jitexp-compare ----------------------------------------------------------------------------------


def compare_table(rows: list[tuple[str, float, float, float, float, str]]) -> pd.DataFrame:
    records = [
        dict(workload=w, mode="jit", metric="steady", base_s=1e-3, new_s=r * 1e-3, ratio=r, ratio_ci_low=lo)
        | dict(ratio_ci_high=hi, p_value=p, verdict=v, n_base=6, n_new=6)
        for w, r, lo, hi, p, v in rows
    ]
    return pd.DataFrame.from_records(records, columns=["workload", "mode", *COLUMNS])


def test_compare_words_each_ratio_one_way_and_the_gate_is_unchanged():
    table = compare_table(
        [
            ("quicker", 0.5, 0.4, 0.625, 0.002, "faster"),
            ("within", 1.03, 1.01, 1.05, 0.01, "no significant change"),
            ("noise", 1.03, 0.9, 1.2, 0.4, "no significant change"),
            ("worse", 1.5, 1.3, 1.7, 0.002, "slower"),
        ]
    )
    view = render(table).set_index("workload")
    # one direction (issue 50): NEW/BASE in the table as in compare.csv and compare.png, above 1 slower
    assert view.loc["quicker", "NEW/BASE (95% CI)"] == "0.5 (0.4-0.625)" and view.loc["quicker", "verdict"] == "faster"
    assert view.loc["worse", "NEW/BASE (95% CI)"] == "1.5 (1.3-1.7)" and view.loc["worse", "verdict"] == "slower"
    assert view.loc["within", "verdict"] == "within the 5% threshold"
    assert view.loc["noise", "verdict"] == "no significant change"
    assert render(table, threshold=0.1).set_index("workload").loc["within", "verdict"] == "within the 10% threshold"
    # compare.csv keeps its values, and only the slowdown fails the gate
    assert table["verdict"].tolist()[1] == "no significant change"
    assert failing(table, ["steady"])["workload"].tolist() == ["worse"]


# ---- the pytest plugin --------------------------------------------------------------------------------


def session(**options) -> Session:
    return Session(
        root=Path("."),
        save=None,
        compare="main",
        fail_on=("steady", "first_call", "compile"),
        threshold=0.05,
        allow_undetectable=False,
        disable=False,
        timing=None,
        **options,
    )


def test_the_plugin_summary_cuts_nothing():
    line = "w size=8 float32 cpu: eager 1 ms ±3%, jit 75 us ±2% -> " + "jit 13.3x faster than eager " * 8
    against = "jit steady 1.05x slower than main, within the 5% threshold (95% CI 1.02x-1.1x, p=0.031)"
    s = session()
    s.entries.append(Entry("tests/test_a.py::test_step", line, against, "same machine"))
    lines = s.summary()
    assert lines[0] == f"tests/test_a.py::test_step: {line}"
    assert lines[1] == f"  vs main (same machine): {against}"
    assert not any("..." in text for text in lines)


def test_the_plugin_shows_the_metric_that_decided():
    judged = compare_table(
        [
            ("w", 1.02, 1.01, 1.03, 0.01, "no significant change"),
            ("w", 3.0, 0.5, 9.0, 0.4, "no significant change"),
            ("w", 1.01, 0.9, 1.1, 0.9, "no significant change"),
        ]
    )
    judged["mode"], judged["metric"] = ["jit", "eager", "eager"], ["steady", "first_call", "steady"]
    s = session()
    shown = deciding(judged, judged.iloc[0:0])
    assert list(zip(shown["mode"], shown["metric"])) == [("jit", "steady"), ("eager", "steady")]  # not first_call
    assert s.against(shown.iloc[0]) == (
        "jit steady 1.02x slower than main, within the 5% threshold (95% CI 1.01x-1.03x, p=0.01)"
    )
    judged.loc[1, "verdict"] = "slower"  # a failing metric decides, whatever the steady state did
    bad = failing(judged, s.fail_on)
    assert list(deciding(judged, bad)["metric"]) == ["first_call"]
    assert s.failure("t", bad.iloc[0]).startswith(
        "jitexp: t: eager first_call 3x slower than the baseline 'main' (95% CI 0.5x-9x, p=0.4, 6 vs 6 processes): "
        "slower beyond the 5% threshold"
    )
    judged.loc[1, ["ratio", "ratio_ci_low", "ratio_ci_high"]] = [0.5, 0.4, 0.625]
    assert "eager first_call 2x faster than main (95% CI 1.6x-2.5x" in s.against(judged.iloc[1])


# ---- the report page, the baseline variant first -----------------------------------------------------

PAIRED = dict(baseline_mode="eager", break_even_calls=15.0, ahead_until_calls=math.nan)


def test_the_page_verdict_table_has_times_compile_and_the_change_in_words():
    rows = [
        ok("w", "eager", 8, 4e-4, 4e-2, job_num=0),
        ok("w", "jit", 8, 8e-4, 3e-2, compile_s=0.035, job_num=0, speedup=0.5, speedup_ci_low=0.4)
        | dict(speedup_ci_high=0.625, verdict="slower", **PAIRED),
    ]
    df = pd.DataFrame(rows)
    table = verdict_table(df, tables.speedup_table(df))
    assert list(table.columns) == [
        "case",
        "modes",
        "baseline median",
        "mode median",
        "mode compile",
        "change (95% CI)",
        "verdict",
        "pays off",
        "why",
    ]
    row = table.iloc[0]
    assert (row["baseline median"], row["mode median"], row["mode compile"]) == ("400 us", "800 us", "35 ms")
    assert row["change (95% CI)"] == "2x slower (95% CI 1.6x-2.5x)"


def test_the_page_variant_table_words_the_ratio_and_the_threshold():
    rows = [
        {**ok("w", "jit", 8, 1e-3, 3e-2, job_num=0), "variant": "scan"},
        {**ok("w", "jit", 8, 1e-3, 3e-2, job_num=0), **variant_row(0.5, 0.4, 0.625, 0.01, "faster"), "mode": "jit"},
    ]
    rows[1]["ab_first_call_ratio"], rows[1]["ab_first_call_p_value"] = 1.03, 0.02
    rows[1]["ab_first_call_ratio_ci_low"], rows[1]["ab_first_call_ratio_ci_high"] = 1.01, 1.05
    rows[1]["ab_first_call_verdict"] = "no significant change"
    view = ab_view(tables.ab_table(pd.DataFrame(rows))).set_index("metric")
    assert view.loc["steady", "change (95% CI)"] == "2x faster (95% CI 1.6x-2.5x)"
    assert view.loc["first_call", "verdict"] == "within the 5% threshold"


@pytest.mark.parametrize("names", [("scan", "loop"), ("before", "after"), ("b", "a", "c")])
def test_the_baseline_variant_comes_first(names):
    rows = []
    for name in names:  # a job's rows: its variants in declared order, the baseline first
        rows += [
            {**ok("w", "eager", 8, 4e-4, 4e-2, job_num=0), "variant": name},
            {**ok("w", "jit", 8, 2e-4, 3e-2, job_num=0, speedup=2.0, speedup_ci_low=1.8), "variant": name}
            | dict(speedup_ci_high=2.2, verdict="faster", **PAIRED),
        ]
    df = pd.DataFrame(rows)
    speedup = tables.speedup_table(df)
    assert speedup["variant"].tolist() == list(names)
    page = verdict_table(df, speedup)
    assert [re.search(r"\[(\w+)\]", c)[1] for c in page["case"]] == list(names)
