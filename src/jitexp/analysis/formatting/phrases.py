"""The phrases a verdict is told in: params and jit's knobs as labels, pay-off, a time ratio oriented as
faster/slower with its CI, a change's and a speedup's sentence."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from jitexp.analysis.formatting.values import (
    STATIC_ARGNUMS,
    cell_text,
    format_percent,
    is_missing,
    p_text,
    plain,
    three_digits,
)
from jitexp.analysis.speedups import NOT_WORK_VERDICTS
from jitexp.analysis.stats import ALPHA, THRESHOLD

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


# ---- verdicts, pay-off, a ratio's words ---------------------------------------------------


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
    bound = lambda v: "inf" if math.isinf(v) else f"{bound_digits(v)}x"  # noqa: E731
    ci = "-" if math.isnan(low) or math.isnan(high) else f"{bound(low)}-{bound(high)}"
    return figure, ci


def bound_digits(value: float) -> str:
    """A CI bound as three_digits writes it, with more digits where that reads ``1`` and the bound is not 1: an
    interval beside a verdict "faster" must not seem to touch 1 (issue 57: "1x-1.03x faster"); 1.0004 reads
    ``1.0004``, 0.99996 ``0.99996``, 1 exactly ``1``."""
    text = three_digits(value)
    digits = 3
    while text == "1" and value != 1 and digits < 17:
        digits += 1
        text = f"{value:.{digits}g}"
    return text


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
    one_process: bool = False,
) -> str:
    """Every ratio the user reads, one way round: ``after jit 3.02x slower than before (95% CI 2.95x-3.10x,
    p=0.031)``, ``... 1.05x slower than before, within the 5% threshold (...)`` when significant but under
    the threshold, ``... 1.21x slower than before: no significant change (...)``, ``...: cannot tell (...)``.

    time_ratio is this over other (> 1 slower); the figure is N >= 1 with its CI in the same direction, so
    a speedup is passed as its inverse (`speedup_phrase`). `one_process`: the CI resamples one process's rounds
    (ci_scope within_process), and the parentheses say ``1 process``: a fresh process moves the figure by more."""
    verdict_ = cell_text(verdict_)
    if not usable_ratio(time_ratio):
        return f"{label} vs {other}: {verdict_ or '-'}"
    figure, ci = ratio_words(time_ratio, lo, hi)
    head = compared(label, figure, other)
    if verdict_.startswith("cannot tell"):
        return f"{head}: {verdict_}"
    detail = (
        f"(95% CI {ci}" + ("" if is_missing(p) else f", p={p_text(p)}") + (", 1 process" if one_process else "") + ")"
    )
    if verdict_ in ("faster", "slower"):
        return f"{head} {detail}"
    if within_threshold(verdict_, p, alpha):
        return f"{head}, within the {format_percent(threshold)} threshold {detail}"
    return f"{head}: {verdict_ or '-'} {detail}"


def speedup_phrase(
    mode: str,
    baseline: str,
    speedup: float,
    lo: float | None,
    hi: float | None,
    verdict_: str | None,
    one_process: bool = False,
) -> str:
    """A speedup (baseline time over mode time) in `change_phrase`'s words: ``jit 1.94x faster than eager (95% CI
    1.80x-2.09x)``, ``jit 1.9x slower than eager (95% CI 1.7x-2.1x)``, ``...: no significant difference (...)``;
    ``jit vs eager: no verdict (result differs)`` when the time is not the function's work (speedups.not_work)."""
    if verdict_ in NOT_WORK_VERDICTS:
        return f"{mode} vs {baseline}: no verdict ({verdict_})"
    if not usable_ratio(speedup):
        return change_phrase(mode, baseline, math.nan, None, None, verdict_)
    return change_phrase(mode, baseline, *speedup_as_time_ratio(speedup, lo, hi), verdict_, one_process=one_process)
