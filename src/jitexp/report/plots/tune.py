"""A tune sweep's figures: the objective against the trial number, against each searched key, and the Pareto front
of two objectives (tune_*.png)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis.formatting.values import format_bytes, format_seconds
from jitexp.config.tune import Objective
from jitexp.report.plots.style import DPI, figure, slug
from jitexp.report.shared.tune import PARAM, estimate_of, flag, objectives, searched_keys, short_names
from jitexp.store.csvio import write_atomic

KIND = "tune"


def tune_charts(trials: pd.DataFrame | None, out: Path) -> list[Path]:
    """The study's figures, when the report's folder is a tune sweep (its trials.csv)."""
    if trials is None or trials.empty:
        return []
    objs = objectives(trials)
    if not objs:
        return []
    paths = [_by_trial(trials, objs[0], out)]
    for key, name in zip(searched_keys(trials), short_names(searched_keys(trials))):
        paths.append(_by_key(trials, objs[0], key, name, out))
    if len(objs) == 2:
        paths.append(_front(trials, objs, out))
    return paths


def _points(trials: pd.DataFrame, i: int) -> tuple[list[int], np.ndarray, np.ndarray, np.ndarray]:
    """The rows with an estimate of objective i: positions, values, and the error bars' lengths below and above."""
    keep, values, low, high = [], [], [], []
    for pos, (_, row) in enumerate(trials.iterrows()):
        e = estimate_of(row, i)
        if e is not None:
            keep.append(pos)
            values.append(e.value)
            low.append(max(0.0, e.value - e.low))
            high.append(max(0.0, e.high - e.value))
    return keep, np.array(values), np.array(low), np.array(high)


def _axis(ax, objective: Objective, per_example: bool, which: str = "y") -> None:
    from matplotlib.ticker import FuncFormatter

    unit = format_seconds if objective.is_time else format_bytes
    axis = ax.yaxis if which == "y" else ax.xaxis
    axis.set_major_formatter(FuncFormatter(lambda v, _: unit(v) if v > 0 else "0"))
    label = objective.label + (" per example" if per_example and objective.is_time else "") + " (95% CI)"
    (ax.set_ylabel if which == "y" else ax.set_xlabel)(label)


def _per_example(trials: pd.DataFrame) -> bool:
    return "examples" in trials.columns and bool(trials["examples"].notna().any())


def _marks(ax, trials: pd.DataFrame, xs: list, values: np.ndarray, keep: list[int]) -> None:
    """The best ringed, the tied filled paler."""
    rows = trials.iloc[keep]
    best = [flag(v) for v in rows.get("best", pd.Series([False] * len(rows)))]
    if any(best):
        j = best.index(True)
        ax.plot([xs[j]], [values[j]], "o", ms=12, mfc="none", mec="C3", label="best")


def _by_trial(trials: pd.DataFrame, objective: Objective, out: Path) -> Path:
    fig, ax = figure()
    keep, values, low, high = _points(trials, 0)
    numbers = [int(t) for t in trials["trial"]]
    xs = [numbers[k] for k in keep]
    tied = [flag(trials.iloc[k].get("tied")) for k in keep]
    colours = ["C0" if t else "C7" for t in tied]
    if keep:
        ax.errorbar(xs, values, yerr=[low, high], fmt="none", ecolor="0.6", capsize=3)
        ax.scatter(xs, values, c=colours, zorder=3)
        best = np.minimum.accumulate(values)
        ax.step(xs, best, where="post", color="C3", lw=1, alpha=0.6, label="best so far")
        _marks(ax, trials, xs, values, keep)
    failed = [n for pos, n in enumerate(numbers) if pos not in keep]
    if failed:
        bottom = float(values.min()) if keep else 1.0
        ax.scatter(failed, [bottom] * len(failed), marker="x", c="C3", label="failed (trials.csv says why)")
    from matplotlib.ticker import MaxNLocator

    _axis(ax, objective, _per_example(trials))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("trial")
    ax.set_title(f"{objective.label} by trial (blue: tied with the best, grey: not)", fontsize=10)
    ax.legend(fontsize=8)
    return _save(fig, out, "by-trial")


def _by_key(trials: pd.DataFrame, objective: Objective, key: str, name: str, out: Path) -> Path:
    fig, ax = figure()
    keep, values, low, high = _points(trials, 0)
    raw = trials[f"{PARAM}{key}"].iloc[keep].tolist()
    numeric = all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in raw)
    if numeric:
        xs = [float(v) for v in raw]
        spread = [x for x in xs if x > 0]
        if len(spread) > 1 and min(spread) > 0 and max(spread) / min(spread) >= 16:
            ax.set_xscale("log", base=2)
    else:
        labels = sorted({str(v) for v in raw})
        xs = [float(labels.index(str(v))) for v in raw]
        ax.set_xticks(range(len(labels)), labels)
    if keep:
        ax.errorbar(xs, values, yerr=[low, high], fmt="o", capsize=3)
        _marks(ax, trials, xs, values, keep)
    _axis(ax, objective, _per_example(trials))
    ax.set_xlabel(key)
    ax.set_title(f"{objective.label} against {name} (each point a trial)", fontsize=10)
    return _save(fig, out, name)


def _front(trials: pd.DataFrame, objs: list[Objective], out: Path) -> Path:
    fig, ax = figure()
    on: list[tuple[float, float]] = []
    off: list[tuple[float, float]] = []
    for _, row in trials.iterrows():
        a, b = estimate_of(row, 0), estimate_of(row, 1)
        if a is not None and b is not None:
            (on if flag(row.get("pareto")) else off).append((a.value, b.value))
    if off:
        ax.scatter(*zip(*off), c="C7", label="dominated")
    if on:
        on.sort()
        ax.plot(*zip(*on), "o-", c="C3", label="Pareto front")
    _axis(ax, objs[0], _per_example(trials), "x")
    _axis(ax, objs[1], _per_example(trials), "y")
    ax.set_title(f"{objs[0].label} against {objs[1].label}: the Pareto front", fontsize=10)
    ax.legend(fontsize=8)
    return _save(fig, out, "pareto")


def _save(fig, out: Path, what: str) -> Path:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI)
    return write_atomic(out / f"{slug(KIND, what)}.png", buffer.getvalue())
