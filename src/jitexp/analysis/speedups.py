"""Paired speedups over processes: per-process medians, the speedup interval and its columns, the A/B (ab_*)
columns of variants and envs, and whether a job's figures are within its CI target."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from jitexp.analysis.stats import (
    CHANGE_METRICS,
    Unpaired,
    break_even,
    group_medians,
    hierarchical_medians,
    paired_change,
    percentile_ci,
    point_medians,
    settled_break_even,
    signed_rank_interval,
    verdict,
)
from jitexp.records import ModeResult, ProcessResult


def paired_groups(
    results: list[ProcessResult], modes: tuple[str, ...], unpaired: bool = False
) -> tuple[list[str], list[Any]]:
    """The modes every sampled process has, and per process a (rounds x modes) array of samples; with `unpaired`
    (each mode sampled in a process of its own: timing.interleave=processes) an Unpaired of per-mode samples."""
    sampled = [r for r in results if not r.failed]

    def has(r: ProcessResult, m: str) -> bool:
        return m in r.modes and r.modes[m].sampled

    def group(r: ProcessResult) -> np.ndarray | Unpaired:
        samples = [np.asarray(r.modes[m].samples_s) for m in live]
        return Unpaired(samples) if unpaired else np.column_stack(samples)

    live = [m for m in modes if sampled and all(has(r, m) for r in sampled)]
    groups = [group(r) for r in sampled] if live else []
    return live, groups


def ci_met(results: list[ProcessResult], modes: tuple[str, ...], target: float, unpaired: bool = False) -> bool:
    """Whether the figures a job reports are within target: the speedups when modes are paired, else the medians
    (with variants: each variant's, and each variant's steady-state ratio to the baseline)."""
    if any(r.variants for r in results):
        return _variants_ci_met(results, modes, target)
    live, groups = paired_groups(results, modes, unpaired)
    if not groups:
        return True
    if len(live) == 1:
        boot = hierarchical_medians(groups, n_resamples=1000)
        lo, hi = percentile_ci(boot[:, 0])
        return (hi - lo) / 2 / point_medians(groups)[0] <= target
    medians = process_medians(groups)
    within = hierarchical_medians(groups, n_resamples=1000) if len(groups) < 2 else None  # one process: its rounds
    for j in range(1, len(live)):
        speedup, lo, hi = speedup_interval(
            medians[:, 0], medians[:, j], within[:, 0] / within[:, j] if within is not None else None
        )
        if not (hi - lo) / 2 / speedup <= target:
            return False
    return True


def process_medians(groups: list[Any]) -> np.ndarray:
    """Per process (rows) and mode (columns), the median of the process's samples."""
    paired = not any(isinstance(g, Unpaired) for g in groups)
    if paired and len({np.shape(g) for g in groups}) == 1:  # equal rounds everywhere: one median call
        stacked = np.asarray(groups, dtype=float)
        return np.median(stacked.reshape(*stacked.shape[:2], -1), axis=1)
    return np.stack([group_medians(g) for g in groups])


def speedup_interval(
    base: np.ndarray, mode: np.ndarray, ratio_replicates: np.ndarray | None = None
) -> tuple[float, float, float]:
    """(speedup, ci_low, ci_high) of a mode over a baseline measured in the same processes, from each
    process's medians of the two.

    Over processes (two or more): the Hodges-Lehmann estimate of the per-process log(base / mode)
    (the median of their Walsh averages), exponentiated, and the 95% CI that inverts the Wilcoxon
    signed-rank test (stats.signed_rank_interval): coverage at least 95% when the per-process log
    speedups are symmetric about the truth; (0, inf) below 6 processes, where no 95% interval exists.
    One process: its ratio of medians, the CI the percentile interval of `ratio_replicates` (the
    rounds resampled: it describes that process only, ci_scope within_process).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.asarray(base, dtype=float) / np.asarray(mode, dtype=float)
        logs = np.log(ratios)
    finite = np.isfinite(logs)
    logs = logs[finite]
    if logs.size >= 2 or ratio_replicates is None:
        est, lo, hi, _ = signed_rank_interval(logs)
        return math.exp(est), math.exp(lo), math.exp(hi)
    lo, hi = percentile_ci(ratio_replicates)
    # the ratio as its replicates compute it (exp(log(b / m)) can differ from b / m in the last bit, and an
    # interval whose replicates all equal the estimate would then miss it)
    return float(ratios[finite][0]) if logs.size else math.nan, lo, hi


def _variants_ci_met(results: list[ProcessResult], modes: tuple[str, ...], target: float) -> bool:
    names = list(dict.fromkeys(name for r in results for name in r.variants))
    if not all(ci_met([r.of_variant(name) for r in results], modes, target) for name in names):
        return False
    for name in names[1:]:
        for mode in modes:
            ab = ab_columns(names[0], variant_pairs(results, names[0], mode), variant_pairs(results, name, mode))
            if ab.get("ab_steady_n_pairs", 0) < 2:
                continue
            lo, hi, ratio = ab["ab_steady_ratio_ci_low"], ab["ab_steady_ratio_ci_high"], ab["ab_steady_ratio"]
            if not (hi - lo) / 2 / ratio <= target:
                return False
    return True


def variant_pairs(results: list[ProcessResult], name: str, mode: str) -> dict[str, list]:
    """A variant's pair_values, one pair per process (every variant ran in its rounds)."""
    return pair_values([r.variants.get(name, {}).get(mode) for r in results])


def pair_values(measured: list[ModeResult | None]) -> dict[str, list]:
    """ab_columns' per-pair values from one ModeResult per pair (None, or a failed one: None values):
    steady = the median per-call time of its samples, first_call and compile = its cold first call's."""
    out: dict[str, list] = {metric: [] for metric in CHANGE_METRICS}
    for m in measured:
        m = m if m is not None and m.error is None else None
        samples = m.samples_s if m is not None else None
        cold = m.cold if m is not None else None
        out["steady"].append(float(np.median(samples)) if samples is not None and len(samples) else None)
        out["first_call"].append(cold.first_call_s if cold is not None else None)
        out["compile"].append(cold.compile_s if cold is not None else None)
    return out


def paired(baseline: dict, row: dict, interval: tuple[float, float, float]) -> dict:
    """Speedup of row's mode over the baseline's (same processes, same rounds): `speedup_interval`'s
    (speedup, ci_low, ci_high), the verdict from that CI, break-even from the two modes' medians as the verdict
    words it (stats.settled_break_even)."""
    speedup, lo, hi = interval
    verdict_ = verdict(lo, hi)
    calls, ahead = settled_break_even(
        verdict_,
        *break_even(
            baseline.get("first_call_s", math.nan),
            baseline["median_s"],
            row.get("first_call_s", math.nan),
            row["median_s"],
        ),
    )
    return {
        "baseline_mode": baseline["mode"],
        "speedup": speedup,
        "speedup_ci_low": lo,
        "speedup_ci_high": hi,
        "verdict": verdict_,
        "break_even_calls": calls,
        "ahead_until_calls": ahead,
    }


def vs_numpy(interval: tuple[float, float, float]) -> dict:
    """Speedup of a mode over the NumPy twin measured in the same rounds (`speedup_interval`), its CI and verdict."""
    speedup, lo, hi = interval
    return {
        "speedup_vs_numpy": speedup,
        "speedup_vs_numpy_ci_low": lo,
        "speedup_vs_numpy_ci_high": hi,
        "verdict_vs_numpy": verdict(lo, hi),
    }


def ab_columns(baseline: str, base: Mapping[str, list], new: Mapping[str, list]) -> dict[str, Any]:
    """The ab_* columns of a variant's (or env's) row against the baseline's, from aligned per-pair values.

    base[metric][i] and new[metric][i] come from pair i (one process for variants, a process pair
    for envs); a pair with a missing or non-positive value on either side is left out.
    """
    out: dict[str, Any] = {"ab_baseline": baseline}
    for metric in CHANGE_METRICS:
        pairs = [
            (float(a), float(b))
            for a, b in zip(base.get(metric, []), new.get(metric, []))
            if a is not None and b is not None and math.isfinite(a) and math.isfinite(b) and a > 0 and b > 0
        ]
        if not pairs:
            continue
        change = paired_change([a for a, _ in pairs], [b for _, b in pairs])
        out[f"ab_{metric}_n_pairs"] = change.pop("n_pairs")
        out.update({f"ab_{metric}_{key}": value for key, value in change.items()})
    return out


# ---- a time that is not the function's work is not a speedup ----------------------------------------------------

DIFFERS, NO_WORK, NOT_COMPARABLE = "result differs", "no work", "not comparable"
BLAS_STALLED = "numpy's BLAS threads stalled"  # the twin's time is its threads waiting (instability.blas_stall)
NOT_WORK_VERDICTS = (DIFFERS, NO_WORK, NOT_COMPARABLE, BLAS_STALLED)  # verdicts of rows whose time is no speedup


def not_work(row: Mapping[str, Any], against: str = "eager") -> tuple[str, str]:
    """(verdict, why) when a row's time is not the work of the function measured against `against` (its output
    differs from the reference's beyond the dtype's tolerance, cannot be compared with it, or the program ran no
    work at all: XLA removed a computation whose result is not returned, or the function computes nothing from its
    inputs); ("", "") when it is. Read from the row's own columns, so the CSV, the line and the caveats agree."""
    mode = str(row.get("mode"))
    if mode == against:
        return "", ""
    match = _number(row.get(f"matches_{against}"))
    if match is not None and not match:
        rel = _number(row.get(f"max_rel_err_vs_{against}"))
        error = f": relative error {rel:.3g}" if rel is not None else ""
        return DIFFERS, f"{mode} differs from {against}{error}"
    check = row.get(f"check_vs_{against}")
    check = check if isinstance(check, str) else ""  # missing: None, NaN or pd.NA
    if check.startswith("cannot compare"):
        return NOT_COMPARABLE, f"{mode}'s result cannot be compared with {against}'s ({check.partition(': ')[2]})"
    ops, kernels = _number(row.get("eager_ops")), _number(row.get("xla_kernels"))
    if mode != "numpy" and ops == 0:
        return NO_WORK, (
            f"{mode} measured no work: the function computes nothing from its inputs "
            "(0 ops: it returns a constant or an argument)"
        )
    if mode in ("jit", "aot") and kernels == 0:
        return NO_WORK, (
            f"{mode} measured no work: XLA removed the computation whose result is not returned (0 kernels)"
        )
    return "", ""


def _number(value: Any) -> float | None:
    """A present number (a bool as 0 or 1); None for a missing value (None, NaN, pd.NA) or text."""
    if value is None or isinstance(value, str):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number
