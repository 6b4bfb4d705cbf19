"""What a user reads agrees with itself (issue 50, item 3): a job's answer line, its results.csv and the report's
tables say the same figures, and the docs, the report and the plots give `speedup` and `±` one meaning.

The jobs are rebuilt from saved runs (tests/data/runs: the worker records in processes.csv and samples.csv, through
today's analysis) so that the line, the CSV and the tables all come from the code under test; sweep/0 is matmul at
size 8, whose jit has no significant gain while its medians cross after 391 calls (the case issue 50 found).
"""

from __future__ import annotations

import copy
import functools
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from jitexp.analysis import formatting
from jitexp.analysis.formatting import block
from jitexp.report.plots import speedup as plot_speedup
from jitexp.report.run import markdown, tables, terminal
from jitexp.report.run.text_parts import PLUS_MINUS_MEANING, SPEEDUP_MEANING
from jitexp.report.run.views import speedup_view
from jitexp.store.csvio import write_csv
from jitexp.store.folders import load_results
from saved_runs import analysed

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "tests" / "data" / "runs"
UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
TIME = r"([\d.]+) (ns|us|ms|s)\b"


@functools.cache
def _analysed(folder: Path) -> list[dict]:
    return analysed(folder)


def rebuilt(folder: Path) -> list[dict]:
    """A saved job's rows as today's analysis makes them (tests/saved_runs.py): built once per folder (six tests
    rebuild two folders), a copy for each test."""
    return copy.deepcopy(_analysed(folder))


def seconds(text: str) -> float:
    value, unit = text.rsplit(" ", 1)
    return float(value) * UNITS[unit]


def close(printed: float, value: float) -> bool:
    """A figure printed to three significant digits agrees with the value it came from."""
    return math.isclose(printed, float(value), rel_tol=6e-3)


# a verdict as the line and the block word it: `jit 1.28x faster than eager (95% CI 1.22x-1.32x)`, the block with
# `, 1 process` inside the parentheses for a one-process CI
VERDICT = re.compile(
    r"(\w+) ([\d.]+)x (faster|slower) than (\w+)(: no significant difference)? \(95% CI ([\d.]+)x-([\d.]+)x"
    r"(?:, 1 process)?\)"
)


def verdict_figures(m: re.Match) -> tuple[str, dict]:
    """A VERDICT match as (mode, its ratio, direction, baseline, significance and CI)."""
    mode, ratio, way, base, ns, lo, hi = m.groups()
    return mode, {
        "ratio": float(ratio),
        "way": way,
        "baseline": base,
        "significant": not ns,
        "ci": (float(lo), float(hi)),
    }


def line_figures(line: str) -> dict:
    """Every figure the answer line prints, parsed back: per mode its median and ±, per paired mode its speedup,
    CI, verdict, compile and pay-off."""
    answer = line.split(" [", 1)[0]  # the bracket is the job's own account (processes, where the time went)
    out: dict = {"modes": {}, "paired": {}}
    for mode, value, unit, pct in re.findall(rf"(\w+) {TIME} \(95% CI ±([\d.]+)%", answer.split(" -> ")[0]):
        out["modes"][mode] = {"median_s": float(value) * UNITS[unit], "pm": float(pct) / 100}
    verdicts = answer.split(" -> ", 1)[1] if " -> " in answer else ""
    found = list(VERDICT.finditer(verdicts))
    for m, after in zip(found, [*found[1:], None]):
        mode, figures = verdict_figures(m)
        rest = verdicts[m.end() : after.start() if after else None].removesuffix("; ")
        compiled = re.search(rf", compile {TIME}", rest)
        out["paired"][mode] = {
            **figures,
            "compile_s": float(compiled[1]) * UNITS[compiled[2]] if compiled else None,
            # the pay-off follows the compile figure, and may hold a comma itself ("ahead for ..., then eager wins")
            "payoff": rest[compiled.end() :].removeprefix(", ") if compiled else rest.rsplit(", ", 1)[-1],
        }
    return out


def test_the_line_is_read_back_whole_a_pay_off_with_a_comma_included():
    line = (
        "matmul size=1024 float32 cpu: eager 13.2 ms (95% CI ±2%), jit 13.8 ms (95% CI ±6%; device 13 ms, FLOP/s above "
        "the matmul probe) -> jit 1.05x slower than eager (95% CI 1.02x-1.14x), one big kernel either way, compile 7.72 ms, ahead "
        "for the first 3 calls only, then eager wins [1 process; 1.09 s: setup 252 ms]"
    )
    figures = line_figures(line)
    assert figures["modes"] == {
        "eager": {"median_s": pytest.approx(0.0132), "pm": 0.02},
        "jit": {"median_s": pytest.approx(0.0138), "pm": 0.06},
    }
    [(mode, paired)] = figures["paired"].items()
    assert mode == "jit" and paired["payoff"] == "ahead for the first 3 calls only, then eager wins"
    assert (paired["way"], paired["ci"], paired["compile_s"]) == ("slower", (1.02, 1.14), pytest.approx(0.00772))


@pytest.fixture(params=["sweep/0", "sweep/1"])
def job(request, tmp_path):
    """(line, the results.csv as a user reads it back, the report's speedup table) of one rebuilt saved job."""
    rows = rebuilt(RUNS / request.param)
    write_csv(rows, tmp_path / "results.csv")
    df = load_results(tmp_path / "results.csv")
    return formatting.job_summary(rows), df, tables.speedup_table(df)


def test_the_line_the_csv_and_the_tables_agree(job):
    line, df, speedups = job
    figures = line_figures(line)
    assert figures["modes"] and figures["paired"], line
    shown = terminal.format_sweep_summary(df)  # what jitexp-report prints first: every row, then the speedup table
    for mode, printed in figures["modes"].items():
        row = df[df["mode"] == mode].iloc[0]
        assert close(printed["median_s"], row["median_s"]), (mode, line)
        half = (row["ci95_high_s"] - row["ci95_low_s"]) / 2 / row["median_s"]  # what ± means (PLUS_MINUS_MEANING)
        assert abs(printed["pm"] - half) <= 0.005 + 1e-9, (mode, half, line)
        assert formatting.format_seconds(row["median_s"]) in shown
    view = speedup_view(speedups)
    for mode, printed in figures["paired"].items():
        row = df[df["mode"] == mode].iloc[0]
        table = speedups[speedups["mode"] == mode].iloc[0]
        for source in (row, table):  # the CSV and the report's table, each against the line
            speedup, lo, hi = (float(source[c]) for c in ("speedup", "speedup_ci_low", "speedup_ci_high"))
            as_read = (speedup, lo, hi) if printed["way"] == "faster" else (1 / speedup, 1 / hi, 1 / lo)
            assert close(printed["ratio"], as_read[0]), (mode, as_read, line)
            assert close(printed["ci"][0], as_read[1]) and close(printed["ci"][1], as_read[2]), (as_read, line)
            assert printed["significant"] == (source["verdict"] in ("faster", "slower"))
            assert source["baseline_mode"] == printed["baseline"]
            calls = float(source["break_even_calls"])
            payoff = printed["payoff"]
            if "never" in payoff:
                assert calls == math.inf, (payoff, calls)
            elif "pays off after" in payoff:
                assert calls == float(re.search(r"after (\d+) calls", payoff)[1])
            elif "ahead from the first call" in payoff or "first call is cheaper" in payoff:
                assert calls <= 1
        if printed["compile_s"] is not None:
            assert close(printed["compile_s"], row["compile_s"]) and close(printed["compile_s"], table["compile_s"])
        assert view[view["mode"] == mode].iloc[0]["pays_off"] == printed["payoff"]
        assert formatting.format_value("speedup", table["speedup"]) in shown and printed["payoff"] in shown


def interval_seconds(text: str) -> tuple[float, float]:
    """``14-15.3 ms`` or ``980 us-1.02 ms`` (block.interval_text) as seconds."""
    lo, hi = text.split("-")
    hi_value, hi_unit = hi.split(" ")
    lo_value, _, lo_unit = lo.partition(" ")
    return float(lo_value) * UNITS[lo_unit or hi_unit], float(hi_value) * UNITS[hi_unit]


def block_figures(block: str) -> dict:
    """Every figure the result block prints, parsed back: per mode its median, CI and process count; per verdict
    its ratio, CI and baseline; per compile line its time and pay-off."""
    out: dict = {"modes": {}, "paired": {}, "compile": {}}
    label = ""
    for line in block.splitlines()[1:]:
        label = line[2:12].strip() or label
        median = re.match(rf"  (\w+) +median {TIME} +95% CI ([\d.]+(?: \w+)?-[\d.]+ \w+) +(\d+) process", line)
        if median:
            mode, value, unit, ci, n = median.groups()
            out["modes"][mode] = {"median_s": float(value) * UNITS[unit], "ci": interval_seconds(ci), "n": int(n)}
        elif label == "verdict":
            mode, figures = verdict_figures(VERDICT.search(line))
            out["paired"][mode] = figures
        elif label == "compile":
            m = re.search(rf"(\w+) {TIME}, (.*)$", line)
            out["compile"][m[1]] = {"compile_s": float(m[2]) * UNITS[m[3]], "payoff": m[4]}
    return out


def test_the_block_the_csv_and_the_tables_agree(job):
    """The block a single job prints says what its results.csv and jitexp-report's speedup table say."""
    line, df, speedups = job
    rows = df.to_dict("records")
    printed = block_figures(block.result_block(rows, "outputs/run/x"))
    assert set(printed["modes"]) == set(df["mode"]) and printed["paired"], printed
    for mode, figures in printed["modes"].items():
        row = df[df["mode"] == mode].iloc[0]
        assert close(figures["median_s"], row["median_s"]) and figures["n"] == row["n_processes"]
        assert close(figures["ci"][0], row["ci95_low_s"]) and close(figures["ci"][1], row["ci95_high_s"])
    for mode, figures in printed["paired"].items():
        row = df[df["mode"] == mode].iloc[0]
        table = speedups[speedups["mode"] == mode].iloc[0]
        for source in (row, table):
            speedup, lo, hi = (float(source[c]) for c in ("speedup", "speedup_ci_low", "speedup_ci_high"))
            as_read = (speedup, lo, hi) if figures["way"] == "faster" else (1 / speedup, 1 / hi, 1 / lo)
            assert close(figures["ratio"], as_read[0]) and close(figures["ci"][0], as_read[1])
            assert close(figures["ci"][1], as_read[2]) and source["baseline_mode"] == figures["baseline"]
            assert figures["significant"] == (source["verdict"] in ("faster", "slower"))
        assert close(printed["compile"][mode]["compile_s"], row["compile_s"])
        assert printed["compile"][mode]["payoff"] == line_figures(line)["paired"][mode]["payoff"]
        assert speedup_view(speedups).set_index("mode").loc[mode, "pays_off"] == printed["compile"][mode]["payoff"]


def test_the_saved_no_gain_case_never_pays_off_in_every_place():
    """matmul 8 (sweep/0): its saved results.csv says 391 calls under 'never pays off'; rebuilt, every place says never."""
    saved = pd.read_csv(RUNS / "sweep" / "results.csv")
    assert saved.loc[(saved["workload"] == "matmul") & (saved["mode"] == "jit"), "break_even_calls"].item() == 391
    rows = rebuilt(RUNS / "sweep" / "0")
    jit = next(r for r in rows if r["mode"] == "jit")
    assert jit["verdict"] == "no significant difference" and jit["break_even_calls"] == math.inf
    assert formatting.job_summary(rows).split(" [")[0].endswith("never pays off")


def flat(path: Path) -> str:
    return " ".join(path.read_text().split())


def user_pages() -> list[Path]:
    """The README and the docs a user reads: every page outside the Development section (the lab notebook)."""
    development = {"architecture.md", "decisions.md", "benchmarks.md", "showcase.md"}
    docs = [p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts and "development" not in p.parts]
    return [ROOT / "README.md", *(p for p in docs if p.name not in development)]


def test_speedup_and_plus_minus_mean_one_thing_everywhere():
    output, results = flat(ROOT / "docs" / "reference" / "output.md"), flat(ROOT / "docs" / "results.md")
    assert SPEEDUP_MEANING in output and SPEEDUP_MEANING in results
    assert PLUS_MINUS_MEANING in output
    assert "baseline median / this median" not in results  # the old, different meaning
    # "±" nowhere without its meaning beside it: as "95% CI ±N%", or on the page that defines it
    for page in user_pages():
        text = flat(page)
        bare = [m.start() for m in re.finditer("\u00b1", text) if not text[: m.start()].endswith("95% CI ")]
        assert not bare or PLUS_MINUS_MEANING in text, (page, [text[i - 40 : i + 20] for i in bare])
    assert SPEEDUP_MEANING in markdown.SPEEDUP_NOTE
    assert "Hodges-Lehmann" in plot_speedup.AXIS_NOTE
    assert "`compile_overhead_s` (" in results  # defined where it is listed


def test_the_terminal_shows_a_long_pay_off_whole(tmp_path, monkeypatch):
    """jitexp-report's speedup table once cut `ahead for the first 3 calls only, then eager wins` to 48 characters
    (matmul 1024 on the CPU): the phrase the answer line prints whole."""
    write_csv(rebuilt(RUNS / "sweep" / "0"), tmp_path / "results.csv")
    df = load_results(tmp_path / "results.csv")
    slower = tables.speedup_table(df).assign(verdict="slower", break_even_calls=math.inf, ahead_until_calls=3.0)
    monkeypatch.setattr(terminal, "speedup_table", lambda _: slower)
    assert "ahead for the first 3 calls only, then eager wins" in terminal.format_sweep_summary(df)
