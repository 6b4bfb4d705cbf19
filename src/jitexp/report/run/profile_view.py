"""profile=true in the report: every job's profile.csv, the top events per compiled mode, the traces linked and how to
open them (summary.md and index.html)."""

from __future__ import annotations

import html
import os
from pathlib import Path

import pandas as pd

from jitexp.analysis.formatting.tables import markdown_table
from jitexp.analysis.formatting.values import format_seconds
from jitexp.report.shared import cases
from jitexp.store.folders import PROFILE_CSV, iter_jobs

TOP = 10  # events per mode in the report (profile.csv has them all)
HOW_TO_OPEN = (
    "Open a trace (`profile/<mode>/*.trace.json.gz` in the job's folder) at https://ui.perfetto.dev (Open trace "
    "file) or in chrome://tracing; for TensorBoard's profiler, `pip install xprof` and run `xprof --logdir` on the "
    "job's profile folder (it reads the `.xplane.pb` beside it). The profile ran in a worker of its own after the "
    "timed ones: it never changes a timed number."
)


def load_profile(path: str | os.PathLike, out: str | os.PathLike) -> pd.DataFrame | None:
    """Every job's profile.csv below path, each row with `trace`: its mode's trace file relative to out; None without."""
    path = Path(path)
    root = path.parent if path.is_file() else path
    frames = []
    for job in iter_jobs(root, marker=PROFILE_CSV) if root.is_dir() else ():
        try:
            frame = job.read(PROFILE_CSV)
        except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError):
            continue
        traces: dict[str, str] = {}
        for m in frame["mode"].unique():
            found = sorted((job.path / "profile" / str(m)).glob("*.trace.json.gz"))
            traces[str(m)] = os.path.relpath(found[0], Path(out)) if found else ""
        frame["trace"] = [traces[str(m)] for m in frame["mode"]]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True, sort=False) if frames else None


def profile_table(profile: pd.DataFrame | None) -> pd.DataFrame:
    """The TOP events of each job's compiled mode by time per call (profile.csv's rows are sorted so already)."""
    if profile is None or profile.empty:
        return pd.DataFrame()
    keys = [k for k in ("job_num", "workload", "size", "mode") if k in profile.columns]
    ranked = profile.assign(_rank=profile["mode"].map(cases.mode_rank))
    ranked = ranked.sort_values(
        [*keys[:-1], "_rank", "per_call_s"], ascending=[True] * len(keys) + [False], kind="stable"
    )
    return ranked.groupby(keys, sort=False, dropna=False).head(TOP).drop(columns="_rank").reset_index(drop=True)


def _view(table: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "case": [f"{w} {m} size {s}" for w, m, s in zip(table["workload"], table["mode"], table["size"])],
            "thread": table["thread"],
            "event": table["event"],
            "per call": [f"{n:.3g}" for n in table["per_call"]],
            "mean": [format_seconds(v) for v in table["mean_s"]],
            "time per call": [format_seconds(v) for v in table["per_call_s"]],
            "share of the call": [f"{v:.0%}" for v in table["share"]],
        }
    )


def _traces(table: pd.DataFrame) -> list[tuple[str, str]]:
    pairs = table[["workload", "mode", "size", "trace"]].drop_duplicates()
    return [(f"{w} {m} size {s}", t) for w, m, s, t in pairs.itertuples(index=False) if t]


def profile_markdown(table: pd.DataFrame) -> list[str]:
    """summary.md's Profile section (nothing when the table is empty)."""
    if table.empty:
        return []
    return [
        "## Profile (profile=true)",
        "",
        f"The top {TOP} events of each compiled mode's steady calls by time per call; thread `execute` runs the "
        "program (its outermost events make results.csv's `profile_execute_s`), `host` is Python and dispatch, "
        "`intra-op` XLA's worker threads (inside the execute events). Nested events count in full.",
        "",
        markdown_table(_view(table)),
        "",
        "Traces: " + ", ".join(f"[{case}]({link})" for case, link in _traces(table)),
        "",
        HOW_TO_OPEN,
        "",
        "Full table: [profile.csv](profile.csv)",
        "",
    ]


def profile_html(table: pd.DataFrame) -> list[str]:
    """index.html's Profile section (nothing when the table is empty)."""
    if table.empty:
        return []
    view = _view(table)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in view.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>"
        for row in view.itertuples(index=False)
    )
    links = ", ".join(f'<a href="{html.escape(link)}">{html.escape(case)}</a>' for case, link in _traces(table))
    return [
        "<h2>Profile</h2>",
        f"<p>The top {TOP} events of each compiled mode's steady calls by time per call (profile.csv has all).</p>",
        f'<table class="profile"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>',
        f"<p>Traces: {links}</p>",
        f"<p>{html.escape(HOW_TO_OPEN)}</p>",
    ]
