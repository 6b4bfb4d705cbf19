"""Memory as a metric beside time (issue 59): the names every gate accepts, the column each reads, and which are exact.

Two kinds, judged two ways:
- XLA's memory analysis of the compiled program (`temp_bytes`, `argument_bytes`, `output_bytes`, `alias_bytes`,
  `peak_memory_bytes`) is deterministic for one program, jax/jaxlib and backend: it changes or it does not, so a
  gate compares the two values exactly (an increase beyond a threshold in bytes or percent fails), with no
  statistics; across jax/jaxlib versions or backends the analysis is not comparable and a gate says so.
- What a worker measured (`device_peak_bytes`, the allocator's peak; `peak_rss_growth_bytes`, the process's RSS
  above its start) varies between processes: it is judged like a time, per-process values with an interval.

A metric's name is the results.csv column's for all but `temp_bytes`, `argument_bytes`, `output_bytes` and
`alias_bytes` (`temp_size_bytes`, ...); the column's own name is accepted too (ALIASES). Pure: no files.
"""

from __future__ import annotations

from collections.abc import Iterable

# metric -> results.csv column (XLA's memory analysis of process 0's compiled program; one value a row)
EXACT = {
    "temp_bytes": "temp_size_bytes",
    "argument_bytes": "argument_size_bytes",
    "output_bytes": "output_size_bytes",
    "alias_bytes": "alias_size_bytes",
    "peak_memory_bytes": "peak_memory_bytes",
}
# metric -> processes.csv column (one value a process; results.csv holds their median)
MEASURED = {"device_peak_bytes": "device_peak_bytes", "peak_rss_growth_bytes": "peak_rss_growth_bytes"}
MEMORY_METRICS = (*EXACT, *MEASURED)
# other spellings accepted wherever a metric is named: the results.csv columns, history's older `peak_memory`
ALIASES = {
    **{column: metric for metric, column in EXACT.items() if column != metric},
    "peak_memory": "peak_memory_bytes",
}
# what makes XLA's analysis comparable between two rows: the same compiler and the same backend
ANALYSIS_SCOPE = ("jax_version", "jaxlib_version", "platform", "device_kind")
DONATION_LOST = "donation lost"  # alias_bytes above 0 in BASE, 0 in NEW: the donated buffers are no longer reused
MORE = "more memory"  # a memory metric that grew beyond the threshold (exact) or significantly beyond it (measured)
LESS = "less memory"


def canonical(metric: str) -> str:
    """A metric's name as the gates use it: `temp_size_bytes` -> `temp_bytes`, `peak_memory` -> `peak_memory_bytes`."""
    return ALIASES.get(metric, metric)


def metric_names(text: str) -> list[str]:
    """A comma-separated --fail-on value as canonical metric names, in order, each once."""
    return list(dict.fromkeys(canonical(m.strip()) for m in text.split(",") if m.strip()))


def memory_of(metrics: Iterable[str]) -> list[str]:
    """The memory metrics among these (canonical names)."""
    return [m for m in (canonical(m) for m in metrics) if m in MEMORY_METRICS]


def parse_threshold(text: str) -> tuple[float, float]:
    """A memory threshold as (bytes, fraction): ``0`` (any increase), ``4096``, ``1MiB``, ``2%``; ValueError
    naming what it cannot read."""
    raw = text.strip()
    units = {"kib": 2**10, "mib": 2**20, "gib": 2**30, "kb": 1e3, "mb": 1e6, "gb": 1e9, "b": 1}
    try:
        if raw.endswith("%"):
            fraction = float(raw[:-1]) / 100
            if fraction < 0:
                raise ValueError
            return 0.0, fraction
        lower = raw.lower()
        for unit, scale in units.items():
            if lower.endswith(unit):
                value = float(lower[: -len(unit)]) * scale
                break
        else:
            value = float(lower)
        if value < 0:
            raise ValueError
        return value, 0.0
    except ValueError:
        raise ValueError(f"{text!r} is no memory threshold: bytes (0, 4096, 1MiB) or a percentage (2%)") from None


def exact_change(base: float, new: float, threshold: tuple[float, float] = (0.0, 0.0)) -> str:
    """An exact metric's verdict: `more` when NEW grew beyond the threshold (bytes, fraction of BASE), `less` when
    it shrank beyond it, `unchanged` when equal, `within the threshold` otherwise."""
    if new == base:
        return "unchanged"
    limit = max(threshold[0], threshold[1] * abs(base))
    if abs(new - base) <= limit:
        return "within the threshold"
    return MORE if new > base else LESS


def bytes_change(metric: str, base: float, new: float) -> str:
    """``temp_bytes 4,194,304 -> 5,242,880 bytes (+1,048,576, +25%)``: the before and after in exact bytes."""
    delta = new - base
    percent = f", {100 * delta / base:+.3g}%" if base else ""
    return f"{metric} {base:,.0f} -> {new:,.0f} bytes ({delta:+,.0f}{percent})"
