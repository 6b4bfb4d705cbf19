"""Per-call latency (calls_*.png): the first calls from cold and the retrace probe, compiled calls ringed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from jitexp.analysis.formatting.phrases import is_static, params_text
from jitexp.analysis.formatting.values import cell_text, is_missing, is_true, plain, short_name
from jitexp.report.plots import style
from jitexp.report.shared import cases


def calls_charts(calls: pd.DataFrame | None, df: pd.DataFrame, out: Path) -> list[Path]:
    """Per workload: per-call latency of the cold probe (first calls, one line per job) and of the
    sequence probe (argument variants such as ``n=2 (static)``), compiled calls ringed in red and
    labelled with JAX's reason; failed calls as x."""
    paths: list[Path] = []
    if calls is None or calls.empty or "call_s" not in calls.columns:
        return paths
    frame = cases.join_jobs(calls, df)
    params = {c[len("param_") :] for c in cases.param_columns(df)}
    frame = frame.assign(probe=cases.text_column(frame, "probe").replace("", "cold"))
    for workload, rows in frame.groupby("workload", sort=False):
        probes = [p for p in ("cold", "sequence") if (rows["probe"] == p).any()]
        fig, axes = style.figure(width=6.0 * len(probes) + 0.5, ncols=len(probes))
        for ax, probe in zip(axes, probes):
            _calls_panel(ax, rows[rows["probe"] == probe], probe, params)
        dtypes = [d for d in pd.unique(cases.text_column(rows, "dtype")) if d]
        fig.suptitle(f"per-call latency: {workload}" + (f" | {', '.join(dtypes)}" if dtypes else ""), fontsize=10)
        paths.append(style.save(fig, out, "calls", {"workload": workload}, df))
    return paths


def _calls_panel(ax, rows: pd.DataFrame, probe: str, params: set) -> None:
    jobs = rows.groupby(["job_num", "mode"], dropna=False, sort=True)
    ticks: dict[int, str] = {}
    annotated: set = set()
    failed: dict[tuple, list] = {}  # (mode, static_argnums, error class) -> [(job, calls)]
    colour_i = 0
    for (job, mode), line in jobs:
        line = line.sort_values("call")
        r = line.iloc[0]
        static = cell_text(r.get(cases.STATIC_ARGNUMS))
        if probe == "cold":
            label = f"{mode}, {params_text(r, static_mark=True) or 'static_argnums=' + (static or '-')}"
        else:
            names = sorted({v.split("=", 1)[0] for v in cases.text_column(line, "variant") if "=" in v} & params)
            mark = f"{', '.join(names)} {'static' if is_static(static) else 'traced'}: " if names else ""
            label = f"{mode}, {mark}static_argnums={static or '-'}"
        job_text = f"job {plain(job)}" if not is_missing(job) else ""
        ok = line[~cases.has_value(line, "status", "error")]
        err = line[cases.has_value(line, "status", "error")]
        if probe == "sequence":
            for c, v in zip(line["call"], cases.text_column(line, "variant")):
                ticks.setdefault(int(c), v)
        if len(err):
            key = (label, short_name(err["error_type"].iloc[0]))
            failed.setdefault(key, []).append((job_text, err["call"].to_numpy(float)))
        if ok.empty:
            continue
        colour = f"C{colour_i % 10}"
        colour_i += 1
        x = ok["call"].to_numpy(float)
        y = pd.to_numeric(ok["call_s"], errors="coerce").to_numpy(float)
        ax.plot(x, y, marker="o", color=colour, label=f"{label} ({job_text})" if job_text else label, markersize=5)
        compiled = _compiled_mask(ok)
        ax.plot(
            x[compiled],
            y[compiled],
            linestyle="none",
            marker="o",
            markersize=12,
            markerfacecolor="none",
            markeredgecolor="red",
            markeredgewidth=1.5,
        )
        for xi, yi, (_, c) in zip(x[compiled], y[compiled], ok[compiled].iterrows()):
            reason = cell_text(c.get("miss_reason"))
            if reason and (xi, reason) not in annotated:
                annotated.add((xi, reason))
                ax.annotate(
                    textwrap_short(reason),
                    (xi, yi),
                    textcoords="offset points",
                    xytext=(10, 10),
                    fontsize=7,
                    color="firebrick",
                    va="bottom",
                    ha="left",
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
                )
    for k, ((label, kind), jobs_) in enumerate(failed.items()):
        xs = np.unique(np.concatenate([c for _, c in jobs_]))
        jobs_text = ", ".join(j for j, _ in jobs_ if j)
        ax.plot(
            xs,
            [0.06 + 0.07 * k] * len(xs),
            linestyle="none",
            marker="x",
            markersize=8,
            color=f"C{(colour_i + k) % 10}",
            transform=ax.get_xaxis_transform(),
            label=f"{label} ({jobs_text}): every call failed, {kind}",
        )
    ax.set_yscale("log")
    style.seconds_axis(ax.yaxis)
    ax.set_xlabel("call" + (" and its argument variant" if probe == "sequence" else ""))
    ax.set_ylabel("time of the call (until its output is ready)")
    calls = sorted({int(c) for c in rows["call"].dropna()})
    if probe == "sequence" and ticks:
        ax.set_xticks(sorted(ticks), [f"{c}\n{ticks[c]}" for c in sorted(ticks)], fontsize=8)
    elif calls:
        ax.set_xticks(calls)
    if calls:
        ax.set_xlim(calls[0] - 0.4, calls[-1] + 0.9)
    values = pd.to_numeric(rows["call_s"], errors="coerce")
    values = values[values > 0]
    if len(values):
        ax.set_ylim(values.min() / (5.0 if failed else 1.5), values.max() * 6)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    title = (
        "first calls from cold, one fresh process per job"
        if probe == "cold"
        else "sequence probe: argument variants in one fresh process"
    )
    ax.set_title(title + "\nred ring: the call traced and compiled (label: JAX's reason)", fontsize=9)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1, frameon=False)


def _compiled_mask(rows: pd.DataFrame) -> np.ndarray:
    compiled = cases.get_column(rows, "compiled").map(is_true).astype(bool).to_numpy()
    compiles = pd.to_numeric(cases.get_column(rows, "compiles"), errors="coerce").fillna(0).to_numpy(float) > 0
    return compiled | compiles


def textwrap_short(text: str, width: int = 28) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width)[:3])
