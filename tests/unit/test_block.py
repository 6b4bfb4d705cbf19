"""The result block a single job prints and the short line of a sweep's job (analysis/formatting/block.py), and how
the command line paints the block (engine/console.py): the order of its facts, the interval, the widths, colour only
on a terminal and never under NO_COLOR."""

from __future__ import annotations

import io
import math

import pytest

from jitexp.analysis.formatting import block as b
from jitexp.engine import console

NAN = math.nan


def timed(mode: str, median_s: float, half: float, **extra) -> dict:
    """An ok row of workload w at size 8 on the CPU whose CI is median_s * (1 -/+ half), from 6 processes."""
    row = dict(workload="w", size=8, dtype="float32", platform="cpu", mode=mode, status="ok", median_s=median_s)
    row.update(ci95_low_s=median_s * (1 - half), ci95_high_s=median_s * (1 + half), n_processes=6)
    return row | extra


def vs(baseline: str, speedup: float, lo: float, hi: float, verdict: str, **extra) -> dict:
    """The paired columns of a mode against its baseline."""
    paired = dict(baseline_mode=baseline, speedup=speedup, speedup_ci_low=lo, speedup_ci_high=hi, verdict=verdict)
    return paired | dict(break_even_calls=1.0, ahead_until_calls=NAN) | extra


EAGER_JIT = [
    timed("eager", 2e-3, 0.05, unstable=True, unstable_reason="load average 2.6 above 2 CPU(s); cv 12% (limit 10%)"),
    timed(
        "jit",
        1e-3,
        0.02,
        **vs("eager", 2.0, 1.6, 2.5, "faster", compile_s=0.03),
        explanation="fusion-bound",
        device_s=0.9e-3,
        job_wall_s=14.0,
        job_sampling_s=8.0,
        job_setup_s=6.0,
    ),
]


def test_the_block_gives_each_fact_its_own_labelled_line_in_order():
    assert b.result_block(EAGER_JIT, "outputs/run/1") == "\n".join(
        [
            "w size=8 float32 cpu",
            "  eager     median 2 ms   95% CI 1.9-2.1 ms       6 processes",
            "  jit       median 1 ms   95% CI 980 us-1.02 ms   6 processes",
            "  device    jit 900 us",
            "  verdict   jit 2x faster than eager (95% CI 1.6x-2.5x)",
            "  why       fusion-bound",
            "  compile   jit 30 ms, ahead from the first call",
            "  job       14 s: sampling 8 s, setup 6 s",
            "  unstable  eager: load average 2.6 above 2 CPU(s)",
            "            eager: cv 12% (limit 10%)",
            "  results   outputs/run/1/",
            "  next      jitexp-report outputs/run/1",
        ]
    )


def test_the_block_has_no_plus_minus_and_no_files_without_a_folder():
    text = b.result_block(EAGER_JIT)
    assert "\u00b1" not in text and "results" not in text and "next" not in text


def test_the_interval_keeps_one_unit_where_both_ends_share_it():
    assert b.interval_text(0.0140, 0.0153) == "14-15.3 ms"
    assert b.interval_text(980e-6, 1.02e-3) == "980 us-1.02 ms"
    assert b.interval_text(NAN, 1.0) == "--1 s"  # a missing end is said as missing, not invented


def test_a_failed_mode_says_its_phase_error_and_hint_and_the_others_still_show():
    failed = dict(workload="w", size=8, mode="jit", status="error", error_phase="trace")
    failed.update(error_type="jax.errors.TracerBoolConversionError", error_message="Attempted boolean conversion")
    failed.update(hint="use jax.lax.cond")
    lines = b.block_lines([EAGER_JIT[0], failed])
    labels = [(line.label, line.style) for line in lines]
    assert labels[:4] == [("", "case"), ("eager", "time"), ("jit", "error"), ("hint", "warn")]
    assert lines[2].text == "failed in trace: jax.errors.TracerBoolConversionError: Attempted boolean conversion"
    assert not any(line.label == "verdict" for line in lines)


def test_a_time_that_is_no_work_gets_no_verdict_and_says_why_and_pays_nothing_off():
    jit = timed("jit", 1e-3, 0.02, **vs("eager", 2.0, 1.6, 2.5, "result differs", compile_s=0.03))
    jit.update(matches_eager=False, max_rel_err_vs_eager=0.225)
    lines = {line.label: line for line in b.block_lines([EAGER_JIT[0], jit])}
    assert lines["verdict"].text == "jit vs eager: no verdict (result differs)" and lines["verdict"].style == "warn"
    assert lines["why"].text == "jit differs from eager: relative error 0.225" and lines["why"].style == "warn"
    assert "compile" not in lines


def test_several_paired_modes_and_numpy_each_get_a_line_named_by_mode():
    numpy = dict(
        speedup_vs_numpy=4.0, speedup_vs_numpy_ci_low=3.2, speedup_vs_numpy_ci_high=5.0, verdict_vs_numpy="faster"
    )
    rows = [
        timed("eager", 2e-3, 0.05),
        timed("jit", 1e-3, 0.02, **vs("eager", 2.0, 1.6, 2.5, "faster", compile_s=0.03), explanation="fused"),
        timed("aot", 1e-3, 0.02, **vs("eager", 2.1, 1.6, 2.5, "faster", compile_s=0.02), **numpy),
    ]
    text = b.result_block(rows).splitlines()
    assert text[4:9] == [
        "  verdict   jit 2x faster than eager (95% CI 1.6x-2.5x)",
        "            aot 2.1x faster than eager (95% CI 1.6x-2.5x)",
        "            aot 4x faster than numpy (95% CI 3.2x-5x)",
        "  why       jit: fused",
        "  compile   jit 30 ms, ahead from the first call",
    ]


def test_every_line_is_at_most_100_characters_long_values_wrapping_under_their_start():
    long = timed("jit", 1e-3, 0.02, **vs("eager", 2.0, 1.6, 2.5, "faster"), explanation="word " * 60)
    text = b.result_block([EAGER_JIT[0], long], "outputs/run/" + "x" * 40)
    assert max(map(len, text.splitlines())) <= b.BLOCK_WIDTH
    why = [line for line in text.splitlines() if line.startswith("  why") or line.startswith(" " * 12 + "word")]
    assert len(why) > 1 and all(line[12:].startswith("word") for line in why)


def test_a_long_mode_label_widens_the_label_column():
    rows = [timed("eager", 2e-3, 0.05, variant="before"), timed("eager", 3e-3, 0.05, variant="after")]
    text = b.result_block(rows).splitlines()
    assert text[1].startswith("  before eager  median 2 ms") and text[2].startswith("  after eager   median 3 ms")


def test_the_sweep_line_fits_in_120_characters_dropping_pay_off_then_ci_then_cutting():
    short = b.sweep_line(EAGER_JIT, "[1/4 3 s] ")
    assert short == (
        "[1/4 3 s] w size=8 float32 cpu: jit 2x faster than eager (95% CI 1.6x-2.5x), ahead from the first call; "
        "unstable"
    )
    assert b.sweep_line(EAGER_JIT, "[1/4 3 s, ~9 s left] ", width=100) == (
        "[1/4 3 s, ~9 s left] w size=8 float32 cpu: jit 2x faster than eager (95% CI 1.6x-2.5x); unstable"
    )
    assert b.sweep_line(EAGER_JIT, width=60) == "w size=8 float32 cpu: jit 2x faster than eager; unstable"
    cut = b.sweep_line(EAGER_JIT, "x" * 80, width=100)
    assert len(cut) == 100 and cut.endswith("\u2026")


def test_the_sweep_line_names_a_failure_by_its_short_type_and_unpaired_modes_by_their_median():
    failed = dict(workload="w", size=8, mode="jit", status="error", error_phase="trace")
    failed.update(error_type="jax.errors.TracerBoolConversionError", error_message="no")
    assert b.sweep_line([EAGER_JIT[0], failed]) == (
        "w size=8 float32 cpu: jit failed in trace: TracerBoolConversionError: no; eager 2 ms; unstable"
    )


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_console_paints_only_a_terminal_and_respects_no_color(monkeypatch):
    lines = b.block_lines(EAGER_JIT, "outputs/run/1")
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    pipe, tty = io.StringIO(), Tty()
    console.print_block(lines, pipe)
    console.print_block(lines, tty)
    assert pipe.getvalue() == b.result_block(EAGER_JIT, "outputs/run/1") + "\n"
    painted = tty.getvalue()
    assert "\x1b[" in painted and "\x1b[1;32mjit 2x faster than eager" in painted  # a faster verdict in green
    # the same characters once the colour codes are taken out
    import re

    assert re.sub(r"\x1b\[[\d;]*m", "", painted).replace("\r", "") == pipe.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    plain = Tty()
    console.print_block(lines, plain)
    assert plain.getvalue() == pipe.getvalue()


@pytest.mark.parametrize(("env", "wanted"), [({}, True), ({"NO_COLOR": "1"}, False), ({"TERM": "dumb"}, False)])
def test_colour_is_wanted_on_a_terminal_unless_no_color_or_a_dumb_terminal(monkeypatch, env, wanted):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert console.colour_wanted(Tty()) is wanted
    assert console.colour_wanted(io.StringIO()) is False


def test_memory_says_xla_s_temporaries_and_peak_the_allocator_s_peak_and_what_donation_saved():
    row = timed("jit", 1e-3, 0.02, temp_size_bytes=4 * 2**20, peak_memory_bytes=8 * 2**20, alias_size_bytes=0.0)
    assert b.memory_text(row) == "temporaries 4 MiB, XLA peak 8 MiB"
    row.update(device_peak_bytes=9 * 2**20, alias_size_bytes=2**20)
    assert b.memory_text(row) == "temporaries 4 MiB, XLA peak 8 MiB, allocator peak 9 MiB, donation saves 1 MiB"
    row.update(alias_size_bytes=0.0, donate_argnums="[0]")
    assert b.memory_text(row).endswith(", donated arguments were not reused")
    assert b.memory_text(timed("eager", 1e-3, 0.02)) == ""  # no one program, no analysis
    lines = b.block_lines([timed("eager", 2e-3, 0.05), {**row, **vs("eager", 2.0, 1.6, 2.5, "faster")}])
    labels = [line.label for line in lines if line.label]
    assert labels.index("memory") == labels.index("compile") + 1
    assert [line.text for line in lines if line.label == "memory"] == [f"jit {b.memory_text(row)}"]
