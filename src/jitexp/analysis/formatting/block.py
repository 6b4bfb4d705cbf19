"""A single job's answer as a labelled block (hyperfine's way: one fact a line, the interval written as one), and a
sweep job's answer in one short line. Pure: rows in, lines out; the command line colours them (engine.console).

The block's order: the case; each mode's median with its 95% CI and process count; device time; each verdict; why;
compile and pay-off; where the job's time went; each instability reason; where the files went and what to run next.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jitexp.analysis.formatting.answer import (
    ab_phrase,
    case_text,
    compile_text,
    device_clause,
    process_scope,
    row_label,
    split_reasons,
    split_text,
)
from jitexp.analysis.formatting.phrases import payoff_text, speedup_phrase
from jitexp.analysis.formatting.values import (
    EAGER,
    NUMPY,
    cell_text,
    format_bytes,
    format_seconds,
    is_missing,
    is_positive,
    is_true,
    short_name,
)
from jitexp.analysis.speedups import NOT_WORK_VERDICTS, not_work

__all__ = [
    "BLOCK_WIDTH",
    "SWEEP_WIDTH",
    "Line",
    "block_lines",
    "interval_text",
    "memory_text",
    "render_block",
    "result_block",
    "sweep_line",
]

BLOCK_WIDTH = 100  # the block's longest line (wrapped values included)
SWEEP_WIDTH = 120  # a sweep job's one line
LABEL_WIDTH = 10


@dataclass(frozen=True)
class Line:
    """One line of the block: its label (empty on a continuation), its text, and how it is coloured: ``case``,
    ``time``, ``good``, ``bad``, ``neutral``, ``warn``, ``error``, ``dim`` or ``""`` (plain)."""

    label: str
    text: str
    style: str = ""


def interval_text(low: Any, high: Any) -> str:
    """A CI as an interval in one unit where both ends share it: ``14.0-15.3 ms``, ``980 us-1.02 ms``."""
    lo, hi = format_seconds(low), format_seconds(high)
    lo_value, _, lo_unit = lo.partition(" ")
    hi_value, _, hi_unit = hi.partition(" ")
    if lo_unit and lo_unit == hi_unit:
        return f"{lo_value}-{hi_value} {hi_unit}"
    return f"{lo}-{hi}"


def _verdict_style(verdict: Any) -> str:
    text = cell_text(verdict)
    if text == "faster":
        return "good"
    if text == "slower":
        return "bad"
    return "warn" if text in NOT_WORK_VERDICTS else "neutral"


def _median_lines(rows: Sequence[Mapping]) -> list[Line]:
    """Each mode's median, its 95% CI as an interval and its process count, the columns aligned; a failed mode's
    phase and error, and its hint."""
    ok = [r for r in rows if r.get("status") == "ok"]
    medians = {id(r): f"median {format_seconds(r['median_s'])}" for r in ok}
    cis = {id(r): f"95% CI {interval_text(r['ci95_low_s'], r['ci95_high_s'])}" for r in ok}
    wide_median = max(map(len, medians.values()), default=0)
    wide_ci = max(map(len, cis.values()), default=0)
    lines = []
    for row in rows:
        if row.get("status") != "ok":
            error = f"failed in {row.get('error_phase')}: {row.get('error_type')}: {row.get('error_message')}"
            lines.append(Line(row_label(row), error, "error"))
            if row.get("hint"):
                lines.append(Line("hint", str(row["hint"]), "warn"))
            continue
        scope = process_scope([row])
        text = f"{medians[id(row)]:<{wide_median}}   {cis[id(row)]:<{wide_ci}}   {scope}".rstrip()
        lines.append(Line(row_label(row), text, "time"))
    return lines


def _verdict(row: Mapping, ci: bool = True, scope: bool = False) -> str:
    """A paired row's verdict against its baseline (`speedup_phrase`), with its CI or (ci=False) without it; `scope`:
    a CI of one process's rounds (timing=quick) says `1 process` (two quick runs of one job read 3.6x and 1.87x)."""
    phrase = speedup_phrase(
        row_label(row),
        row["baseline_mode"],
        row["speedup"],
        row["speedup_ci_low"] if ci else None,
        row["speedup_ci_high"] if ci else None,
        row["verdict"],
        one_process=ci and scope and row.get("ci_scope") == "within_process",
    )
    return phrase if ci else phrase.replace(" (95% CI -)", "")


def _payoff(row: Mapping) -> str:
    """When a paired row's mode pays off against its baseline (`payoff_text`)."""
    return payoff_text(row["verdict"], row["break_even_calls"], row["ahead_until_calls"], row["baseline_mode"])


def _paired(row: Mapping) -> bool:
    return row.get("status") == "ok" and not is_missing(row.get("speedup"))


def block_lines(rows: Sequence[Mapping], folder: str | None = None) -> list[Line]:
    """The job's answer, line by line (see the module's docstring for the order); `folder` adds the files and the
    next command."""
    ok = [r for r in rows if r.get("status") == "ok"]
    paired = [r for r in rows if _paired(r)]
    many = len(paired) > 1
    lines = [Line("", case_text(rows), "case"), *_median_lines(rows)]
    for row in ok:
        clause = device_clause(row)
        if clause:
            lines.append(Line("device", f"{row_label(row)} {clause}"))
    for row in rows:
        if cell_text(row.get("ab_baseline")):
            lines.append(Line("change", ab_phrase(row), _verdict_style(row.get("ab_steady_verdict"))))
    for row in paired:
        lines.append(Line("verdict", _verdict(row, scope=True), _verdict_style(row["verdict"])))
    for row in ok:
        if row["mode"] in (EAGER, NUMPY, row.get("baseline_mode", EAGER)) or is_missing(row.get("speedup_vs_numpy")):
            continue
        phrase = speedup_phrase(
            row_label(row),
            NUMPY,
            row["speedup_vs_numpy"],
            row.get("speedup_vs_numpy_ci_low"),
            row.get("speedup_vs_numpy_ci_high"),
            row.get("verdict_vs_numpy"),
        )
        lines.append(Line("verdict", phrase, _verdict_style(row.get("verdict_vs_numpy"))))
    for row in paired:
        why = not_work(row, str(row["baseline_mode"]))[1] or not_work(row)[1]
        if not why and not is_missing(row.get("explanation")):
            why = str(row["explanation"])
        if why:
            style = "warn" if row["verdict"] in NOT_WORK_VERDICTS else ""
            lines.append(Line("why", f"{row_label(row)}: {why}" if many else why, style))
    for row in paired:
        if row["mode"] == NUMPY or row["verdict"] in NOT_WORK_VERDICTS:
            continue  # NumPy compiles nothing; a time that is no work pays nothing off
        payoff = _payoff(row)
        spent = compile_text(row)
        lines.append(Line("compile", f"{row_label(row)} {spent}, {payoff}" if spent else f"{row_label(row)} {payoff}"))
    for row in ok:
        memory = memory_text(row)
        if memory:
            lines.append(Line("memory", f"{row_label(row)} {memory}"))
    split = next((text for text in map(split_text, rows) if text), "")  # job-level: the first row that has it
    if split:
        lines.append(Line("job", split, "dim"))
    for row in rows:
        if is_true(row.get("unstable")):
            reasons = split_reasons(row.get("unstable_reason")) or ["flagged unstable"]
            lines.extend(Line("unstable", f"{row_label(row)}: {reason}", "warn") for reason in reasons)
    if folder:
        lines.append(Line("results", f"{folder}/"))
        lines.append(Line("next", f"jitexp-report {folder}", "dim"))
    return _stacked(lines)


def memory_text(row: Mapping) -> str:
    """``temporaries 3.81 MiB, XLA peak 7.63 MiB, allocator peak 9 MiB, donation saves 4 MiB``: a compiled mode's memory
    from XLA's analysis (`temp_size_bytes`, `peak_memory_bytes`, `alias_size_bytes`) and the allocator (`device_peak_bytes`);
    ``donated arguments were not reused`` when donation was asked for and XLA aliased nothing; empty without the
    analysis (eager and NumPy compile no one program)."""
    temp, peak = row.get("temp_size_bytes"), row.get("peak_memory_bytes")
    if is_missing(temp) or is_missing(peak):
        return ""
    parts = [f"temporaries {format_bytes(temp)}", f"XLA peak {format_bytes(peak)}"]
    if not is_missing(row.get("device_peak_bytes")):
        parts.append(f"allocator peak {format_bytes(row['device_peak_bytes'])}")
    alias: Any = row.get("alias_size_bytes")
    donated = any(cell_text(row.get(key)) not in ("", "[]") for key in ("donate_argnums", "donate_argnames"))
    if is_positive(alias):
        parts.append(f"donation saves {format_bytes(alias)}")
    elif donated:
        parts.append("donated arguments were not reused")
    return ", ".join(parts)


def _stacked(lines: list[Line]) -> list[Line]:
    """A label repeated on consecutive lines is written once (verdict, verdict -> verdict, blank)."""
    out, last = [], None
    for line in lines:
        out.append(Line("" if line.label and line.label == last else line.label, line.text, line.style))
        last = line.label or last
    return out


def label_width(lines: Sequence[Line]) -> int:
    """The label column: LABEL_WIDTH, or wider for a long mode label (``before eager``) and two spaces after it."""
    return max([LABEL_WIDTH, *(len(line.label) + 2 for line in lines)])


def wrapped(line: Line, width: int = BLOCK_WIDTH, labels: int = LABEL_WIDTH) -> list[str]:
    """One block line as printed: the case flush left, others indented under a label column `labels` wide; values
    longer than `width` wrap under their own start."""
    if line.label == "" and line.style == "case":
        return textwrap.wrap(line.text, width, subsequent_indent="  ", break_on_hyphens=False) or [""]
    head = f"  {line.label:<{labels}}"
    return textwrap.wrap(
        line.text, width, initial_indent=head, subsequent_indent=" " * len(head), break_on_hyphens=False
    ) or [head.rstrip()]


def render_block(lines: Sequence[Line], width: int = BLOCK_WIDTH) -> str:
    """The block as plain text, each line at most `width` characters (a word longer than that stays whole)."""
    labels = label_width(lines)
    return "\n".join(text for line in lines for text in wrapped(line, width, labels))


def result_block(rows: Sequence[Mapping], folder: str | None = None) -> str:
    """The block a single job prints, as plain text (what a pipe or NO_COLOR gets)."""
    return render_block(block_lines(rows, folder))


def sweep_line(rows: Sequence[Mapping], progress: str = "", width: int = SWEEP_WIDTH) -> str:
    """A sweep job's answer in at most `width` characters: the progress, the case, then the verdicts (or each mode's
    median, or the failure): ``[2/4 9 s, ~9 s left] matmul size=64 float32 cpu: jit 2.1x faster than eager (95% CI
    1.9x-2.3x), ahead from the first call``. Too long, it drops the pay-offs, then the CIs, then cuts the end (the
    job's log and the sweep's closing table keep everything)."""
    for payoff, ci in ((True, True), (False, True), (False, False)):
        text = f"{progress}{case_text(rows)}: " + "; ".join(_sweep_facts(rows, payoff, ci))
        if len(text) <= width:
            return text
    return text[: width - 1].rstrip() + "\u2026"


def _sweep_facts(rows: Sequence[Mapping], payoff: bool, ci: bool) -> list[str]:
    facts = [
        f"{row_label(r)} failed in {r.get('error_phase')}: {short_name(r.get('error_type'))}: {r.get('error_message')}"
        for r in rows
        if r.get("status") != "ok"
    ]
    paired = [r for r in rows if _paired(r)]
    for row in paired:
        phrase = _verdict(row, ci)
        if payoff and row["mode"] != NUMPY and row["verdict"] not in NOT_WORK_VERDICTS:
            phrase += ", " + _payoff(row)
        facts.append(phrase)
    facts += [ab_phrase(r) for r in rows if cell_text(r.get("ab_baseline"))]
    if not paired:
        facts += [f"{row_label(r)} {format_seconds(r['median_s'])}" for r in rows if r.get("status") == "ok"]
    if any(is_true(r.get("unstable")) for r in rows):
        facts.append("unstable")
    return facts
