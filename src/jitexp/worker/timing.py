"""The synchronized sampling loop: warm-up, calibration, interleaved rounds (no JAX, no files).

Every function takes plain callables, so the loop is tested with Python functions and the
same code times eager, jit and aot calls.
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from jitexp.analysis.stats import summarize
from jitexp.errors import interrupted

if TYPE_CHECKING:
    from jitexp.config import TimingConfig

Call = Callable[[], Any]
Block = Callable[[Any], Any]

MAX_NUMBER = 1_000_000  # cap on calls per sample


@dataclass
class Rounds:
    """What one process sampled: per mode, per-call seconds of each round's sample."""

    samples_s: dict[str, np.ndarray]
    number: dict[str, int]
    stop_reason: str  # "ci" | "budget" | "max_samples"
    elapsed_s: float
    errors: dict[str, BaseException] = field(default_factory=dict)  # modes that failed while sampled
    ticks: list[Any] = field(default_factory=list)  # tick() before the first round and after each round
    last_output: dict[str, Any] = field(default_factory=dict, repr=False)


@contextmanager
def gc_disabled(collect: bool = True) -> Iterator[None]:
    """Keep the garbage collector from pausing inside timed regions (after a collection, unless `collect` is False:
    the caller collected earlier)."""
    was_enabled = gc.isenabled()
    if collect:
        gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


Loop = Callable[[int], tuple[float, Any]]  # n timed calls -> (seconds per call, the last output)

# Before each sample that follows only the rounds' own bookkeeping (the CPU counters, the stopping rule), this share
# of its calls runs untimed: that work between samples cools the caches a call uses, and a user's loop has none of it
# (issue 61: x + 1 in timing=quick read ~6% above back-to-back samples without it; 2 calls of 114 were enough).
SETTLE = 0.1
# A sample of fewer than 10 calls that lasts under this long gets one untimed call before it all the same: on the TPU
# (a ~550 us round trip a call) timing=quick's one-call samples read x + 1 9-12% above the user's back-to-back loop,
# and samples of ~18 calls with their settle call 2% under it (issue 61, docs/benchmarks.md, 2026-12-06 23:30 UTC).
SHORT_SAMPLE_S = 0.005

# Before each sample that follows another mode's, at least this share of a sample's calls runs untimed (and as
# long as the longest other mode takes in a round: `rewarm_numbers`), so the sample starts from its own steady state.
REWARM = 0.25


class Calibrated(NamedTuple):
    """Calls per sample, and the seconds per call the last calibration try measured."""

    number: int
    per_call_s: float


def plain_loop(call: Call, block: Block) -> Loop:
    """The generic timed loop: each call blocked on before the next (modes.loop_for specialises it per output)."""

    def loop(number: int) -> tuple[float, Any]:
        start = time.perf_counter_ns()
        for _ in range(number - 1):
            block(call())
        out = block(call())
        return (time.perf_counter_ns() - start) / 1e9 / number, out

    return loop


def calibrate(
    loop: Loop, target_s: float, max_number: int = MAX_NUMBER, agree: Callable[[np.ndarray], np.ndarray] | None = None
) -> Calibrated:
    """Calls per sample so that one sample lasts at least target_s (like timeit's autorange). With `agree` (a
    jax.distributed job) every try's verdict and next count are rank 0's, so every rank makes the same calls."""
    number, per_call = 1, 0.0
    for _ in range(8):
        per_call = loop(number)[0]  # the output is not kept while the next try runs
        done = per_call * number >= target_s or number >= max_number
        wanted = target_s / max(per_call, 1e-9)
        following = number if done else min(max_number, max(number * 2, int(math.ceil(wanted * 1.1))))
        if agree is not None:
            verdict, following = (int(v) for v in agree(np.array([int(done), following])))
            done = bool(verdict)
        if done:
            break
        number = following
    return Calibrated(number, per_call)


def warmup_next(left: int, per_call_s: float, time_left_s: float, last: int) -> int:
    """The warm-up's next chunk of calls: twice the last, at most the `left` of its count and what fits the time left
    at the last chunk's `per_call_s` (0: the warm-up ends)."""
    fit = math.floor(time_left_s / max(per_call_s, 1e-9))
    return max(0, min(left, 2 * last, fit))


def warm_up(
    loop: Loop, calls: int, max_time_s: float | None = None, agree: Callable[[np.ndarray], np.ndarray] | None = None
) -> None:
    """`calls` untimed calls; with `max_time_s`, in doubling chunks that stop once the calls have lasted about that
    long (the first call always runs), each chunk timed at the pace of the one before it.

    A fresh executable's first ~80 calls run slow (a ~1 ms XLA:CPU call's calls 3-10 read 1.18x its later ones), and
    where one call fills a sample (timing=quick) calibration makes one call: quick's few samples would be those calls.
    `agree` (a jax.distributed job) makes every rank make rank 0's chunks, as each call is a collective.
    """
    if calls <= 0:
        return
    if max_time_s is None:
        loop(calls)
        return
    done, spent, chunk = 0, 0.0, 1
    while chunk > 0:
        per_call_s = loop(chunk)[0]
        done, spent = done + chunk, spent + per_call_s * chunk
        chunk = warmup_next(calls - done, per_call_s, max_time_s - spent, chunk)
        if agree is not None:
            chunk = int(agree(np.array([chunk]))[0])


def rewarm_calls(number: int) -> int:
    """The fewest untimed calls before a sample that follows another mode's sample."""
    return max(1, int(number * REWARM))


def settle_calls(number: int, per_call_s: float, *, short: bool = True) -> int:
    """The untimed calls before a sample that follows the same mode's: `SETTLE` of its calls. A sample of fewer than
    10 gets none when it lasts `SHORT_SAMPLE_S` or more (each call is long beside the caches' refill, and one more
    would add 10% or more to the rounds), one when shorter (with `short`: a device's round trip idles between samples)."""
    calls = int(number * SETTLE)
    if calls == 0 and short and number * per_call_s < SHORT_SAMPLE_S:
        return 1
    return calls


def rewarm_numbers(calibrated: Mapping[str, Calibrated]) -> dict[str, int]:
    """Untimed calls of each mode before a sample that follows another mode's: as many as last as long as the
    longest other mode takes in a round (its sample and its `rewarm_calls`), `rewarm_calls` at least.

    A fast mode sampled after a slow one runs slow for about as long as it was away: on a 2-vCPU VM a flax
    step's jit sample after 60 ms of eager steps read 1.13-1.4x its back-to-back time with one call of
    re-warm, about 1.0x with 60 ms of it (docs/decisions.md, "Re-warm after a switch, by time"). The longest
    other mode, not all of them: modes of like cost (variants) would otherwise spend most of a round re-warming.
    """
    least = {m: rewarm_calls(c.number) for m, c in calibrated.items()}
    took = {m: (c.number + least[m]) * c.per_call_s for m, c in calibrated.items()}
    counts = {}
    for m, c in calibrated.items():
        away = max((t for o, t in took.items() if o != m), default=0.0)
        wanted = math.ceil(away / c.per_call_s - 1e-6) if c.per_call_s > 0 else 0
        counts[m] = min(MAX_NUMBER, max(least[m], wanted))
    return counts


class PlanTooLong(Exception):
    """The sampling plan cannot finish: `timing.min_samples` rounds at the calibrated times take longer than
    `timing.timeout_s`, after which the worker is killed. `hint` names the key to change (errors.hint_for)."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.hint = hint


def plan_too_long(
    calibrated: Mapping[str, Calibrated], rewarm: Mapping[str, int], policy: TimingConfig
) -> PlanTooLong | None:
    """Why `timing.min_samples` rounds (each one sample of every mode, and its re-warm calls) cannot finish within
    `timing.timeout_s` at the calibrated per-call times, or None when they can. Checked once calibration knows the
    time, before the first round: the process fails in seconds, not at the timeout."""
    round_s = sum((c.number + rewarm.get(m, 0)) * c.per_call_s for m, c in calibrated.items())
    needed = policy.min_samples * round_s
    if round_s <= 0 or needed <= policy.timeout_s:
        return None
    fit = max(1, int(policy.timeout_s / round_s))
    return PlanTooLong(
        f"timing.min_samples={policy.min_samples} rounds of {_seconds(round_s)} each (calibrated) take about "
        f"{_seconds(needed)}, past timing.timeout_s={policy.timeout_s:g} s: the worker would be killed before its "
        "last round",
        f"lower timing.min_samples (about {fit} rounds fit in timing.timeout_s; timing.max_samples with it), or "
        f"raise timing.timeout_s above {math.ceil(needed * 1.5)}",
    )


def _seconds(s: float) -> str:
    return f"{s:.3g} s" if s >= 0.1 else f"{s * 1e3:.3g} ms"


def rotation(modes: list[str], shift: int) -> list[str]:
    """modes rotated left by shift: round r of process p samples in rotation(modes, r + p)."""
    if not modes:
        return []
    k = shift % len(modes)
    return modes[k:] + modes[:k]


def round_order(keys: list[str], r: int) -> list[str]:
    """The order of round r: rotation(keys, r), reversed in every other cycle of len(keys) rounds when there
    are 3+ keys, so each key follows each of its neighbours about as often (plain rotation always puts
    b after a)."""
    order = rotation(keys, r)
    if len(keys) >= 3 and (r // len(keys)) % 2 == 1:
        order.reverse()
    return order


def measure_rounds(
    loops: Mapping[str, Loop],
    policy: TimingConfig,
    *,
    shift: int = 0,
    sampling: Callable[[str], AbstractContextManager] | None = None,
    tick: Callable[[], Any] | None = None,
    agree: Callable[[np.ndarray], np.ndarray] | None = None,
    warming: Callable[[], AbstractContextManager] = nullcontext,
    sampled: Callable[[], AbstractContextManager] = nullcontext,
    quiet_gc: bool = True,
    settle: bool = True,
    settle_short: bool = True,
    collect_first: bool = True,
) -> Rounds:
    """Warm up and calibrate every mode, then sample them in interleaved rounds.

    A round takes one sample of every mode, in an order rotated by one each round (and by
    `shift` per process; see `round_order`), so drift hits all modes alike. A sample that follows
    another mode's is preceded by untimed calls of its own mode (`rewarm_numbers`). Sampling stops after at least
    `min_samples` rounds once every mode's median CI is within `target_rel_ci`, or when the
    process budget `max_time_s` is spent, or at `max_samples` rounds. `sampling(mode)` (a
    compile counter) is entered around each of that mode's samples; `tick()` (the CPU counters)
    is read before the first round and after each. A mode that raises is dropped from later
    rounds and its exception kept in `errors`. `agree(values)` (a jax.distributed job's broadcast from rank 0)
    makes every rank take rank 0's calibration, untimed calls (re-warm, settle) and stop at its round, since each call
    is a collective; there a failing mode raises (the step ends, naming the rank) instead of being dropped on one rank
    only. `warming()` is entered around the warm-up and calibration, `sampled()` around the rounds (the worker's phase
    clock); `quiet_gc` keeps the garbage collector off during the rounds (`gc_disabled`); with `collect_first` its
    collection runs before the warm-up, not between calibration and the first round. With `settle`, a sample that
    follows the same mode's is preceded by `settle_calls` untimed calls (the bookkeeping between samples cools the
    caches); `settle_short` gives a short sample of few calls its one (`settle_calls`).
    """
    modes = list(loops)
    errors: dict[str, BaseException] = {}
    calibrated: dict[str, Calibrated] = {}
    last: dict[str, Any] = {}
    with warming():
        if quiet_gc and collect_first:
            gc.collect()  # here, so that the warm-up and calibration, not the first samples, run after it
        for mode in modes:
            try:
                warm_up(loops[mode], policy.warmup, policy.max_warmup_time_s, agree=agree)
                calibrated[mode] = calibrate(loops[mode], policy.min_sample_time_s, agree=agree)
            except Exception as exc:  # the mode fails; the others are still measured
                if interrupted(exc):
                    raise KeyboardInterrupt from exc
                if agree is not None:
                    raise  # one rank dropping a mode would leave the others in its collectives: the step ends
                errors[mode] = exc
    live = [m for m in modes if m not in errors]
    number = {m: c.number for m, c in calibrated.items()}
    rewarm = rewarm_numbers({m: calibrated[m] for m in live})
    if agree is None and live:  # a jax.distributed job's ranks measure their own per-call times: not judged there
        too_long = plan_too_long({m: calibrated[m] for m in live}, rewarm if len(live) > 1 else {}, policy)
        if too_long is not None:
            errors.update(dict.fromkeys(live, too_long))
            live = []
    settles = {m: settle_calls(number[m], calibrated[m].per_call_s, short=settle_short) if settle else 0 for m in live}
    if agree is not None and live:  # every rank makes rank 0's untimed calls too (a short sample's settle call
        # hangs on the rank's own per-call time, so ranks at the bound would part: a collective mismatch)
        agreed = [int(v) for v in agree(np.array([*(rewarm[m] for m in live), *(settles[m] for m in live)]))]
        rewarm, settles = dict(zip(live, agreed[: len(live)])), dict(zip(live, agreed[len(live) :]))
    samples: dict[str, list[float]] = {m: [] for m in live}
    stop, rounds = "max_samples", 0
    ticks: list[Any] = []
    previous = modes[0] if len(modes) == 1 else None
    with sampled(), gc_disabled(collect=not collect_first) if quiet_gc else nullcontext():
        start = time.perf_counter()
        if tick:
            ticks.append(tick())
        while rounds < policy.max_samples and live:
            for mode in round_order(live, rounds + shift):
                last.pop(mode, None)  # its previous sample's output: a user's loop holds none before a call
                try:
                    with sampling(mode) if sampling else nullcontext():
                        if mode != previous:
                            loops[mode](rewarm[mode])
                            previous = mode
                        elif settles[mode]:
                            loops[mode](settles[mode])
                        per_call, last[mode] = loops[mode](number[mode])
                except Exception as exc:
                    if interrupted(exc):
                        raise KeyboardInterrupt from exc
                    if agree is not None:
                        raise
                    errors[mode] = exc
                    continue
                samples[mode].append(per_call)
            if any(m in errors for m in live):  # a dropped mode no longer sets the others' re-warm
                live = [m for m in live if m not in errors]
                rewarm = rewarm_numbers({m: calibrated[m] for m in live})
            rounds += 1
            if tick:
                ticks.append(tick())
            verdict = ""
            if rounds >= policy.min_samples:
                if all(summarize(samples[m]).rel_ci_halfwidth <= policy.target_rel_ci for m in live):
                    verdict = "ci"
                elif time.perf_counter() - start >= policy.max_time_s:
                    verdict = "budget"
            if agree is not None:  # also every rank's barrier before the next round
                verdict = _STOPS[int(agree(np.array([_STOPS.index(verdict)]))[0])]
            if verdict:
                stop = verdict
                break
        elapsed = time.perf_counter() - start
    kept = {m: np.asarray(s) for m, s in samples.items() if m not in errors}
    return Rounds(kept, {m: number[m] for m in kept}, stop, elapsed, errors, ticks, last)


_STOPS = ("", "ci", "budget")  # a round's verdict as a number to broadcast: go on, or why sampling stops


def dispatch_times(call: Call, block: Block, probes: int) -> np.ndarray:
    """Seconds until each call returns, before blocking on its output (async dispatch shows here)."""
    times = np.empty(probes)
    with gc_disabled():
        for i in range(probes):
            start = time.perf_counter_ns()
            out = call()
            times[i] = (time.perf_counter_ns() - start) / 1e9
            block(out)
            del out  # before the next call, as a user's loop drops it
    return times
