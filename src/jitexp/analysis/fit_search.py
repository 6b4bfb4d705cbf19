"""experiment=fit's search and its words, pure: doubling from the first value, then bisection between the largest
value that fit and the smallest that did not; each probe's outcome in, the next value out (no processes, no files).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# why a probe did not fit (the fit.csv `reason` column; `fits` is the one that did)
FITS = "fits"
ESTIMATE = "estimate"  # XLA's memory analysis of the compiled program says more than the limit: not run
INPUTS = "inputs"  # the arguments' arrays alone need more than the limit: no process started
OOM = "out_of_memory"  # the allocator refused (building the inputs, compiling or running)
CRASH = "crash"  # the process died (a signal: the OOM killer's SIGKILL, an abort) or passed timing.timeout_s
ERROR = "error"  # it failed for another reason (the error_type and error_message say which)
REASONS = (FITS, ESTIMATE, INPUTS, OOM, CRASH, ERROR)

OOM_MARKS = re.compile(r"resource.exhausted|out of memory|outofmemory|memoryerror|\boom\b|failed to allocate")


def is_oom(error_type: str | None, message: str | None) -> bool:
    """An error that is the allocator running out of memory (XLA's RESOURCE_EXHAUSTED, NumPy's MemoryError)."""
    return OOM_MARKS.search(f"{error_type or ''} {message or ''}".lower()) is not None


@dataclass
class Search:
    """Doubling from `start` until a value does not fit (or `maximum` does), then bisection to within `step`.

    `next()` is the value to probe (None: done), `record(value, fits)` its outcome. `largest` fit and
    `smallest_failing` did not; either is None when no probe says so.
    """

    start: int
    maximum: int
    step: int = 1
    largest: int | None = None
    smallest_failing: int | None = None
    tried: dict[int, bool] = field(default_factory=dict)

    def next(self) -> int | None:
        lo, hi = self.largest, self.smallest_failing
        if hi is None:  # doubling
            if lo is None:
                value = self.start
            elif lo >= self.maximum:
                return None
            else:
                value = min(max(lo * 2, lo + self.step), self.maximum)
            return None if value in self.tried else value
        low = lo if lo is not None else 0
        if hi - low <= self.step:
            return None
        middle = low + (hi - low) // 2
        middle -= middle % self.step  # a multiple of step, strictly between
        if middle <= low:
            middle = low + self.step
        if middle >= hi or middle in self.tried:
            return None
        return middle

    def record(self, value: int, fits: bool) -> None:
        self.tried[value] = fits
        if fits:
            self.largest = value if self.largest is None else max(self.largest, value)
        else:
            self.smallest_failing = value if self.smallest_failing is None else min(self.smallest_failing, value)
        if self.largest is not None and self.smallest_failing is not None and self.largest >= self.smallest_failing:
            # not monotone (a failure that is no memory's, say): keep the fitting value, search above it no more
            self.smallest_failing = min(
                (v for v, ok in self.tried.items() if not ok and v > self.largest), default=None
            )
            if self.smallest_failing is None:
                self.smallest_failing = self.largest + self.step

    def refute(self, value: int) -> None:
        """A value that fit as a probe failed later (its timed job ran out of memory): it does not fit, and the
        search goes on between the largest value still fitting and it."""
        self.tried[value] = False
        fitting = [v for v, ok in self.tried.items() if ok]
        self.largest = max(fitting, default=None)
        self.smallest_failing = min(
            v for v, ok in self.tried.items() if not ok and (self.largest is None or v > self.largest)
        )


def standing(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows that still fit: a value's probe that fit, unless a later row of the same value (its timed job) did
    not."""
    failed = {r["value"] for r in rows if not r.get("fits")}
    return [r for r in rows if r.get("fits") and r["value"] not in failed]


def probes_needed(start: int, maximum: int, answer: int, step: int = 1) -> int:
    """How many probes the search takes when every value up to `answer` fits (a test's yardstick)."""
    search = Search(start, maximum, step)
    count = 0
    while (value := search.next()) is not None:
        search.record(value, value <= answer)
        count += 1
    return count


def mib(n: Any) -> str:
    """Bytes in MiB (or GiB from 1 GiB), '?' when unknown."""
    if n is None or n != n:
        return "?"
    n = float(n)
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def reason_text(row: dict[str, Any]) -> str:
    """A probe's outcome in words, from its fit.csv row."""
    reason, peak, limit = row.get("reason"), row.get("estimate_bytes"), row.get("limit_bytes")
    if reason == FITS:
        return f"XLA's estimate {mib(peak)} within the limit {mib(limit)}, and it ran"
    if reason == ESTIMATE:
        return f"XLA's estimate {mib(peak)} over the limit {mib(limit)} (compiled, not run)"
    if reason == INPUTS:
        return f"the arguments alone need {mib(row.get('input_bytes'))}, over the limit {mib(limit)} (not started)"
    what = f"{row.get('error_type')}: {row.get('error_message')}"
    if reason == OOM:
        return f"out of memory in {row.get('error_phase')} ({what})"
    return f"{'crashed' if reason == CRASH else 'failed'} in {row.get('error_phase')} ({what})"


def fit_lines(key: str, rows: list[dict[str, Any]], maximum: int, wall_s: float, *, untimed: int = 0) -> list[str]:
    """The printed answer: the largest that fit, the smallest that did not, estimate against allocator, the search;
    `untimed` > 0: that many timed jobs ran out of memory, and the largest's was not run."""
    fitting = standing(rows)
    failing = [r for r in rows if not r.get("fits")]
    best = max(fitting, key=lambda r: r["value"]) if fitting else None
    worst = min(
        (r for r in failing if best is None or r["value"] > best["value"]), key=lambda r: r["value"], default=None
    )
    out = []
    if best is None:
        out.append(("largest", f"none: {key}={min(r['value'] for r in rows)} already did not fit" if rows else "none"))
    else:
        out.append(("largest", f"{key}={best['value']}: {reason_text(best)}"))
        if untimed:
            out.append(
                ("timed job", f"not run at {key}={best['value']}: the {untimed} timed jobs above it ran out of memory")
            )
    if worst is None:
        out.append(("smallest that did not", f"none up to fit.max={maximum}"))
    else:
        out.append(("smallest that did not", f"{key}={worst['value']}: {reason_text(worst)}"))
    if best is not None:
        estimate, peak, device = (
            best.get("estimate_bytes"),
            best.get("peak_memory_bytes"),
            best.get("device_peak_bytes"),
        )
        xla = f"XLA {mib(estimate)} (peak_memory_bytes {mib(peak)})"
        if device is None or device != device:
            said = f"{xla}; the allocator's peak: not reported on {best.get('platform') or 'this backend'}"
        else:
            ratio = f", {float(device) / float(estimate):.2f}x" if estimate else ""
            said = f"{xla}, the allocator's peak {mib(device)} (device_peak_bytes{ratio})"
        out.append(("estimate vs allocator", said))
    out.append(("search", f"{len(rows)} probes in {wall_s:.1f} s, one fresh process each (fit.csv)"))
    return [f"{label:<22} {text}" for label, text in out]
