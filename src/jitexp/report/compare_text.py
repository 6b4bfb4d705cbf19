"""jitexp-compare's output: the comparison table in words, the notes and gate line under it, the ratio chart."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis.formatting import format_seconds, ratio_cell, ratio_words, verdict_words
from jitexp.analysis.stats import ALPHA, CANNOT_TELL, THRESHOLD
from jitexp.report.compare import BROKEN, MISSING
from jitexp.report.compare_runs import COLUMNS, HOST_COLUMNS, NOTE, Side, case_groups
from jitexp.report.host_drift import host_moved
from jitexp.store.csvio import write_atomic


def render(table: pd.DataFrame, threshold: float = THRESHOLD, alpha: float = ALPHA) -> pd.DataFrame:
    """The table for reading: case, metric, times, NEW against BASE in words (``1.05x slower (95% CI 1.02x-1.10x)``,
    one direction for figure and CI), p, the verdict in words, and a note where there is one."""
    keys = [c for c in table.columns if c not in (*COLUMNS, *HOST_COLUMNS, NOTE)]
    view = table[[*keys, "metric"]].copy()
    view["base"] = table["base_s"].map(format_seconds)
    view["new"] = table["new_s"].map(format_seconds)
    view["new vs base"] = [ratio_cell(*v) for v in zip(table["ratio"], table["ratio_ci_low"], table["ratio_ci_high"])]
    view["p"] = table["p_value"].map(lambda p: f"{p:.3g}" if pd.notna(p) else "-")
    view["verdict"] = [verdict_words(v, p, threshold, alpha) for v, p in zip(table["verdict"], table["p_value"])]
    notes = table[NOTE].fillna("").astype(str) if NOTE in table.columns else pd.Series("", index=table.index)
    if notes.str.len().any():
        view[NOTE] = notes
    return view


def plot(table: pd.DataFrame, keys: list[str], threshold: float, path: Path) -> Path:
    """Ratio per case and metric with its CI, a line at 1 and the threshold band shaded (rows with a ratio)."""
    import io

    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    table = table[np.isfinite(table["ratio"].to_numpy(float))].reset_index(drop=True)
    labels = [
        " ".join(str(r[k]) for k in keys if str(r[k]) not in ("", "nan"))
        + f" [{r['metric']}] {ratio_words(r['ratio'])[0]}"
        for _, r in table.iterrows()
    ]
    fig = Figure(figsize=(8, 0.45 * len(table) + 1.6))
    ax = fig.subplots()
    y = np.arange(len(table))
    ratio = table["ratio"].to_numpy(float)
    err = np.vstack(
        [
            np.clip(ratio - table["ratio_ci_low"].to_numpy(float), 0, None),
            np.clip(table["ratio_ci_high"].to_numpy(float) - ratio, 0, None),
        ]
    )
    colours = table["verdict"].map({"slower": "tab:red", "faster": "tab:green"}).fillna("tab:grey").tolist()
    ax.axvspan(1 / (1 + threshold), 1 + threshold, color="grey", alpha=0.15, label=f"noise threshold ±{threshold:.0%}")
    ax.axvline(1.0, color="grey", linestyle=":", linewidth=1)  # dotted: a reference, not a measurement
    for i in range(len(table)):
        ax.errorbar(ratio[i], y[i], xerr=err[:, i : i + 1], fmt="o", color=colours[i], capsize=3)
    ax.set_yticks(y, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    ax.xaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_formatter(plain)
    ax.set_xlabel("NEW / BASE (time; > 1 is slower), 95% CI")
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    return write_atomic(path, buffer.getvalue())


def no_case_in_common(base: Side, new: Side, keys: Sequence[str]) -> str:
    """The one line for two runs that share no case."""
    count = lambda side: len(case_groups(side.every_row, list(keys)))  # noqa: E731
    return (
        f"no case in common: BASE has {count(base)} case(s), NEW {count(new)}, none alike in "
        f"{', '.join(keys) or 'any identity column'} (--ignore COLUMNS matches on fewer, e.g. --ignore mode)"
    )


def gate_notes(table: pd.DataFrame, alpha: float, excuse: bool | str = False) -> list[str]:
    """What the reader should know below the table: cannot tell, broken, missing, a host that moved too."""
    lines = []
    undecided = table[table["verdict"].str.startswith(CANNOT_TELL)]
    if len(undecided):
        lines.append(
            f"{len(undecided)} comparison(s) cannot tell: too few processes for a significant result at alpha "
            f"{alpha} (use timing=default, 6 processes, or raise timing.processes on both runs), or a metric one "
            "run lacks"
        )
    broken = (table["verdict"] == BROKEN).sum()
    if broken:
        lines.append(
            f"{broken} case(s) broken: ok in BASE, an error in NEW (see note); this fails whatever --fail-on says"
        )
    missing = (table["verdict"] == MISSING).sum()
    if missing:
        lines.append(f"{missing} case(s) of BASE missing from NEW; this fails unless --allow-missing")
    moved = host_moved(table)
    if len(moved) and not excuse:
        lines.append(
            f"{len(moved)} slower steady state(s) where the matching host probe moved the same way (see note): "
            "still a failure; --excuse-host-drift excuses one that moved no further than its probe"
        )
    return ["", *lines] if lines else []


def gate_line(bad: pd.DataFrame) -> str:
    """`gate: pass`, or `gate: fail (...)` counting what fails it."""
    if bad.empty:
        return "gate: pass"
    counts = bad["verdict"].map(lambda v: CANNOT_TELL if str(v).startswith(CANNOT_TELL) else str(v)).value_counts()
    return "gate: fail (" + ", ".join(f"{n} {v}" for v, n in counts.items()) + ")"
