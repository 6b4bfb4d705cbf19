"""The tune sweeper's pure logic: a trial's objective from its job's rows, the tie rule, the Pareto front, the
confirmation's verdict and the resume bookkeeping. No Hydra, no Optuna, no processes, no files."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jitexp.analysis.formatting.values import format_bytes, format_ratio, format_seconds, is_missing
from jitexp.config.tune import Objective

TUNED_MODES = ("jit", "aot", "numpy", "eager")  # the row a trial is judged by: its first compiled mode


@dataclass(frozen=True)
class Estimate:
    """An objective's value with its 95% interval (low == high == value where the job gives none)."""

    value: float
    low: float
    high: float

    def overlaps(self, other: Estimate) -> bool:
        return self.low <= other.high and other.low <= self.high


@dataclass(frozen=True)
class Outcome:
    """What a trial's job returns to the search: an estimate per objective, or why it failed."""

    estimates: tuple[Estimate, ...] = ()
    reason: str = ""  # empty: the trial counts; else e.g. "out of memory: RESOURCE_EXHAUSTED ..."

    @property
    def ok(self) -> bool:
        return not self.reason and bool(self.estimates)


def tuned_row(rows: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The row a trial is judged by: jit's, else aot's, numpy's or eager's (the job's first variant's)."""
    plain = [r for r in rows if is_missing(r.get("variant"))] or list(rows)
    for mode in TUNED_MODES:
        for row in plain:
            if row.get("mode") == mode:
                return row
    return plain[0] if plain else None


def failure_kind(row: Mapping[str, Any]) -> str:
    """A failed row's kind in words: timeout, out of memory, compile error, or the phase it failed in."""
    text = " ".join(str(row.get(k) or "") for k in ("error_type", "error_message", "hint")).lower()
    phase = str(row.get("error_phase") or "")
    if "timeout" in text or "timed out" in text or phase == "timeout":
        return "timeout"
    if (
        "resource_exhausted" in text
        or "out of memory" in text
        or "memoryerror" in text
        or "out of device memory" in text
    ):
        return "out of memory"
    if phase in ("trace", "lower", "compile", "first_call", "cold"):
        return "compile error"
    if phase == "config":
        return "config error"
    return f"error in {phase}" if phase else "error"


def _number(value: Any) -> float | None:
    if is_missing(value):
        return None
    try:
        found = float(value)
    except (TypeError, ValueError):
        return None
    return found if math.isfinite(found) else None


def _bound(value: Any) -> float | None:
    """A number, infinity included (a paired interval too wide to bound is (0, inf)); None when missing."""
    found = _number(value)
    if found is None and not is_missing(value):
        try:
            found = float(value) if math.isinf(float(value)) else None
        except (TypeError, ValueError):
            return None
    return found


def estimate(row: Mapping[str, Any], objective: Objective, examples: float | None = None) -> Estimate | None:
    """The objective's estimate from a job's row (None when the row lacks it); times divided by examples."""
    steady = [_number(row.get(k)) for k in ("median_s", "ci95_low_s", "ci95_high_s")]
    first = [_number(row.get(k)) for k in ("first_call_s", "first_call_ci95_low_s", "first_call_ci95_high_s")]
    if objective.name == "steady":
        found = steady
    elif objective.name == "first_call":
        found = first
    elif objective.name == "compile":
        compile_s = _number(row.get("compile_s"))
        found = [compile_s, compile_s, compile_s]
    elif objective.name == "time_for_calls":
        n = objective.calls
        found = [None if f is None or s is None else f + n * s for f, s in zip(first, steady)]
    else:
        peak = next((v for v in (_number(row.get(k)) for k in ("device_peak_bytes", "peak_memory_bytes")) if v), None)
        found = [peak, peak, peak]
    value, low, high = found
    if value is None:
        return None
    low = value if low is None else min(low, value)
    high = value if high is None else max(high, value)
    scale = examples if objective.is_time and examples else 1.0
    return Estimate(value / scale, low / scale, high / scale)


def trial_outcome(
    rows: Sequence[Mapping[str, Any]], objectives: Sequence[Objective], examples: float | None = None
) -> Outcome:
    """A trial's outcome from its job's rows: the objectives' estimates, or the reason it counts as failed."""
    row = tuned_row(rows)
    if row is None:
        return Outcome(reason="no rows: the job wrote nothing")
    if row.get("status") != "ok":
        message = str(row.get("error_message") or row.get("error_type") or "").splitlines()
        detail = f": {message[0][:160]}" if message else ""
        return Outcome(reason=f"{failure_kind(row)}{detail}")
    if row.get("matches_eager") is not None and not is_missing(row.get("matches_eager")):
        if str(row.get("matches_eager")).lower() in ("false", "0"):
            err = _number(row.get("max_rel_err_vs_eager"))
            shown = f" (max relative error {err:.3g})" if err is not None else ""
            return Outcome(reason=f"result differs from eager beyond tolerance{shown}")
    found = [estimate(row, o, examples) for o in objectives]
    missing = [o.label for o, e in zip(objectives, found) if e is None]
    if missing:
        return Outcome(reason=f"the job gave no {', '.join(missing)}")
    return Outcome(tuple(e for e in found if e is not None))


# ---- the study: best, ties, front -------------------------------------------------------------


def best_index(estimates: Sequence[Estimate | None]) -> int | None:
    """The trial with the lowest value (None when none succeeded)."""
    found = [(e.value, i) for i, e in enumerate(estimates) if e is not None]
    return min(found)[1] if found else None


def tied(estimates: Sequence[Estimate | None]) -> list[bool]:
    """Each trial tied with the best: its interval overlaps the best's (the best itself is tied)."""
    best = best_index(estimates)
    if best is None:
        return [False] * len(estimates)
    top = estimates[best]
    assert top is not None
    return [e is not None and e.overlaps(top) for e in estimates]


# ---- the runoff: the best few measured again, side by side, before the best is named ------------------------

WIDE = 0.25  # an interval wider than this share of its value is unsettled: a burst of the host's load, perhaps
RUNNERS_UP = 2  # the trials next to the leader by value, measured again however narrow their intervals


def unsettled(e: Estimate) -> bool:
    """Whether an interval is too wide to rank by (wider than WIDE of its value)."""
    return e.value > 0 and (e.high - e.low) / e.value > WIDE


def runoff_contenders(estimates: Sequence[Estimate | None], cap: int) -> list[int]:
    """The trials measured again side by side before the best is named: the leader, then those tied with it, its
    RUNNERS_UP by value and the unsettled, the lowest low end first (how fast each may be); at most cap; [] under two."""
    lead = best_index(estimates)
    if lead is None or cap < 2:
        return []
    top = estimates[lead]
    assert top is not None
    near = {i for _, i in sorted((e.value, i) for i, e in enumerate(estimates) if e is not None)[: 1 + RUNNERS_UP]}
    found = sorted(
        (e.low, e.value, i)
        for i, e in enumerate(estimates)
        if e is not None and i != lead and (i in near or e.overlaps(top) or unsettled(e))
    )
    chosen = [lead, *(i for _, _, i in found)][:cap]
    return chosen if len(chosen) >= 2 else []


@dataclass(frozen=True)
class Runoff:
    """The runoff's answer: the trial named best, the contenders tied with it, each contender's estimate there."""

    best: int  # an index into the study's trials
    tied: tuple[int, ...]  # the contenders whose runoff interval overlaps the best's (the best included)
    estimates: Mapping[int, Estimate]  # trial index -> its estimate in the runoff (contenders that measured there)


def runoff_pick(contenders: Sequence[int], remeasured: Sequence[Estimate | None]) -> Runoff | None:
    """The best of the runoff: the contender with the lowest value measured again (all in the same processes), tied
    with those whose interval overlaps its; a contender without a value there is out; None when none has one."""
    found = {i: e for i, e in zip(contenders, remeasured) if e is not None}
    if not found:
        return None
    order = list(found)
    values = [found[i] for i in order]
    best = best_index(values)
    assert best is not None
    ties = tied(values)
    return Runoff(order[best], tuple(i for i, t in zip(order, ties) if t), found)


def pareto_front(points: Sequence[Sequence[float] | None]) -> list[int]:
    """The trials no other trial dominates (as low or lower in every objective, lower in one), in order."""
    live = [(i, p) for i, p in enumerate(points) if p is not None]

    def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
        return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))

    return [i for i, p in live if not any(dominates(q, p) for j, q in live if j != i)]


# ---- words ----------------------------------------------------------------------------------


def value_text(objective: Objective, e: Estimate | None, per_example: bool = False) -> str:
    """`12.3 ms (95% CI 12-12.6 ms)`; bytes for device memory; `-` when missing."""
    if e is None:
        return "-"
    unit = format_seconds if objective.is_time else format_bytes
    suffix = " per example" if per_example and objective.is_time else ""
    if e.low == e.high:
        return f"{unit(e.value)}{suffix}"
    return f"{unit(e.value)}{suffix} (95% CI {unit(e.low)}-{unit(e.high)})"


def params_label(params: Mapping[str, Any]) -> str:
    """`unroll=4 batch=64`: each searched key by its last part (the whole key where two share one)."""
    last = [k.rpartition(".")[2] for k in params]
    names = [k if last.count(s) > 1 else s for k, s in zip(params, last)]
    return " ".join(f"{n}={_value(v)}" for n, v in zip(names, params.values())) or "(no searched key)"


def _value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).lower() if isinstance(value, bool) else str(value)


def trial_line(
    job: int,
    total: int,
    params: Mapping[str, Any],
    objective: Objective,
    outcome: Outcome,
    best: tuple[int, Mapping[str, Any], Estimate] | None,
    per_example: bool = False,
) -> str:
    """The live line of one trial (job numbers from 0, trials from 1): `trial 3 of 20: unroll=4: 1.2 ms (95% CI
    ...); best so far: trial 1, unroll=8: ...`."""
    head = f"trial {job + 1} of {total}: {params_label(params)}: "
    body = value_text(objective, outcome.estimates[0], per_example) if outcome.ok else f"failed ({outcome.reason})"
    if best is None:
        return f"{head}{body}; no trial has succeeded yet"
    number, best_params, e = best
    return f"{head}{body}; best so far: trial {number + 1}, {params_label(best_params)}: {value_text(objective, e, per_example)}"


# ---- the confirmation -----------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """The confirmation's answer: the best against the baseline, and its one line."""

    faster: bool
    ratio: float | None
    low: float | None
    high: float | None
    line: str


NO_BETTER = "no setting is significantly faster than the baseline"


def unpaired_ratio(baseline: Estimate, best: Estimate) -> tuple[float, float, float]:
    """baseline/best with the widest ratio the two intervals allow (objectives a pairing does not give)."""
    return baseline.value / best.value, baseline.low / best.high, baseline.high / best.low


def verdict(label: str, ratio: float | None, low: float | None, high: float | None, *, same: bool = False) -> Verdict:
    """`best: unroll=4: 1.31x faster than the baseline (95% CI 1.25x-1.37x)`, or NO_BETTER with the figures."""
    if same:
        return Verdict(False, 1.0, 1.0, 1.0, f"{NO_BETTER}: the best trial ({label}) is the baseline itself")
    if ratio is None or low is None or high is None:
        return Verdict(False, None, None, None, f"{NO_BETTER}: the confirmation gave no ratio ({label})")
    figures = f"{format_ratio(ratio)} (95% CI {format_ratio(low)}-{format_ratio(high)})"
    if low > 1:
        return Verdict(
            True,
            ratio,
            low,
            high,
            f"best: {label}: {format_ratio(ratio)} faster than the baseline (95% CI {format_ratio(low)}-{format_ratio(high)})",
        )
    return Verdict(False, ratio, low, high, f"{NO_BETTER} (best trial {label}: {figures} against it)")


PAIRED = {"steady": "ab_steady", "first_call": "ab_first_call", "compile": "ab_compile"}  # variants' paired columns


def per_call_note(examples: tuple[float | None, float | None]) -> str:
    """Under the confirmation job's own line (variants compared per call) when a call of each side holds another number
    of examples, so that its "slower" does not read against the verdict's per-example "faster"; "" otherwise."""
    base, best = examples
    if not base or not best or base == best:
        return ""
    return (
        f"tune: that job's line compares calls; a call of the baseline holds {base:g} examples, the best's "
        f"{best:g}: the verdict below is per example"
    )


def confirmed_ratio(
    baseline_row: Mapping[str, Any],
    best_row: Mapping[str, Any],
    objective: Objective,
    examples: tuple[float | None, float | None] = (None, None),
) -> tuple[float | None, float | None, float | None]:
    """How many times less the best takes than the baseline, with its 95% CI, from the confirmation job's two
    variant rows: the paired change (ab_*: best/baseline over the processes' pairs) where the objective has one, per
    example when the two hold different numbers of examples; else the ratio of the two estimates' intervals."""
    base_ex, best_ex = examples
    scale = (best_ex / base_ex) if (base_ex and best_ex and objective.is_time) else 1.0
    prefix = PAIRED.get(objective.name)
    if prefix is not None:
        ratio, low, high = (_bound(best_row.get(f"{prefix}_{k}")) for k in ("ratio", "ratio_ci_low", "ratio_ci_high"))
        if ratio and low is not None and high is not None and ratio > 0:
            faster_low = scale / high if high > 0 and math.isfinite(high) else 0.0
            faster_high = scale / low if low > 0 else math.inf
            return scale / ratio, faster_low, faster_high
    a, b = estimate(baseline_row, objective, base_ex), estimate(best_row, objective, best_ex)
    if a is None or b is None or b.value <= 0 or b.low <= 0:
        return None, None, None
    return unpaired_ratio(a, b)


# ---- resume bookkeeping ---------------------------------------------------------------------

COMPLETE, FAILED, RUNNING, REPEAT = "complete", "failed", "running", "repeat"


@dataclass(frozen=True)
class TrialRecord:
    """One trial as the study's record holds it: its number, job folder, params and state."""

    number: int
    params: Mapping[str, Any]
    state: str  # COMPLETE, FAILED, RUNNING (asked, never told: interrupted), REPEAT (params of an earlier trial)
    job: int | None = None  # the job folder's number; None for a repeat (nothing was measured)


@dataclass(frozen=True)
class ResumePlan:
    """What a resumed study does: the interrupted trials to run again in their own folders, and how many new."""

    measured: int  # trials that hold a result (complete or failed)
    rerun: list[TrialRecord] = field(default_factory=list)
    new: int = 0
    next_job: int = 0


def resume_plan(records: Iterable[TrialRecord], trials: int) -> ResumePlan:
    """Of a study's record: the interrupted trials again (in their own job folders, so that a job that finished
    before the interruption is read back, not measured again), then new ones until `trials` have results."""
    records = list(records)
    measured = sum(r.state in (COMPLETE, FAILED) for r in records)
    rerun = sorted((r for r in records if r.state == RUNNING and r.job is not None), key=lambda r: r.job or 0)
    jobs = [r.job for r in records if r.job is not None]
    next_job = max(jobs) + 1 if jobs else 0
    rerun = rerun[: max(0, trials - measured)]
    return ResumePlan(measured, rerun, max(0, trials - measured - len(rerun)), next_job)


def repeat_of(params: Mapping[str, Any], records: Iterable[TrialRecord]) -> TrialRecord | None:
    """The earlier measured trial with exactly these params (a sampler may propose a point twice)."""
    for r in records:
        if r.state in (COMPLETE, FAILED) and dict(r.params) == dict(params):
            return r
    return None


def grid_size(choices: Iterable[int | None]) -> int | None:
    """How many distinct points a space holds: the product of each key's choices; None when a key is continuous."""
    total = 1
    for n in choices:
        if n is None:
            return None
        total *= n
    return total
