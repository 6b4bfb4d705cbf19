"""jitexp-report: speedup, scaling and error tables, plots and summary.md from results CSVs.

Importing this module loads pandas only; matplotlib is imported when plots are drawn.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import shutil
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from jitexp.analysis.formatting import markdown_table, text_table
from jitexp.report.page import PAGE, page_html
from jitexp.report.tables import (
    ATTRIBUTION_TERMINAL,
    ATTRIBUTION_VIEW,
    CACHE_VIEW,
    MEMORY_VIEW,
    SCALING_COLUMNS,
    VARIANT,
    ab_table,
    ab_view,
    attribution_details,
    attribution_table,
    cache_table,
    caveat_summary,
    compact_view,
    error_rows,
    errors_table,
    memory_table,
    ok_rows,
    params_labels,
    rows_table,
    scaling_points,
    scaling_table,
    sequence_table,
    sequence_view,
    speedup_table,
    speedup_view,
)
from jitexp.store.results import (
    CALLS_CSV,
    REPORT_DIR,
    RESULTS_CSV,
    SweepState,
    gather_state,
    iter_jobs,
    load_results,
    write_atomic,
    write_csv,
)

__all__ = [
    "NoResultsError",
    "attribution_table",
    "errors_table",
    "find_latest",
    "format_sweep_summary",
    "load_calls",
    "main",
    "make_report",
    "scaling_points",
    "scaling_table",
    "speedup_table",
    "write_report",
]

OUTPUTS = Path("outputs")
PLOT_KINDS = {
    "time": "Time per call (median, 95% CI)",
    "speedup": "Speedup (95% CI, verdict)",
    "coldstart": "Cold start: trace, lower, compile, execute",
    "scaling": "Growth: time vs size",
    "compile": "Compile cost vs size",
    "calls": "Per-call latency: first calls and the retrace probe",
}
OLD_PLOT_KINDS = ("bars",)  # names earlier versions wrote: removed with the rest
ENV_COLUMNS = [
    "jax_version",
    "jaxlib_version",
    "python_version",
    "hostname",
    "cpu_model",
    "cpu_count",
    "platform",
    "device_kind",
    "x64",
    "cpu_async_dispatch",
    "xla_flags",
]
AB_NOTE = (
    "variants (or envs) against the first (jobs with `variants` or `envs`): the change in time, in words, "
    "paired per process for variants (every variant ran in the same processes' rounds) and per process pair for "
    "envs (processes alternating old, new, new, old); the Hodges-Lehmann estimate over pairs with the 95% CI "
    "that inverts the Wilcoxon signed-rank test giving p; 'cannot tell' when so few pairs can never reach "
    "significance"
)
SPEEDUP_NOTE = (
    "speedup = baseline median / compiled median. paired: both modes measured together in the same "
    "fresh processes, interleaved round by round; the 95% CI resamples whole processes (pairs kept "
    "together) and the verdict says whether it excludes 1. unpaired: modes from separate jobs; the CI "
    "is conservative (baseline CI low / compiled CI high .. baseline CI high / compiled CI low). "
    "compile overhead = compiled first call - compiled median. pays off: where the cumulative cost lines "
    "(cold first call, then the median per call) cross; break_even_calls and ahead_until_calls in "
    "speedup.csv. Repeated rows of one case and mode (seeds) are combined: median of medians, union of CIs."
)


class NoResultsError(FileNotFoundError):
    """A folder that exists but holds no result rows."""


def find_latest(outputs: str | os.PathLike = OUTPUTS) -> Path | None:
    """The run or sweep folder under outputs/run and outputs/multirun whose job results are newest.

    Job files, not folder times: writing a report or a gathered CSV into an old run touches
    that folder but must not make it "the newest".
    """
    outputs = Path(outputs)
    newest = {}
    for base in (outputs / "run", outputs / "multirun"):
        for folder in base.iterdir() if base.is_dir() else ():
            jobs = list(iter_jobs(folder)) if folder.is_dir() else []
            if jobs:
                newest[folder] = (max((job.path / RESULTS_CSV).stat().st_mtime_ns for job in jobs), folder.name)
    return max(newest, key=lambda folder: newest[folder]) if newest else None


def load(path: str | os.PathLike) -> pd.DataFrame:
    """Result rows at path (gathering a sweep when needed); NoResultsError when there are none."""
    frame = load_results(path)
    if frame.empty:
        raise NoResultsError(f"no result rows in {path}")
    return frame


def default_out(path: str | os.PathLike) -> Path:
    """Where a report of path goes by default: <DIR>/report (beside a results.csv given as a file)."""
    path = Path(path)
    return (path.parent if path.is_file() else path) / REPORT_DIR


def make_report(path: str | os.PathLike, out: str | os.PathLike | None = None, plots: bool = True) -> Path:
    """Write the report of a job, sweep or results folder; returns the report folder."""
    return write_report(
        load(path),
        out if out is not None else default_out(path),
        plots=plots,
        source=path,
        state=sweep_state(path),
        calls=load_calls(path),
    )


def load_calls(path: str | os.PathLike) -> pd.DataFrame | None:
    """Every job's calls.csv below path (or beside a results.csv given as a file), or None when there is none."""
    path = Path(path)
    root = path.parent if path.is_file() else path
    if not root.is_dir():
        return None
    frames = []
    for job in iter_jobs(root, marker=CALLS_CSV):
        try:
            frame = job.calls
        except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError):
            continue
        if not frame.empty:
            frames.append(frame)
    return pd.concat(frames, ignore_index=True, sort=False) if frames else None


def report_tables(df: pd.DataFrame, calls: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """The report's CSV tables by file stem (the optional ones only when they have rows)."""
    frames = {
        "speedup": speedup_table(df),
        "scaling": scaling_table(df),
        "scaling_points": scaling_points(df),
        "errors": errors_table(df),
    }
    optional = {
        "ab": ab_table(df),
        "attribution": attribution_table(df),
        "memory": memory_table(df),
        "cache": cache_table(df),
        "sequence": sequence_table(calls, df),
    }
    return {**frames, **{k: v for k, v in optional.items() if not v.empty}}


OPTIONAL_TABLES = ("ab", "attribution", "memory", "cache", "sequence")


def write_report(
    df: pd.DataFrame,
    out: str | os.PathLike,
    *,
    plots: bool = True,
    source: str | os.PathLike | None = None,
    frames: dict[str, pd.DataFrame] | None = None,
    state: SweepState | None = None,
    calls: pd.DataFrame | None = None,
) -> Path:
    """Tables as CSV, plots as PNG, summary.md and index.html (one page) for the rows in df, all into out."""
    return _write_report(df, out, plots=plots, source=source, frames=frames, state=state, calls=calls)[0]


def _write_report(
    df: pd.DataFrame,
    out: str | os.PathLike,
    *,
    plots: bool = True,
    source: str | os.PathLike | None = None,
    frames: dict[str, pd.DataFrame] | None = None,
    state: SweepState | None = None,
    calls: pd.DataFrame | None = None,
) -> tuple[Path, list[Path]]:
    """write_report, also returning every file written (index.html, summary.md, CSVs, PNGs)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    frames = report_tables(df, calls) if frames is None else frames
    written = [write_csv(frame, out / f"{stem}.csv") for stem, frame in frames.items()]
    for stem in OPTIONAL_TABLES:  # an optional table this data lacks must not survive from an earlier report
        if stem not in frames:
            (out / f"{stem}.csv").unlink(missing_ok=True)
    _remove_old_plots(out)
    images: list[Path] = []
    if plots:
        from jitexp.report.plots import make_plots

        images = make_plots(df, frames["speedup"], out, calls=calls)
    text = summary_markdown(df, frames, [p.name for p in images], source=source, state=state)
    _write_text(out / "summary.md", text)
    title = f"jitexp report: {Path(source).name}" if source is not None else "jitexp report"
    page = page_html(
        df,
        frames["speedup"],
        _in_kind_order(images),
        environment_table(df),
        title=title,
        headline=headline(df, state),
        caveats=caveat_summary(df),
    )
    _write_text(out / PAGE, page)
    return out, [out / PAGE, out / "summary.md", *written, *images]


def _in_kind_order(images: Sequence[Path]) -> list[Path]:
    """The pictures in the report's section order (time, speedup, cold start, growth, compile, calls)."""
    return [p for kind in PLOT_KINDS for p in images if p.name.startswith(kind + "_")]


def _remove_old_plots(out: Path) -> None:
    """Drop PNGs an earlier report wrote here, so none outlives the data it showed."""
    for kind in (*PLOT_KINDS, *OLD_PLOT_KINDS):
        for old in out.glob(f"{kind}_*.png"):
            old.unlink(missing_ok=True)


def _write_text(path: Path, text: str) -> None:
    write_atomic(path, text.encode("utf-8"))


# ---- text ------------------------------------------------------------------------------


def headline(df: pd.DataFrame, state: SweepState | None = None) -> str:
    """One line: how many rows, how many ok and failed, from how many jobs (and which never finished)."""
    n_ok, n_err = len(ok_rows(df)), len(error_rows(df))
    if state is not None and state.n_jobs is not None:
        return f"{state.describe(len(df))} ({n_ok} ok, {n_err} error)"
    jobs = df["job_num"].nunique() if "job_num" in df.columns else 0
    text = f"{len(df)} rows ({n_ok} ok, {n_err} error)"
    return text + (f" from {jobs} job{'s' if jobs != 1 else ''}" if jobs else "")


def sweep_state(path: str | os.PathLike) -> SweepState | None:
    """The job list's view of a sweep folder (None for a file or a folder without one)."""
    path = Path(path)
    return gather_state(path, write=False)[1] if path.is_dir() else None


def format_sweep_summary(df: pd.DataFrame, state: SweepState | None = None) -> str:
    """One-screen terminal summary: every row, then the speedup table when eager and compiled rows exist."""
    parts = (
        [f"jitexp: {headline(df, state)}", text_table(rows_table(df))]
        if len(df)
        else [f"jitexp: {headline(df, state)}"]
    )
    notes = caveat_summary(df)
    if notes:
        width = max(60, shutil.get_terminal_size((100, 24)).columns)
        parts += ["", "caveats:"] + [
            textwrap.fill(n, width, initial_indent="  ", subsequent_indent="    ") for n in notes
        ]
    speedup = speedup_table(df)
    if not speedup.empty:
        parts += [
            "",
            "speedup against the baseline mode (paired: measured together in one job; "
            "pays_off: where the cumulative costs cross)",
            text_table(speedup_view(speedup)),
        ]
    return "\n".join(parts)


WHY_NOTE = (
    "why: eager_ops primitives dispatched one by one against the xla_kernels jit runs (xla_fusions of them "
    "fused); eager_bytes is the memory traffic before fusion (every op reads and writes its arrays), "
    "bytes_accessed after it (XLA's cost analysis); traffic_cut = their ratio"
)


def format_terminal_report(df: pd.DataFrame, frames: dict[str, pd.DataFrame], state: SweepState | None = None) -> str:
    """What jitexp-report prints: the sweep summary, why, memory, disk cache, retrace probe, scaling, errors."""
    width = max(60, shutil.get_terminal_size((100, 24)).columns)
    parts = [format_sweep_summary(df, state)]
    if "ab" in frames:
        parts += ["", textwrap.fill(AB_NOTE, width), text_table(ab_view(frames["ab"]))]
    if "attribution" in frames:
        parts += [
            "",
            textwrap.fill(WHY_NOTE, width),
            text_table(compact_view(frames["attribution"], ATTRIBUTION_TERMINAL)),
        ]
        parts += [
            textwrap.fill(line, width, initial_indent="  ", subsequent_indent="    ")
            for line in attribution_details(frames["attribution"])
        ]
    if "memory" in frames:
        parts += [
            "",
            "memory (peak_rss_growth_bytes: the worker's RSS high-water mark above its start, shared by "
            "the modes it ran; the rest from XLA's memory analysis)",
            text_table(compact_view(frames["memory"], MEMORY_VIEW), width=60),
        ]
    if "cache" in frames:
        parts += [
            "",
            "persistent compilation cache (cold: a fresh worker writes it; warm: a second one reads it)",
            text_table(compact_view(frames["cache"], CACHE_VIEW)),
        ]
    if "sequence" in frames:
        parts += [
            "",
            "retrace probe (calls.csv, probe=sequence: which calls compiled and JAX's reason)",
            text_table(sequence_view(frames["sequence"]), width=60),
        ]
    if not frames["scaling"].empty:
        parts += [
            "",
            "scaling (growth exponent of median time over size)",
            text_table(_scaling_view(frames["scaling"])),
        ]
    if not frames["errors"].empty:
        parts += ["", "errors", text_table(_errors_view(frames["errors"]), width=60)]
    return "\n".join(parts)


def summary_markdown(
    df: pd.DataFrame,
    frames: dict[str, pd.DataFrame],
    images: Sequence[str],
    source: str | os.PathLike | None = None,
    state: SweepState | None = None,
) -> str:
    """summary.md: headline, tables, caveats, image links (relative) and the run's environment."""
    title = f"# jitexp report: `{Path(source).name}`" if source is not None else "# jitexp report"
    lines = [title, "", f"Source: `{source}`" if source is not None else "", "", headline(df, state) + ".", ""]
    if state is not None and state.missing:
        lines += [
            "## Jobs that never finished",
            "",
            "| job | overrides |",
            "|---:|---|",
            *[f"| {num} | `{ov}` |" for num, ov in state.missing],
            "",
        ]
    lines += ["## Results", "", markdown_table(rows_table(df)), ""]
    if not frames["speedup"].empty:
        lines += [
            "## Speedup vs eager",
            "",
            SPEEDUP_NOTE,
            "",
            markdown_table(speedup_view(frames["speedup"])),
            "",
            "Full table: [speedup.csv](speedup.csv)",
            "",
        ]
    if "ab" in frames:
        lines += [
            "## Variants against the baseline",
            "",
            AB_NOTE + ".",
            "",
            markdown_table(ab_view(frames["ab"])),
            "",
            "Full table: [ab.csv](ab.csv)",
            "",
        ]
    if "attribution" in frames:
        lines += [
            "## Why",
            "",
            "`"
            + WHY_NOTE.replace("why: ", "", 1).replace(" primitives", "` primitives", 1)
            + '. The explanation\'s rules and thresholds: docs/measurement.md, "Why: attribution".',
            "",
            markdown_table(compact_view(frames["attribution"], ATTRIBUTION_VIEW)),
            "",
            *[f"- {line}" for line in attribution_details(frames["attribution"])],
            "",
            "Full table: [attribution.csv](attribution.csv)",
            "",
        ]
    if "memory" in frames:
        lines += [
            "## Memory",
            "",
            markdown_table(compact_view(frames["memory"], MEMORY_VIEW)),
            "",
            "Full table: [memory.csv](memory.csv)",
            "",
        ]
    if "cache" in frames:
        lines += [
            "## Persistent compilation cache",
            "",
            "cold: a fresh worker compiles and writes the cache; warm: a second fresh worker reads it "
            "(trace and lower still run).",
            "",
            markdown_table(compact_view(frames["cache"], CACHE_VIEW)),
            "",
            "Full table: [cache.csv](cache.csv)",
            "",
        ]
    if "sequence" in frames:
        lines += [
            "## Retrace probe",
            "",
            "calls.csv rows with probe=sequence: argument variants called in one fresh worker; "
            "compiled = the call traced and compiled, with JAX's reason.",
            "",
            markdown_table(sequence_view(frames["sequence"])),
            "",
            "Full table: [sequence.csv](sequence.csv)",
            "",
        ]
    if not frames["scaling"].empty:
        lines += [
            "## Scaling",
            "",
            "growth exponent = least-squares slope of log(median) over log(size) (1: linear, 2: quadratic).",
            "",
            markdown_table(_scaling_view(frames["scaling"])),
            "",
            "Per size: [scaling_points.csv](scaling_points.csv)",
            "",
        ]
    if not frames["errors"].empty:
        lines += [
            "## Errors",
            "",
            markdown_table(_errors_view(frames["errors"])),
            "",
            "Full table: [errors.csv](errors.csv)",
            "",
        ]
    notes = caveat_summary(df)
    if notes:
        lines += ["## Caveats", "", *[f"- {n}" for n in notes], ""]
    lines += _image_sections(images)
    lines += ["## Environment", "", markdown_table(environment_table(df)), ""]
    return "\n".join(lines)


def _image_sections(images: Sequence[str]) -> list[str]:
    lines = []
    for kind, heading in PLOT_KINDS.items():
        names = [n for n in images if n.startswith(kind + "_")]
        if names:
            lines += [f"## {heading}", ""]
            lines += [f"![{Path(n).stem}]({n})\n" for n in names]
    return lines


def environment_table(df: pd.DataFrame) -> pd.DataFrame:
    """The run's environment as (item, value): distinct values per column, load and time ranges."""
    items = [(col, _distinct(df[col])) for col in ENV_COLUMNS if col in df.columns]
    for col in ("load_avg_start", "load_avg_end"):
        if col in df.columns:
            items.append((col, _range(pd.to_numeric(df[col], errors="coerce"), "{:.2f}")))
    if "timestamp" in df.columns:
        stamps = df["timestamp"].dropna().astype(str)
        items.append(("timestamp", f"{stamps.min()} .. {stamps.max()}" if len(stamps) else "-"))
    items.append(("report_generated", _dt.datetime.now().astimezone().isoformat(timespec="seconds")))
    return pd.DataFrame(items, columns=["item", "value"]).astype("string")


def _distinct(series: pd.Series, limit: int = 4) -> str:
    values = [str(v) for v in pd.unique(series.dropna()) if str(v) != ""]
    if not values:
        return "-"
    if len(values) > limit:
        return f"{len(values)} values: " + ", ".join(values[:limit]) + ", ..."
    return ", ".join(values)


def _range(series: pd.Series, fmt: str) -> str:
    series = series.dropna()
    if series.empty:
        return "-"
    low, high = series.min(), series.max()
    return fmt.format(low) if low == high else f"{fmt.format(low)} .. {fmt.format(high)}"


def _scaling_view(scaling: pd.DataFrame) -> pd.DataFrame:
    view = scaling.reindex(columns=["workload"]).copy()
    view["params"] = params_labels(scaling)
    if not view["params"].astype(bool).any():
        view = view.drop(columns="params")
    cols = ["dtype", *(c for c in SCALING_COLUMNS if c != VARIANT)]  # the scaling columns but static_argnums
    return pd.concat([view, scaling.reindex(columns=cols)], axis=1)


def _errors_view(errors: pd.DataFrame) -> pd.DataFrame:
    view = errors.reindex(columns=["workload", "mode", "size", "dtype"]).copy()
    view["params"] = params_labels(errors)
    if not view["params"].astype(bool).any():
        view = view.drop(columns="params")
    if "static_argnums" in errors.columns and errors["static_argnums"].notna().any():
        view["static_argnums"] = errors["static_argnums"]
    cols = ["error_phase", "error_type", "error_message", "hint"]
    return pd.concat([view, errors.reindex(columns=cols)], axis=1)


# ---- command line ----------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The jitexp-report argument parser."""
    parser = argparse.ArgumentParser(
        prog="jitexp-report",
        description="Speedup, break-even, scaling and error tables plus plots from jitexp results.",
    )
    parser.add_argument(
        "dir",
        nargs="?",
        metavar="DIR",
        help="a run or sweep folder, any folder holding results.csv files, or a "
        "results.csv (default: the newest run or sweep under ./outputs)",
    )
    parser.add_argument("--out", metavar="DIR", help="where to write the report (default: DIR/report)")
    parser.add_argument("--no-plots", action="store_true", help="tables and summary.md only")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only the report path")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: write the report and print its tables; 2 with a one-line error when there is nothing to report."""
    args = build_parser().parse_args(argv)
    try:
        path = Path(args.dir) if args.dir else find_latest()
        if path is None:
            raise NoResultsError(
                f"no DIR given and no run or sweep with results under {OUTPUTS.resolve()}/(run|multirun)/"
            )
        df = load(path)
        state = sweep_state(path)
        out = Path(args.out) if args.out else default_out(path)
        calls = load_calls(path)
        frames = report_tables(df, calls)
        _, written = _write_report(
            df, out, plots=not args.no_plots, source=path, frames=frames, state=state, calls=calls
        )
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        print(f"jitexp-report: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(f"jitexp-report: {path}\n")
        print(format_terminal_report(df, frames, state))
        print()
        print(f"wrote {len(written)} files in {out}/:")
        for kind, names in _files_by_kind(written):
            print(
                textwrap.fill(
                    ", ".join(names),
                    max(60, shutil.get_terminal_size((100, 24)).columns),
                    initial_indent=f"  {kind}: ",
                    subsequent_indent="    ",
                )
            )
    print(f"report: {out / 'summary.md'}")
    print(f"page: {out / PAGE}")
    return 0


def _files_by_kind(paths: Sequence[Path]) -> list[tuple[str, list[str]]]:
    """Written files grouped for the terminal: summary, tables, then each kind of plot."""
    groups: dict[str, list[str]] = {}
    for p in paths:
        kind = {".csv": "tables", ".md": "summary", ".html": "page"}.get(p.suffix) or p.name.split("_", 1)[0]
        groups.setdefault(kind, []).append(p.name)
    return list(groups.items())


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


if __name__ == "__main__":
    raise SystemExit(main())
