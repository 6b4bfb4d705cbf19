"""Scaling over devices (devices_*.png): a case's time per call and its speedup against one device, per mode, over the
device counts a sweep measured (experiment=mesh_scaling), with the ideal linear speedup dotted."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.report.plots import style
from jitexp.report.shared import cases
from jitexp.store.schema import MESH_COLUMNS

SPREAD = (
    "device_count",
    "distributed_processes",
    *MESH_COLUMNS,
)  # what a device sweep changes from job to job: one figure over them


def device_charts(df: pd.DataFrame, out: Path) -> list[Path]:
    """Per case measured at two or more device counts, one of them 1: median time per call (CI band) and the speedup
    against one device (its median over each count's), per mode, on log2 axes; the ideal (speedup = devices) dotted."""
    if "device_count" not in df.columns:
        return []
    rows = cases.ok_rows(df)
    rows = rows[pd.to_numeric(rows["device_count"], errors="coerce").notna()]
    keys = [k for k in cases.case_keys(rows) if k not in SPREAD]
    paths = []
    for values, group in rows.groupby(keys, dropna=False, sort=False) if keys and not rows.empty else []:
        counts = pd.to_numeric(group["device_count"]).astype(int)
        if counts.nunique() < 2 or 1 not in set(counts):
            continue
        ident = dict(zip(keys, cases.as_tuple(values)))
        fig, (time_ax, speed_ax) = style.figure(width=11.0, ncols=2)
        for mode, line in sorted(group.groupby("mode", sort=False), key=lambda m: cases.mode_rank(str(m[0]))):
            line = line.assign(devices=pd.to_numeric(line["device_count"]).astype(int)).sort_values("devices")
            by_count = line.groupby("devices")[["median_s", "ci95_low_s", "ci95_high_s"]].median()
            if 1 not in by_count.index:
                continue
            x = by_count.index.to_numpy(float)
            y = by_count["median_s"].to_numpy(float)
            colour = style.mode_colour(str(mode))
            time_ax.plot(x, y, marker="o", color=colour, label=str(mode))
            low, high = by_count["ci95_low_s"].to_numpy(float), by_count["ci95_high_s"].to_numpy(float)
            time_ax.fill_between(
                x,
                np.where(np.isfinite(low), low, y),
                np.where(np.isfinite(high), high, y),
                color=colour,
                alpha=0.2,
                linewidth=0,
            )
            speed_ax.plot(x, by_count.loc[1, "median_s"] / y, marker="o", color=colour, label=str(mode))
        counts_seen = np.unique(counts.to_numpy(float))
        speed_ax.plot(counts_seen, counts_seen, linestyle=":", color="0.4", label="ideal: speedup = devices")
        speed_ax.axhline(1.0, color="0.7", linewidth=0.8)
        for ax, ylabel in ((time_ax, "median time per call"), (speed_ax, "speedup against 1 device")):
            ax.set_xscale("log", base=2)
            ax.set_yscale("log", base=2 if ax is speed_ax else 10)
            ax.set_xticks(counts_seen, [str(int(c)) for c in counts_seen])
            ax.set_xlabel("devices")
            ax.set_ylabel(ylabel)
            ax.grid(True, which="major", alpha=0.3)
        style.seconds_axis(time_ax.yaxis)
        style.label_minor_log_ticks(time_ax, seconds=True)
        from matplotlib.ticker import FuncFormatter

        speed_ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))
        platform = str(ident.get("platform") or "")
        note = (
            "\nCPU devices share this machine's cores: the speedup is mostly overhead, not parallelism"
            if platform == "cpu"
            else ""
        )
        fig.suptitle("scaling over devices: " + style.title(ident) + note, fontsize=10)
        style.legend_below(fig, ncol=4, title="band: 95% CI", title_fontsize=8)
        paths.append(style.save(fig, out, "devices", ident, df))
    return paths
