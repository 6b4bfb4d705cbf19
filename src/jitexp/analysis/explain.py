"""Why a compiled mode is as fast as it is, in plain words, from a job's measured rows (pure logic).

The rules, in order (docs/measurement.md has the reasoning):
- dispatch-bound: eager_ops x op_dispatch_s covers at least DISPATCH_SHARE of eager's time, and so does
  what jit saved (eager's time less jit's, plus jit's one dispatch): jit replaces those dispatches with one call.
  Eager's kernels run while it dispatches the next ops, so a call whose kernels take as long as its dispatches
  reads as all dispatch yet gains nothing from jit: the dispatch counted is at most what jit saved.
- Python-bound: what is left of eager's time after its ops' dispatch and its kernels (the compiled
  mode's whole time, scaled up by the memory traffic fusion saved) is at least PYTHON_SHARE of it:
  eager runs Python on every call that jit ran once, at trace time (autodiff traced again, pytree
  and optimizer code).
- one big kernel either way: the measured speedup (its CI's low end, when there is one, so that
  noise around the threshold does not flip the label) is at most SMALL_GAIN, and eager dispatches at
  most BIG_KERNEL_OPS ops or the work runs at COMPUTE_INTENSITY flops per byte or more: the time
  is in kernels eager runs as well. A row jit made clearly faster is never labelled so: its gain
  came from somewhere, and the rules below name where.
  Where the compiled mode runs more than BIG_KERNEL_OPS kernels and more than eager dispatched ops (eager's ops
  run several kernels each: a nested jit, a lax loop), the same rule reads `same kernels either way`: "one big
  kernel" beside "1 eager op, 4 kernels" would contradict its own counts (issue 57).
- fusion-bound: fusion cuts the memory traffic from eager_bytes to bytes_accessed by
  FUSION_TRAFFIC times or more.
- mixed: none of these dominates.
A row whose figures are missing gets `unexplained`, and the detail says which figure and why.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from jitexp.analysis.formatting.values import format_bytes, format_seconds

DISPATCH_SHARE = 0.5
BIG_KERNEL_OPS = 2
COMPUTE_INTENSITY = 10.0  # flops per byte: above it a CPU core or GPU is compute-, not memory-bound
SMALL_GAIN = 1.25  # at most this speedup is "little to gain"
FUSION_TRAFFIC = 2.0
PYTHON_SHARE = 0.5


def explain(eager: Mapping[str, Any], row: Mapping[str, Any]) -> dict:
    """explanation and explanation_detail for a compiled row against its job's eager row."""
    ops, per_op = _num(row, "eager_ops"), _num(row, "op_dispatch_s")
    eager_s, own_s = _num(eager, "median_s"), _num(row, "median_s")
    missing = _missing(row, {"eager_ops": ops, "op_dispatch_s": per_op, "eager median_s": eager_s, "median_s": own_s})
    if missing or eager_s <= 0:
        return {"explanation": "unexplained", "explanation_detail": missing or "eager's median is not positive"}
    kernels, fusions = _num(row, "xla_kernels"), _num(row, "xla_fusions")
    eager_bytes, fused_bytes = _num(row, "eager_bytes"), _num(row, "bytes_accessed")
    intensity, flops = _num(row, "arithmetic_intensity"), _num(row, "flops")
    counted_s = min(ops * per_op, max(eager_s - own_s + per_op, 0.0))  # at most what jit saved
    share = counted_s / eager_s
    overlap = _saved(ops * per_op, counted_s, eager_s - own_s)
    paired = _num(row, "speedup")  # the row's own figure (over processes) where it has one, as its table prints
    speedup = paired if not math.isnan(paired) else eager_s / own_s if own_s > 0 else math.inf
    low = _num(row, "speedup_ci_low")
    gain = min(speedup, low) if not math.isnan(low) else speedup  # the gain the measurement can vouch for
    traffic = eager_bytes / fused_bytes if fused_bytes > 0 else math.nan
    kernels_s = own_s * max(traffic, 1.0) if not math.isnan(traffic) else math.nan  # unknown: no Python rule
    small = gain <= SMALL_GAIN and (ops <= BIG_KERNEL_OPS or intensity >= COMPUTE_INTENSITY)
    runs = f"{row['mode']} runs {_count(kernels, 'kernel')} in {format_seconds(own_s)}"
    if share >= DISPATCH_SHARE:
        label = "dispatch-bound"
        detail = (
            f"eager dispatches {ops:.0f} ops x {format_seconds(per_op)} = {format_seconds(ops * per_op)}, "
            f"{share:.0%} of its {format_seconds(eager_s)}{overlap}; {runs}"
        )
    elif (python_s := eager_s - ops * per_op - kernels_s) >= PYTHON_SHARE * eager_s:
        label = "Python-bound"
        detail = (
            f"eager spends {format_seconds(python_s)}, {python_s / eager_s:.0%} of its {format_seconds(eager_s)}, "
            f"beyond its {ops:.0f} ops' dispatch ({format_seconds(ops * per_op)}) and kernels (at most "
            f"{format_seconds(kernels_s)}: {row['mode']}'s {format_seconds(own_s)} x {_ratio(max(traffic, 1.0))} "
            f"the memory traffic): Python run on every eager call (autodiff traced "
            f"again, pytree and optimizer code) that {row['mode']} ran once, when it traced"
        )
        compiles = _num(eager, "compiles_during_timing")
        if compiles > 0:  # eager lax.scan / cond with a new body function each call: traced and compiled each time
            detail += (
                f"; eager compiled {compiles:.0f} times while timed (a lax loop's body traced and compiled per call)"
            )
    elif small and kernels > max(ops, BIG_KERNEL_OPS):
        label = "same kernels either way"  # not "one big kernel" beside "1 eager op, 4 kernels" (issue 57)
        detail = (
            f"eager's {_count(ops, 'op')} run{'s' if ops == 1 else ''} {row['mode']}'s {_count(kernels, 'kernel')} "
            f"too (a nested jit, a lax loop, a primitive XLA splits): the time is in those kernels; dispatch is "
            f"{share:.0%} of eager's {format_seconds(eager_s)}{overlap}, and {row['mode']} gains {speedup:.2f}x"
        )
    elif small:
        label = "one big kernel either way"
        detail = (
            f"{_flops(flops)} at {intensity:.0f} flops/byte: the time is in kernels eager runs too "
            f"({_count(ops, 'eager op')}, {_count(kernels, 'kernel')}); dispatch is {share:.0%} of eager's "
            f"{format_seconds(eager_s)}{overlap}, and {row['mode']} gains {speedup:.2f}x"
        )
    elif traffic >= FUSION_TRAFFIC:
        label = "fusion-bound"
        detail = (
            f"eager moves {format_bytes(eager_bytes)} through memory in {ops:.0f} ops; {row['mode']}'s "
            f"{_count(kernels, 'kernel')} ({fusions:.0f} fused) move {format_bytes(fused_bytes)}, {traffic:.0f}x less"
        )
    else:
        label = "mixed"
        detail = (
            f"dispatch {share:.0%} of eager's {format_seconds(eager_s)}{overlap}; "
            f"memory traffic {_ratio(traffic)} less under "
            f"{row['mode']}; {_flops(flops)} at {intensity:.1f} flops/byte; {speedup:.2f}x"
        )
    return {"explanation": label, "explanation_detail": detail}


def _saved(dispatch_s: float, counted_s: float, saved_s: float) -> str:
    """Where the dispatch counted is capped by what jit saved, the dispatches' time and the saving."""
    if counted_s >= dispatch_s:
        return ""
    saving = f"saved {format_seconds(saved_s)}" if saved_s > 0 else "saved nothing"
    return f" (its ops' {format_seconds(dispatch_s)} of dispatch overlap its kernels: jit {saving})"


def _missing(row: Mapping[str, Any], figures: Mapping[str, float]) -> str:
    """Why a figure the rules need is missing ("" when none is)."""
    absent = [name for name, value in figures.items() if math.isnan(value)]
    if not absent:
        return ""
    reason = row.get("attribution_error") if "eager_ops" in absent else None
    return f"no {', '.join(absent)}" + (f": {reason}" if isinstance(reason, str) and reason else "")


def _num(row: Mapping[str, Any], key: str) -> float:
    try:
        return float(row.get(key))  # type: ignore[arg-type]  # None raises TypeError too, caught below
    except (TypeError, ValueError):
        return math.nan


def _count(n: float, noun: str) -> str:
    return f"? {noun}s" if math.isnan(n) else f"{n:.0f} {noun}" + ("" if n == 1 else "s")


def _ratio(r: float) -> str:
    return "?x" if math.isnan(r) else f"{r:.1f}x"


def _flops(f: float) -> str:
    if math.isnan(f):
        return "? flop"
    for scale, unit in ((1e9, "GFLOP"), (1e6, "MFLOP"), (1e3, "kFLOP")):
        if f >= scale:
            return f"{f / scale:.3g} {unit}"
    return f"{f:.0f} FLOP"
