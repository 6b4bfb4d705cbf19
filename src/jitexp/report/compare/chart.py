"""jitexp-compare's ratio chart (compare.png): NEW / BASE per case and metric with its CI, on a log axis.

Row labels name only the case columns that differ between rows (the rest go in the title) and the ratio as the
table prints it (NEW/BASE, above 1 slower: one direction in the text, the table and the chart), and the x axis
has plain ticks on both sides of 1.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.report.compare.runs import DIRECTION, new_over_base
from jitexp.report.plots import style
from jitexp.store.csvio import write_atomic

COLOURS = {"slower": "tab:red", "faster": "tab:green"}


def compare_chart(table: pd.DataFrame, keys: list[str], threshold: float, path: Path) -> Path:
    """Ratio per case and metric with its CI, a line at 1 and the threshold band shaded (rows with a ratio)."""
    from matplotlib.figure import Figure

    table = table[np.isfinite(table["ratio"].to_numpy(float))].reset_index(drop=True)
    varying, shared = _split_keys(table, keys)
    labels = [_row_label(r, varying) for _, r in table.iterrows()]
    longest = max((len(label) for label in labels), default=10)
    fig = Figure(figsize=(min(6.0 + 0.06 * longest, 16.0), 0.4 * len(table) + 1.8), layout="constrained")
    ax = fig.subplots()
    y = np.arange(len(table))
    ratio = table["ratio"].to_numpy(float)
    low, high = _limits(table, threshold)
    err = np.vstack([_whisker(ratio, table["ratio_ci_low"]), _whisker(ratio, table["ratio_ci_high"])])
    colours = table["verdict"].map(COLOURS).fillna("tab:grey").tolist()
    ax.axvspan(1 / (1 + threshold), 1 + threshold, color="grey", alpha=0.15, label=f"noise threshold ±{threshold:.0%}")
    ax.axvline(1.0, color="grey", linestyle=":", linewidth=1)  # dotted: a reference, not a measurement
    for i in range(len(table)):
        ax.errorbar(ratio[i], y[i], xerr=err[:, i : i + 1], fmt="o", color=colours[i], capsize=3)
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(low, high)
    style.ratio_ticks(ax.xaxis, low, high, unit="")
    ax.grid(True, axis="x", alpha=0.25)
    ax.set_xlabel("NEW / BASE time, 95% CI: below 1 NEW is faster, above 1 slower")
    title = "; ".join([DIRECTION, *([", ".join(shared)] if shared else [])])
    fig.suptitle(style.fit_title(fig, title, fontsize=9), fontsize=9)
    fig.legend(loc="outside lower center", fontsize=8, frameon=False)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    return write_atomic(path, buffer.getvalue())


def _split_keys(table: pd.DataFrame, keys: list[str]) -> tuple[list[str], list[str]]:
    """The keys whose values differ between rows, and ``key=value`` of the ones every row shares (blanks left out)."""
    text = {k: table[k].astype("string").fillna("") for k in keys if k in table.columns}
    varying = [k for k, v in text.items() if v.nunique() > 1]
    shared = [
        f"{k}={v.iloc[0]}" for k, v in text.items() if k not in varying and len(v) and v.iloc[0] not in ("", "nan")
    ]
    return varying, shared


def _row_label(row: pd.Series, varying: list[str]) -> str:
    """``jit size=1000 [steady] 1.04 slower``: the differing keys, the metric, NEW/BASE and the verdict's word
    (``n.s.`` for no significant change)."""
    case = " ".join(_key_text(k, row[k]) for k in varying if str(row[k]) not in ("", "nan", "<NA>"))
    verdict = str(row.get("verdict", ""))
    word = verdict if verdict in COLOURS else "cannot tell" if verdict.startswith("cannot tell") else "n.s."
    return f"{case} [{row['metric']}] {new_over_base(row['ratio'])} {word}".strip()


def _key_text(key: str, value: object) -> str:
    """A mode or workload as it is; any other key as ``key=value`` (a param without its ``param_``)."""
    return str(value) if key in ("workload", "mode") else f"{key.removeprefix('param_')}={value}"


def _whisker(ratio: np.ndarray, bound: pd.Series) -> np.ndarray:
    """How far a CI bound lies from the ratio; 0 (no whisker) for an open bound (0 or inf: one process a side)."""
    bound_values = bound.to_numpy(float)
    known = np.isfinite(bound_values) & (bound_values > 0)
    return np.where(known, np.abs(bound_values - ratio), 0.0)


def _limits(table: pd.DataFrame, threshold: float) -> tuple[float, float]:
    """Log x limits around every ratio, finite CI bound and the threshold band, with a little room."""
    values = np.concatenate(
        [table[c].to_numpy(float) for c in ("ratio", "ratio_ci_low", "ratio_ci_high")]
        + [np.array([1 / (1 + threshold), 1 + threshold])]
    )
    values = values[np.isfinite(values) & (values > 0)]
    return float(values.min()) / 1.08, float(values.max()) * 1.08
