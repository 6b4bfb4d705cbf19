"""The synchronized sampling loop: warm-up, calibration, stopping rule (no Hydra, no files)."""

from __future__ import annotations

import gc
import math
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Iterator

import numpy as np

from .stats import summarize

if TYPE_CHECKING:
    from .config import TimingConfig as Policy

Call = Callable[[], Any]
Block = Callable[[Any], Any]


MAX_NUMBER = 1_000_000  # cap on calls per sample


@dataclass
class Measurement:
    """Per-call seconds of each sample, the calls per sample, and why sampling stopped."""

    samples_s: np.ndarray
    number: int
    stop_reason: str  # "ci" | "budget" | "max_samples"
    elapsed_s: float
    last_output: Any = field(default=None, repr=False)


def default_block(out: Any) -> Any:
    import jax

    return jax.block_until_ready(out)


@contextmanager
def gc_disabled() -> Iterator[None]:
    """Keep the garbage collector from pausing inside timed regions."""
    was_enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def time_calls(call: Call, number: int, block: Block) -> tuple[float, Any]:
    """Seconds per call over `number` calls, each blocked on before the next; and the last output."""
    out = None
    start = time.perf_counter_ns()
    for _ in range(number):
        out = block(call())
    return (time.perf_counter_ns() - start) / 1e9 / number, out


def time_one(call: Call, block: Block) -> tuple[float, Any]:
    """One synchronized call: seconds until the whole output is ready."""
    return time_calls(call, 1, block)


def calibrate(call: Call, block: Block, target_s: float, max_number: int = MAX_NUMBER) -> int:
    """Calls per sample so that one sample lasts at least target_s (like timeit's autorange)."""
    number = 1
    for _ in range(8):
        per_call, _ = time_calls(call, number, block)
        if per_call * number >= target_s or number >= max_number:
            break
        wanted = target_s / max(per_call, 1e-9)
        number = min(max_number, max(number * 2, int(math.ceil(wanted * 1.1))))
    return number


def measure(call: Call, policy: "Policy", block: Block = default_block,
            sampling: ContextManager | None = None) -> Measurement:
    """Warm up, calibrate, then sample until the median's CI is tight, the budget is spent or max_samples.

    At least min_samples samples are always taken; the budget counts from the first sample.
    `sampling` (e.g. a compile counter) is entered around the sampling loop only.
    """
    out = None
    for _ in range(policy.warmup):
        out = block(call())
    number = calibrate(call, block, policy.min_sample_time_s)
    samples: list[float] = []
    stop = "max_samples"
    with sampling or nullcontext(), gc_disabled():
        start = time.perf_counter()
        while len(samples) < policy.max_samples:
            per_call, out = time_calls(call, number, block)
            samples.append(per_call)
            if len(samples) < policy.min_samples:
                continue
            if summarize(samples).rel_ci_halfwidth <= policy.target_rel_ci:
                stop = "ci"
                break
            if time.perf_counter() - start >= policy.max_time_s:
                stop = "budget"
                break
        elapsed = time.perf_counter() - start
    return Measurement(np.asarray(samples), number, stop, elapsed, out)


def dispatch_times(call: Call, block: Block, probes: int) -> np.ndarray:
    """Seconds until each call returns, before blocking on its output (async dispatch shows here)."""
    times = np.empty(probes)
    with gc_disabled():
        for i in range(probes):
            start = time.perf_counter_ns()
            out = call()
            times[i] = (time.perf_counter_ns() - start) / 1e9
            block(out)
    return times
