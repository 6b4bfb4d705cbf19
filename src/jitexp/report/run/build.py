"""jitexp-report: load results CSVs, then write the report's tables, plots, summary.md and index.html.

Importing this module loads pandas only; matplotlib is imported when plots are drawn.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from jitexp.report.run.caveats import caveat_summary
from jitexp.report.run.detail_tables import attribution_table, cache_table, memory_table, sequence_table
from jitexp.report.run.markdown import PLOT_KINDS, environment_table, is_kind, summary_markdown
from jitexp.report.run.page import PAGE, page_html
from jitexp.report.run.profile_view import load_profile, profile_table
from jitexp.report.run.tables import ab_table, errors_table, scaling_points, scaling_table, speedup_table
from jitexp.report.run.terminal import format_terminal_report
from jitexp.report.run.text_parts import headline
from jitexp.report.shared.tune import trials_view
from jitexp.store.csvio import BadCsv, write_atomic, write_csv
from jitexp.store.folders import CALLS_CSV, REPORT_DIR, RESULTS_CSV, SweepState, iter_jobs, load_results_state
from jitexp.store.owned import record, refuse_foreign

__all__ = [
    "NoResultsError",
    "attribution_table",
    "errors_table",
    "find_latest",
    "load_calls",
    "main",
    "make_report",
    "scaling_points",
    "scaling_table",
    "speedup_table",
    "write_report",
]

OUTPUTS = Path("outputs")
OLD_PLOT_KINDS = ("bars",)  # names earlier versions wrote: removed with the rest


class NoResultsError(FileNotFoundError):
    """A folder that exists but holds no result rows."""


def find_latest(outputs: str | os.PathLike = OUTPUTS) -> Path | None:
    """The run or sweep folder under outputs whose job results are newest: one under outputs/run or
    outputs/multirun (Hydra's dated folders), or one named by `hydra.run.dir`/`hydra.sweep.dir` right under
    outputs (the tutorials' `outputs/static_args`).

    Job files, not folder times: writing a report or a gathered CSV into an old run touches
    that folder but must not make it "the newest".
    """
    outputs = Path(outputs)
    dated = (outputs / "run", outputs / "multirun")
    named = [f for f in sorted(outputs.iterdir()) if f not in dated] if outputs.is_dir() else []
    candidates = [*(f for base in dated if base.is_dir() for f in sorted(base.iterdir())), *named]
    newest = {}
    for folder in candidates:
        jobs = list(iter_jobs(folder)) if folder.is_dir() else []
        if jobs:
            newest[folder] = (max((job.path / RESULTS_CSV).stat().st_mtime_ns for job in jobs), folder.name)
    return max(newest, key=lambda folder: newest[folder]) if newest else None


def load(path: str | os.PathLike) -> tuple[pd.DataFrame, SweepState | None]:
    """Result rows at path (gathering a sweep when needed) and the job list's view of a sweep folder (None for a
    file); NoResultsError when there are no rows."""
    frame, state = load_results_state(path)
    if frame.empty:
        raise NoResultsError(f"no result rows in {path}")
    return frame, state


def default_out(path: str | os.PathLike) -> Path:
    """Where a report of path goes by default: <DIR>/report (beside a results.csv given as a file)."""
    path = Path(path)
    return (path.parent if path.is_file() else path) / REPORT_DIR


def make_report(path: str | os.PathLike, out: str | os.PathLike | None = None, plots: bool = True) -> Path:
    """Write the report of a job, sweep or results folder; returns the report folder."""
    return _report(path, out, plots).out


@dataclass
class Report:
    """A report written: the rows it read, the sweep's state, its tables and caveats, its folder, the files written."""

    df: pd.DataFrame
    state: SweepState | None
    frames: dict[str, pd.DataFrame]
    caveats: list[str]
    out: Path
    written: list[Path]


def _report(path: str | os.PathLike, out: str | os.PathLike | None = None, plots: bool = True) -> Report:
    """The report of a job, sweep or results folder written into out (default_out(path) when None): what
    make_report and jitexp-report both do."""
    df, state = load(path)
    out = Path(out) if out is not None else default_out(path)
    calls, trials = load_calls(path), load_trials(path)
    frames, caveats = report_tables(df, calls, load_profile(path, out), trials), caveat_summary(df)
    written = write_report(
        df, out, plots=plots, source=path, frames=frames, state=state, calls=calls, trials=trials, caveats=caveats
    )
    return Report(df, state, frames, caveats, out, written)


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
        except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, BadCsv):
            continue
        if not frame.empty:
            frames.append(frame)
    return pd.concat(frames, ignore_index=True, sort=False) if frames else None


TRIALS_CSV = "trials.csv"  # a tune sweep's trials (engine.tune), in the sweep folder
TUNE_TXT = "tune.txt"  # its confirmation's line


def load_trials(path: str | os.PathLike) -> pd.DataFrame | None:
    """A tune sweep's trials.csv (its confirmation line in .attrs["verdict"]), or None when path is no tune sweep."""
    root = Path(path)
    root = root.parent if root.is_file() else root
    if not (root / TRIALS_CSV).is_file():
        return None
    try:
        trials = pd.read_csv(root / TRIALS_CSV)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError):
        return None
    verdict = root / TUNE_TXT
    trials.attrs["verdict"] = verdict.read_text().strip() if verdict.is_file() else ""
    return trials


def report_tables(
    df: pd.DataFrame,
    calls: pd.DataFrame | None = None,
    profile: pd.DataFrame | None = None,
    trials: pd.DataFrame | None = None,
) -> dict[str, pd.DataFrame]:
    """The report's CSV tables by file stem (the optional ones only when they have rows)."""
    points = scaling_points(df)
    frames = {
        "speedup": speedup_table(df),
        "scaling": scaling_table(df, points),
        "scaling_points": points,
        "errors": errors_table(df),
    }
    optional = {
        "ab": ab_table(df),
        "attribution": attribution_table(df),
        "memory": memory_table(df),
        "cache": cache_table(df),
        "sequence": sequence_table(calls, df),
        "profile": profile_table(profile),
        "trials": trials_view(trials) if trials is not None else pd.DataFrame(),
    }
    if trials is not None:
        optional["trials"].attrs["verdict"] = trials.attrs.get("verdict", "")
    return {**frames, **{k: v for k, v in optional.items() if not v.empty}}


OPTIONAL_TABLES = ("ab", "attribution", "memory", "cache", "sequence", "profile", "trials")


def write_report(
    df: pd.DataFrame,
    out: str | os.PathLike,
    *,
    plots: bool = True,
    source: str | os.PathLike | None = None,
    frames: dict[str, pd.DataFrame] | None = None,
    state: SweepState | None = None,
    calls: pd.DataFrame | None = None,
    profile: pd.DataFrame | None = None,
    trials: pd.DataFrame | None = None,
    caveats: list[str] | None = None,
) -> list[Path]:
    """Tables as CSV, plots as PNG, summary.md and index.html (one page) for the rows in df, all into out; returns
    every file written, index.html first. A file of those names (or a PNG an earlier report's would be removed) that
    no jitexp command wrote there is refused (store.owned). `frames` and `caveats`: report_tables and caveat_summary
    of df, where the caller has them already."""
    out = Path(out)
    frames = report_tables(df, calls, profile, trials) if frames is None else frames
    caveats = caveat_summary(df) if caveats is None else caveats
    old_plots = [p.name for p in _old_plots(out)]
    tables = [f"{stem}.csv" for stem in (*frames, *OPTIONAL_TABLES)]
    default = source is not None and out.absolute() == default_out(source).absolute()
    refuse_foreign(out, ["summary.md", PAGE, *tables, *old_plots], "jitexp-report", default=default)
    out.mkdir(parents=True, exist_ok=True)
    written = [write_csv(frame, out / f"{stem}.csv") for stem, frame in frames.items()]
    for stem in OPTIONAL_TABLES:  # an optional table this data lacks must not survive from an earlier report
        if stem not in frames:
            (out / f"{stem}.csv").unlink(missing_ok=True)
    _remove_old_plots(out)
    images: list[Path] = []
    if plots:
        from jitexp.report.plots import make_plots
        from jitexp.report.plots.tune import tune_charts

        images = make_plots(df, frames["speedup"], out, calls=calls) + tune_charts(trials, out)
    text = summary_markdown(df, frames, [p.name for p in images], source=source, state=state, caveats=caveats)
    _write_text(out / "summary.md", text)
    title = f"jitexp report: {Path(source).name}" if source is not None else "jitexp report"
    page = page_html(
        df,
        frames["speedup"],
        _in_kind_order(images),
        environment_table(df),
        title=title,
        headline=headline(df, state),
        caveats=caveats,
        profile=frames.get("profile"),
        ab=frames.get("ab"),
    )
    _write_text(out / PAGE, page)
    files = [out / PAGE, out / "summary.md", *written, *images]
    record(out, [p.name for p in files])
    return files


def _in_kind_order(images: Sequence[Path]) -> list[Path]:
    """The pictures in the report's section order (time, speedup, cold start, growth, compile, devices, roofline,
    calls)."""
    return [p for kind in PLOT_KINDS for p in images if is_kind(p.name, kind)]


def _remove_old_plots(out: Path) -> None:
    """Drop PNGs an earlier report wrote here, so none outlives the data it showed."""
    for old in _old_plots(out):
        old.unlink(missing_ok=True)


def _old_plots(out: Path) -> list[Path]:
    """The PNGs of an earlier report in out, by the names a report gives its figures."""
    found = [p for kind in (*PLOT_KINDS, *OLD_PLOT_KINDS) for p in [*out.glob(f"{kind}_*.png"), out / f"{kind}.png"]]
    return [p for p in found if p.is_file()]


def _write_text(path: Path, text: str) -> None:
    write_atomic(path, text.encode("utf-8"))


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
        report = _report(path, args.out or None, plots=not args.no_plots)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, BadCsv) as exc:
        print(f"jitexp-report: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    if not args.quiet:
        print(f"jitexp-report: {path}\n")
        print(format_terminal_report(report.df, report.frames, report.state, caveats=report.caveats))
        print()
        print(f"wrote {len(report.written)} files in {report.out}/:")
        for kind, names in _files_by_kind(report.written):
            print(
                textwrap.fill(
                    ", ".join(names),
                    max(60, shutil.get_terminal_size((100, 24)).columns),
                    initial_indent=f"  {kind}: ",
                    subsequent_indent="    ",
                )
            )
    print(f"report: {report.out / 'summary.md'}")
    print(f"page: {report.out / PAGE}")
    return 0


def _files_by_kind(paths: Sequence[Path]) -> list[tuple[str, list[str]]]:
    """Written files grouped for the terminal: summary, tables, then each kind of plot."""
    groups: dict[str, list[str]] = {}
    for p in paths:
        kind = {".csv": "tables", ".md": "summary", ".html": "page"}.get(p.suffix) or p.stem.split("_", 1)[0]
        groups.setdefault(kind, []).append(p.name)
    return list(groups.items())


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


if __name__ == "__main__":
    raise SystemExit(main())
