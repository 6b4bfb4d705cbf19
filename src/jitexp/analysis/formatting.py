"""Pure value-to-text for everything that prints: seconds, bytes, ratios, tables, verdict and pay-off phrases.

Nothing here reads files or knows a results frame's grouping; tables.py builds the frames,
this module words them. Missing values (None, NaN, pd.NA) read as ``-`` unless said otherwise.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jitexp.analysis.ceilings import ceiling_label, device_above_wall
from jitexp.analysis.speedups import NOT_WORK_VERDICTS, not_work
from jitexp.analysis.stats import ALPHA, THRESHOLD
from jitexp.labels import joined, size_text

NUMPY = "numpy"
EAGER = "eager"
STATIC_ARGNUMS = "static_argnums"

# ---- missing values and plain numbers ----------------------------------------------------


def is_missing(value: Any) -> bool:
    """None, NaN or pd.NA (a value pandas would call missing); lists and other objects are not."""
    if value is None or value is pd.NA:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def is_true(value: Any) -> bool:
    """A flag cell that is present and true (a missing flag is not true)."""
    return not is_missing(value) and bool(value)


def is_positive(value: Any) -> bool:
    """A number that is present and above zero."""
    return not is_missing(value) and float(value) > 0


def plain(value: Any) -> Any:
    """Integral floats as ints (CSV round-trips turn 3 into 3.0 next to NaN), NumPy scalars as Python ones."""
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    if isinstance(value, np.generic):
        return value.item()
    return value


def cell_text(value: Any) -> str:
    """A cell as text, ``""`` when it is missing."""
    return "" if is_missing(value) else str(value)


def short_name(qualified: Any) -> str:
    """The last dotted part of a class name: ``jax.errors.TracerBoolConversionError`` -> ``TracerBoolConversionError``."""
    return "" if is_missing(qualified) else str(qualified).rsplit(".", 1)[-1]


def three_digits(value: float | None) -> str:
    """Three significant digits without exponent notation: ``1.94``, ``12.3``, ``4567``."""
    value = float("nan") if value is None else value
    text = f"{value:.3g}"
    return text if "e" not in text else f"{value:.0f}"


# ---- units -------------------------------------------------------------------------------


def format_seconds(value: Any) -> str:
    """Seconds for people, three significant digits: ``12.3 ms``, ``45 us``; ``-`` when missing."""
    if is_missing(value):
        return "-"
    value = float(value)
    if math.isinf(value):
        return "inf"
    if value == 0:
        return "0 s"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "us")):
        if abs(value) >= scale * 0.9995:
            return f"{three_digits(value / scale)} {unit}"
    return f"{three_digits(value / 1e-9)} ns"


def format_bytes(value: Any) -> str:
    """Bytes for people: ``4.04 MiB``, ``800 B``; ``-`` when missing."""
    if is_missing(value):
        return "-"
    value = float(value)
    for scale, unit in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} B"


def format_ratio(value: Any) -> str:
    """A speedup or ratio: ``1.94x``; ``-`` when missing."""
    return "-" if is_missing(value) else f"{three_digits(float(value))}x"


def p_text(p: Any) -> str:
    """A p-value as text: two digits, '<0.0001' below that (a normal tail underflows to 0), '-' when missing."""
    if is_missing(p):
        return "-"
    return "<0.0001" if float(p) < 1e-4 else f"{float(p):.2g}"


def format_percent(fraction: float) -> str:
    """A fraction as a whole percentage: ``0.034`` -> ``3%``."""
    return f"{fraction:.0%}"


def format_value(column: str, value: Any) -> str:
    """A cell as text, chosen by column name: seconds, speedups, bytes, break-even counts, plain."""
    if column.endswith("_s"):
        return format_seconds(value)
    if is_missing(value):
        return "-"
    if column in ("speedup", "speedup_ci_low", "speedup_ci_high"):
        return format_ratio(value)
    if column.endswith("_bytes") or column == "bytes_accessed":
        return format_bytes(value)
    if column == "arithmetic_intensity":
        return f"{float(value):.3g}"
    if column in ("traffic_cut",):
        return f"{float(value):.3g}x"
    if column in ("break_even_calls", "ahead_until_calls"):
        return "never" if math.isinf(value) else str(int(value))
    if column.endswith("exponent"):
        text = f"{float(value):.2f}"
        return "0.00" if text == "-0.00" else text
    return str(plain(value))


def growth_text(exponent: float) -> str:
    """``time ~ size^2.06`` for a growth exponent; ``-`` when it is missing."""
    if is_missing(exponent) or not math.isfinite(float(exponent)):
        return "-"
    return f"time ~ size^{format_value('growth_exponent', exponent)}"


def display_path(path: str | os.PathLike, cwd: str | os.PathLike | None = None) -> str:
    """A path relative to the current directory when it lies under it (``outputs/run/...``), else as given."""
    path = Path(path)
    try:
        return str(path.resolve().relative_to(Path(cwd or os.getcwd()).resolve()))
    except ValueError:
        return str(path)


# ---- tables ------------------------------------------------------------------------------


def render(df: pd.DataFrame, *, width: int | None = None) -> tuple[list[str], list[list[str]]]:
    """A frame as (headers, rows) of cell strings; cells cut to width characters when given."""
    headers = [str(c) for c in df.columns]
    rows = []
    for values in df.itertuples(index=False):
        cells = [format_value(c, v).replace("\n", " ") for c, v in zip(headers, values)]
        if width:
            cells = [c if len(c) <= width else c[: width - 3] + "..." for c in cells]
        rows.append(cells)
    return headers, rows


def markdown_table(df: pd.DataFrame) -> str:
    """A GitHub-flavoured markdown table (pipes escaped), without needing tabulate."""
    headers, rows = render(df)

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    numeric = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in df.columns]
    rule = ["---:" if n else "---" for n in numeric]
    return "\n".join([line(headers), "|" + "|".join(rule) + "|", *map(line, rows)])


def text_table(df: pd.DataFrame, *, width: int = 48) -> str:
    """An aligned plain-text table for the terminal (long cells cut)."""
    headers, rows = render(df, width=width)
    widths = [max(len(r[i]) for r in [headers, *rows]) for i in range(len(headers))]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) for c in df.columns]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.rjust(w) if n else c.ljust(w) for c, w, n in zip(cells, widths, numeric)).rstrip()

    return "\n".join([line(headers), "  ".join("-" * w for w in widths), *map(line, rows)])


# ---- params and jit's knobs ----------------------------------------------------------------


def is_static(static_argnums: Any) -> bool:
    """Whether a static_argnums cell names any argument (``[1]``, not ``[]`` or empty)."""
    text = cell_text(static_argnums).strip()
    return bool(text) and text not in ("[]", "()", "None")


def params_text(row: Mapping, static_mark: bool = False) -> str:
    """A row's params as ``n=2``; with static_mark ``n=2 (static)`` or ``n=2 (traced)`` (see variant_label)."""
    items = [(k[len("param_") :], v) for k, v in row.items() if str(k).startswith("param_") and not is_missing(v)]
    if not items:
        return ""
    mark = ""
    if static_mark and STATIC_ARGNUMS in row and not is_missing(row.get(STATIC_ARGNUMS)):
        mark = " (static)" if is_static(row.get(STATIC_ARGNUMS)) else " (traced)"
    return ", ".join(f"{k}={plain(v)}" for k, v in items) + mark


def variant_label(variant: Any, static_argnums: Any, params: Iterable[str] = ()) -> str:
    """A probe variant (``n=2``) marked ``(static)`` when it sets a workload param and the job had
    static_argnums, ``(traced)`` when static_argnums was ``[]``; other variants (size, dtype) as they are.

    The rows do not say which argument a param feeds; jitexp's built-in static argument is always
    a param's value, so a param under non-empty static_argnums is called static.
    """
    text = cell_text(variant)
    if "=" not in text:
        return text
    name = text.split("=", 1)[0].strip()
    if name not in set(params):
        return text
    return f"{text} ({'static' if is_static(static_argnums) else 'traced'})"


# ---- verdicts, pay-off and the job's one line --------------------------------------------


UNKNOWN_PAYOFF = "pay-off unknown (no cold first call)"


def payoff_text(verdict_: str | None, calls: float, ahead: float, baseline: str = "eager") -> str:
    """What the cost lines say, worded to agree with the steady-state verdict (and with break_even_calls, which
    stats.settled_break_even makes inf wherever this says never); unknown without a cold first call."""
    if is_missing(calls) and is_missing(ahead):
        return UNKNOWN_PAYOFF
    if verdict_ == "faster":
        if is_missing(calls) or math.isinf(calls):
            return "never pays off"
        return "ahead from the first call" if calls <= 1 else f"pays off after {int(calls)} calls"
    if verdict_ == "slower":
        if not is_missing(ahead) and ahead >= 1:
            return f"ahead for the first {int(ahead)} call{'s' if ahead != 1 else ''} only, then {baseline} wins"
        return "never pays off"
    if not is_missing(calls) and calls <= 1:
        return "no steady-state gain; its first call is cheaper"
    return "no steady-state gain; never pays off"


def payoff_words(verdict_: str | None, calls: float, ahead: float) -> str:
    """The short pay-off for a picture's point label: ``ahead from call 1``, ``pays off at call 15``,
    ``ahead until call 3``, ``never pays off``; the same cases as payoff_text."""
    if is_missing(calls) and is_missing(ahead):
        return "pay-off unknown"
    if verdict_ not in ("faster", "slower") and not is_missing(calls) and calls <= 1:
        return "first call cheaper"
    if verdict_ == "faster" and not is_missing(calls):
        if math.isinf(calls):
            return "never pays off"
        return "ahead from call 1" if calls <= 1 else f"pays off at call {int(calls)}"
    if verdict_ == "slower" and not is_missing(ahead) and ahead >= 1:
        return f"ahead until call {int(ahead)}"
    return "never pays off"


def reciprocal(value: Any) -> float:
    """1 / value for a ratio or its CI bound (a speedup's bounds as a time ratio's): 0 -> inf, inf -> 0, missing -> NaN."""
    if is_missing(value):
        return math.nan
    value = float(value)
    return math.inf if value == 0 else 1 / value


def usable_ratio(value: Any) -> bool:
    """A ratio that can be put in words: present, finite and positive."""
    return not is_missing(value) and math.isfinite(float(value)) and float(value) > 0


def speedup_as_time_ratio(speedup: Any, lo: Any = None, hi: Any = None) -> tuple[float, float, float]:
    """A speedup (baseline time over mode time) and its CI as the mode's time ratio (mode over baseline), the
    form `ratio_words` reads: 2.5 with CI 2.0-3.125 -> (0.4, 0.32, 0.5)."""
    return reciprocal(speedup), reciprocal(hi), reciprocal(lo)


def oriented(time_ratio: Any, lo: Any = None, hi: Any = None) -> tuple[float, str, float, float]:
    """A time ratio (this over the other: > 1 is slower) read one way: (N >= 1, ``faster`` or ``slower``, the
    CI's bounds in that same direction). 0.5 with CI 0.4-0.625 -> (2.0, "faster", 1.6, 2.5)."""
    lo, hi = (math.nan if is_missing(v) else float(v) for v in (lo, hi))
    if float(time_ratio) < 1:
        return reciprocal(time_ratio), "faster", reciprocal(hi), reciprocal(lo)
    return float(time_ratio), "slower", lo, hi


def ratio_words(time_ratio: Any, lo: Any = None, hi: Any = None) -> tuple[str, str]:
    """(``1.94x faster``, ``1.80x-2.09x``): the figure in words and its CI in the same direction; ``as fast`` when
    the figure rounds to 1x; the CI ``-`` when it is missing."""
    n, word, low, high = oriented(time_ratio, lo, hi)
    figure = "as fast" if three_digits(n) == "1" else f"{three_digits(n)}x {word}"
    bound = lambda v: "inf" if math.isinf(v) else f"{three_digits(v)}x"  # noqa: E731
    ci = "-" if math.isnan(low) or math.isnan(high) else f"{bound(low)}-{bound(high)}"
    return figure, ci


def compared(label: str, figure: str, other: str) -> str:
    """``jit 1.94x faster than eager`` from `ratio_words`' figure, or ``jit as fast as eager``."""
    return f"{label} as fast as {other}" if figure == "as fast" else f"{label} {figure} than {other}"


def ratio_cell(time_ratio: Any, lo: Any = None, hi: Any = None) -> str:
    """A table cell for a time ratio: ``1.94x faster (95% CI 1.80x-2.09x)``; ``-`` when missing."""
    if not usable_ratio(time_ratio):
        return "-"
    figure, ci = ratio_words(time_ratio, lo, hi)
    return figure if ci == "-" else f"{figure} (95% CI {ci})"


def within_threshold(verdict_: Any, p: Any, alpha: float = ALPHA) -> bool:
    """A significant change (p < alpha) that the verdict calls no change: it lies within the noise threshold."""
    return cell_text(verdict_).startswith("no significant") and not is_missing(p) and float(p) < alpha


def verdict_words(verdict_: Any, p: Any, threshold: float = THRESHOLD, alpha: float = ALPHA) -> str:
    """A verdict cell for reading: ``within the 5% threshold`` for a significant change the verdict calls no change
    (`within_threshold`); any other verdict as it is (the CSVs keep their values)."""
    return (
        f"within the {format_percent(threshold)} threshold"
        if within_threshold(verdict_, p, alpha)
        else cell_text(verdict_)
    )


def change_phrase(
    label: str,
    other: str,
    time_ratio: Any,
    lo: Any,
    hi: Any,
    verdict_: Any,
    p: Any = None,
    *,
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
) -> str:
    """Every ratio the user reads, one way round: ``after jit 3.02x slower than before (95% CI 2.95x-3.10x,
    p=0.031)``, ``... 1.05x slower than before, within the 5% threshold (...)`` when significant but under
    the threshold, ``... 1.21x slower than before: no significant change (...)``, ``...: cannot tell (...)``.

    time_ratio is this over other (> 1 slower); the figure is N >= 1 with its CI in the same direction, so
    a speedup is passed as its inverse (`speedup_phrase`)."""
    verdict_ = cell_text(verdict_)
    if not usable_ratio(time_ratio):
        return f"{label} vs {other}: {verdict_ or '-'}"
    figure, ci = ratio_words(time_ratio, lo, hi)
    head = compared(label, figure, other)
    if verdict_.startswith("cannot tell"):
        return f"{head}: {verdict_}"
    detail = f"(95% CI {ci}" + ("" if is_missing(p) else f", p={p_text(p)}") + ")"
    if verdict_ in ("faster", "slower"):
        return f"{head} {detail}"
    if within_threshold(verdict_, p, alpha):
        return f"{head}, within the {format_percent(threshold)} threshold {detail}"
    return f"{head}: {verdict_ or '-'} {detail}"


def speedup_phrase(
    mode: str, baseline: str, speedup: float, lo: float | None, hi: float | None, verdict_: str | None
) -> str:
    """A speedup (baseline time over mode time) in `change_phrase`'s words: ``jit 1.94x faster than eager (95% CI
    1.80x-2.09x)``, ``jit 1.9x slower than eager (95% CI 1.7x-2.1x)``, ``...: no significant difference (...)``;
    ``jit vs eager: no verdict (result differs)`` when the time is not the function's work (speedups.not_work)."""
    if verdict_ in NOT_WORK_VERDICTS:
        return f"{mode} vs {baseline}: no verdict ({verdict_})"
    if not usable_ratio(speedup):
        return change_phrase(mode, baseline, math.nan, None, None, verdict_)
    return change_phrase(mode, baseline, *speedup_as_time_ratio(speedup, lo, hi), verdict_)


_REASONS = re.compile(r";\s*(?![^()]*\))")  # "; " between reasons, not inside "(robust cv; limit 10%)"


def split_reasons(text: Any) -> list[str]:
    """An unstable_reason cell as its separate reasons (``; `` between them, not inside parentheses)."""
    return [r.strip() for r in _REASONS.split(cell_text(text)) if r.strip()]


def row_label(row: Mapping) -> str:
    """A row's mode, after its variant or env in a job with variants or envs: ``jit``, ``after jit``, ``new jit``."""
    name = cell_text(row.get("variant")) or cell_text(row.get("env"))
    return f"{name} {row.get('mode')}" if name else str(row.get("mode"))


def ab_phrase(row: Mapping, metric: str = "steady") -> str:
    """A variant's change against the baseline variant (`change_phrase`): ``after jit 3.02x slower than before
    (95% CI 2.95x-3.10x, p=0.031)``, ``... within the 5% threshold (...)``, ``...: cannot tell (1 process pair)``."""
    verdict_ = cell_text(row.get(f"ab_{metric}_verdict"))
    ratio = row.get(f"ab_{metric}_ratio")
    if is_missing(ratio) or not verdict_:
        return f"{row_label(row)} vs {row.get('ab_baseline')}: -"
    lo, hi = row.get(f"ab_{metric}_ratio_ci_low"), row.get(f"ab_{metric}_ratio_ci_high")
    return change_phrase(
        row_label(row), str(row.get("ab_baseline")), ratio, lo, hi, verdict_, row.get(f"ab_{metric}_p_value")
    )


def unstable_clause(rows: Sequence[Mapping]) -> str:
    """``unstable (eager, jit): 3 reasons, see results.csv unstable_reason``; ``""`` when every row is stable."""
    unstable = [r for r in rows if is_true(r.get("unstable"))]
    if not unstable:
        return ""
    n = sum(max(len(split_reasons(r.get("unstable_reason"))), 1) for r in unstable)
    modes = ", ".join(row_label(r) for r in unstable)
    return f"unstable ({modes}): {n} reason{'s' if n != 1 else ''}, see results.csv unstable_reason"


def mesh_text(row: Mapping) -> str:
    """`mesh data=4`, `mesh data=2 over 2 processes` (distributed.processes); empty for one device."""
    mesh = cell_text(row.get("mesh"))
    if not mesh:
        return ""
    given = row.get("distributed_processes")
    n = 1 if given is None or is_missing(given) else int(given)
    return f"mesh {mesh}" + (f" over {n} processes" if n > 1 else "")


def knobs_text(row: Mapping) -> str:
    """`donate_argnums=[0] xla_cpu_enable_fast_math=true`: the donation and compiler options a job set (what a
    sweep over them varies); empty when it set neither."""
    donate = cell_text(row.get("donate_argnums"))
    parts = [f"donate_argnums={donate}"] if donate and donate != "[]" else []
    return " ".join([*parts, cell_text(row.get("compiler_options"))]).strip()


def device_text(row: Mapping) -> str:
    """`` (device 5.88 ms, 94% of peak FLOP/s)``: the device's busy time per call beside the wall time, and the
    share of its ceiling (analysis.ceilings: the nominal peak, else the probe: `of the matmul probe`, `of memory
    bandwidth`) in the resource the call uses most, or in words when the row passes it (`in cache, above the
    memory ceiling`); `of a 310 us traced call` when the traced loop ran slower than the median; no share when the
    busy time is above the traced loop's wall time (the job's `unavailable` says why); empty without device time."""
    if is_missing(row.get("device_s")):
        return ""
    wall: Any = row.get("device_trace_wall_s")
    median: Any = row.get("median_s")
    device = float(row["device_s"])
    if device_above_wall(row):
        return f" (device time above its traced call's {format_seconds(wall)}: no share)"
    traced = (
        f" of a {format_seconds(wall)} traced call"
        if is_positive(wall) and is_positive(median) and device > float(median)
        else ""
    )
    above = row.get("above_ceiling")
    if isinstance(above, str) and above:
        return f" (device {format_seconds(device)}{traced}, {above.split('; ')[0]})"
    shares = [
        (row.get(f"device_peak_{name}_share"), name, label)
        for name, label in (("flops", "peak FLOP/s"), ("bytes", "peak bytes/s"))
    ]
    known = [
        (float(share), name, label) for share, name, label in shares if share is not None and not is_missing(share)
    ]
    peak = ""
    if known:
        share, name, label = max(known)
        source = row.get(f"{name}_ceiling")
        if isinstance(source, str) and source:
            label = ceiling_label(name, source, row.get("platform"))
        percent = share * 100
        peak = f", {percent:.0f}% of {label}" if percent >= 10 else f", {percent:.2g}% of {label}"
    return f" (device {format_seconds(device)}{traced}{peak})"


SPLIT_WORDS = {
    "first_calls": "first calls",
    "warmup": "warm-up",
    "device_time": "device time",
    "cache_probe": "cache probe",
    "retrace_probe": "retrace probe",
    "profile_probe": "profile",
    "unnamed": "unnamed",
}
UNNAMED_SHARE = 0.1  # the split names parts, largest first, until what it leaves unnamed is under this share


def split_text(row: Mapping) -> str:
    """``21.2 s: sampling 6.1 s, open 5.2 s, exit 4.1 s, first calls 2.9 s, other 1.6 s``: where the job's wall time
    went, its largest parts (job_<part>_s) named until the rest is under a tenth; empty when unknown. A row without
    the parts (written before they existed) reads ``31.2 s: open 9.8 s, compiling 1.2 s, the rest 20.2 s``."""
    wall = row.get("job_wall_s")
    if wall is None or is_missing(wall):
        return ""
    parts = {
        k[4:-2]: float(v)
        for k, v in row.items()
        if k.startswith("job_") and k.endswith("_s") and k not in OLD_SPLIT and not is_missing(v)
    }
    if "sampling" not in parts:
        opened, compiled = (row.get(k) for k in ("job_open_s", "job_compile_s"))
        opened = 0.0 if opened is None or is_missing(opened) else float(opened)
        compiled = 0.0 if compiled is None or is_missing(compiled) else float(compiled)
        rest = max(float(wall) - opened - compiled, 0.0)
        return (
            f"{format_seconds(wall)}: open {format_seconds(opened)}, compiling {format_seconds(compiled)}, "
            f"the rest {format_seconds(rest)}"
        )
    named, left = [], float(wall)
    for name, seconds in sorted(parts.items(), key=lambda kv: -kv[1]):
        if left < UNNAMED_SHARE * float(wall) or seconds <= 0:
            break
        named.append(f"{SPLIT_WORDS.get(name, name)} {format_seconds(seconds)}")
        left -= seconds
    other = f", other {format_seconds(max(left, 0.0))}" if left > 0.0005 else ""
    return f"{format_seconds(wall)}: {', '.join(named)}{other}"


OLD_SPLIT = ("job_wall_s", "job_compile_s")  # job_open_s is a part of both splits


def failure_text(row: Mapping) -> str:
    """A failed row in one line: ``jit failed in trace: TypeError: ... (hint: ...)``."""
    hint = f" (hint: {row['hint']})" if row.get("hint") else ""
    return f"{row_label(row)} failed in {row.get('error_phase')}: {row.get('error_type')}: {row.get('error_message')}{hint}"


def not_work_text(rows: Sequence[Mapping]) -> str:
    """``jit differs from eager: relative error 0.225; ``: why the rows' times are no speedup (speedups.not_work),
    each once, ending in ``; ``; empty when every time is the function's work."""
    reasons = []
    for row in rows:
        if row.get("status") != "ok":
            continue
        for column, against in (("verdict", row.get("baseline_mode")), ("verdict_vs_numpy", NUMPY)):
            if column == "verdict_vs_numpy" and row.get("mode") in (EAGER, row.get("baseline_mode", EAGER)):
                continue  # the line gives no such verdict (the numpy row's own says it)
            if cell_text(row.get(column)) in NOT_WORK_VERDICTS:
                why = not_work(row, str(against))[1] or not_work(row)[1]
                reasons.append(why or f"{row_label(row)} vs {against}: {row.get(column)}")
    reasons = list(dict.fromkeys(reasons))
    return "".join(f"{r}; " for r in reasons)


def job_summary(rows: Sequence[Mapping]) -> str:
    """One line for a job: first why a time is not the function's work (not_work_text), then each mode's median
    with its CI, then each variant's change against the baseline variant (a job with variants), then each paired
    verdict, compile and pay-off (no verdict for a time that is not the function's work)."""
    r0 = rows[0]
    params = " ".join(f"{k[6:]}={plain(v)}" for k, v in r0.items() if k.startswith("param_"))
    device = r0.get("device_kind") or r0.get("platform") or ""
    workload = "/".join(dict.fromkeys(str(r["workload"]) for r in rows))
    dtypes = joined(rows, lambda r: cell_text(r.get("dtype")))
    mesh, knobs = joined(rows, mesh_text), joined(rows, knobs_text)
    head = " ".join(str(p) for p in (workload, params, joined(rows, size_text), dtypes, device, mesh, knobs) if p)
    parts, verdicts = [], []
    changes = [ab_phrase(row) for row in rows if cell_text(row.get("ab_baseline"))]
    for row in rows:
        mode, plain_mode = row_label(row), row["mode"]
        if row.get("status") != "ok":
            parts.append(failure_text(row))
            continue
        half = (row["ci95_high_s"] - row["ci95_low_s"]) / 2 / row["median_s"]
        parts.append(f"{mode} {format_seconds(row['median_s'])} \u00b1{format_percent(half)}{device_text(row)}")
        if not is_missing(row.get("speedup")):
            phrase = speedup_phrase(
                mode,
                row["baseline_mode"],
                row["speedup"],
                row["speedup_ci_low"],
                row["speedup_ci_high"],
                row["verdict"],
            )
            if plain_mode == NUMPY or row["verdict"] in NOT_WORK_VERDICTS:  # NumPy compiles nothing; no work no pay-off
                verdicts.append(phrase)
            else:
                compile_s, cold_s = row.get("compile_s"), row.get("cache_cold_compile_s")
                cached = f" with the disk cache ({format_seconds(cold_s)} without)" if is_positive(cold_s) else ""
                compile_part = f", compile {format_seconds(compile_s)}{cached}" if is_positive(compile_s) else ""
                payoff = payoff_text(
                    row["verdict"], row["break_even_calls"], row["ahead_until_calls"], row["baseline_mode"]
                )
                why = f", {row['explanation']}" if not is_missing(row.get("explanation")) else ""
                verdicts.append(f"{phrase}{why}{compile_part}, {payoff}")
        if (
            not is_missing(row.get("speedup_vs_numpy"))
            and plain_mode != row.get("baseline_mode", EAGER)
            and plain_mode != EAGER
        ):
            verdicts.append(
                speedup_phrase(
                    mode,
                    NUMPY,
                    row["speedup_vs_numpy"],
                    row.get("speedup_vs_numpy_ci_low"),
                    row.get("speedup_vs_numpy_ci_high"),
                    row.get("verdict_vs_numpy"),
                )
            )
    n = max((r.get("n_processes") or 0 for r in rows), default=0)
    per_env = " per env" if any(not is_missing(r.get("env")) for r in rows) else ""
    separate = any(r.get("interleave") == "processes" for r in rows)
    per_env = " per mode, each mode in processes of its own" if separate else per_env
    scope = f"{n} process{'es' if n != 1 else ''}{per_env}" if n else ""
    scope = "; ".join(t for t in (scope, split_text(r0)) if t)
    notes = [unstable_clause(rows)]
    text = f"{not_work_text(rows)}{head}: {', '.join(parts)}"
    if changes or verdicts:
        text += " -> " + "; ".join(changes + verdicts)
    tail = [t for t in [scope, *notes] if t]
    return text + (f" [{'; '.join(tail)}]" if tail else "")
