"""jitexp-compare BASE NEW: did a change make things faster or slower, per case, with CIs and a test.

Two runs or sweeps are matched case by case. Per case and metric (steady-state time, cold first
call, compile) it reports NEW/BASE with a bootstrap CI that resamples whole processes of each run
independently, a Mann-Whitney U p-value over the per-process values (scipy), and a verdict that
needs both significance and a change beyond a noise threshold. Exit code 1 when a case got
significantly slower beyond the threshold, for CI.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .host import PROBE_COLUMNS
from .results import RESULTS_CSV, iter_jobs, write_atomic, write_csv
from .stats import (
    ALPHA,
    CANNOT_TELL,
    CHANGE_METRICS,
    THRESHOLD,
    change_verdict,
    hierarchical_medians,
    independent_p,
    percentile_ci,
    point_medians,
    undetectable,
)
from .tables import replaced_processes

CASE = ["workload", "size", "dtype", "mode", "variant", "env", "static_argnums", "device_kind"]
ENVIRONMENT = [
    "jax_version",
    "jaxlib_version",
    "xla_flags",
    "cpu_model",
    "hostname",
    "platform",
    "x64",
    "cpu_async_dispatch",
    "python_version",
]
COLUMNS = [
    "metric",
    "base_s",
    "new_s",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "p_value",
    "verdict",
    "n_base",
    "n_new",
]


@dataclass
class Side:
    """One run's ok rows (with a `_job` folder key) and per-process values per row."""

    rows: pd.DataFrame
    values: dict[
        tuple[str, str, str, str], dict[str, list]
    ]  # (job folder, variant or "", env or "", mode) -> metric -> values per process (steady: arrays)


def load_side(path: str | Path) -> Side:
    """Rows and per-process samples of a run or sweep folder (or a results.csv beside its job folders)."""
    path = Path(path)
    root = path.parent if path.is_file() else path
    if not root.is_dir():
        raise FileNotFoundError(f"no results at {path}")
    frames, values = [], {}
    for job in iter_jobs(root):
        rows = job.results
        rows = rows[rows.get("status", pd.Series("ok", index=rows.index)) == "ok"].assign(_job=str(job.path))
        frames.append(rows)
        samples, procs = job.samples, job.processes
        for variant, env, mode in _variant_modes(rows):
            entry: dict[str, list] = {"steady": [], "first_call": [], "compile": []}
            if not samples.empty:
                for _, group in samples[_of(samples, variant, env, mode)].groupby("process"):
                    entry["steady"].append(group["per_call_s"].to_numpy(float))
            if not procs.empty:
                mine = procs[_of(procs, variant, env, mode)]
                entry["first_call"] = mine["first_call_s"].dropna().tolist()
                entry["compile"] = mine["compile_s"].dropna().tolist()
            values[(str(job.path), variant, env, mode)] = entry
    if not frames:
        raise FileNotFoundError(f"no {RESULTS_CSV} in {path} or below it")
    return Side(pd.concat(frames, ignore_index=True), values)


def _variant_modes(rows: pd.DataFrame) -> list[tuple[str, str, str]]:
    """The (variant, env, mode) of a job's rows; variant and env are "" in a job without variants or envs."""
    triples = zip(_text(rows, "variant"), _text(rows, "env"), rows["mode"])
    return list(dict.fromkeys((v, e, str(m)) for v, e, m in triples if not pd.isna(m)))


def _text(rows: pd.DataFrame, col: str) -> pd.Series:
    """A column as text, "" where missing or absent."""
    return rows[col].fillna("").astype(str) if col in rows.columns else pd.Series("", index=rows.index)


def _of(frame: pd.DataFrame, variant: str, env: str, mode: str) -> pd.Series:
    """Which rows of a samples or processes frame belong to this variant (or env) and mode."""
    mine = frame["mode"] == mode
    for col, value in (("variant", variant), ("env", env)):
        if value and col in frame.columns:
            mine &= frame[col] == value
    return mine


def case_columns(rows: pd.DataFrame, ignore: Sequence[str] = ()) -> list[str]:
    """The identity columns a case is matched on: workload, params, size, dtype, mode, variant, statics, device."""
    params = sorted(c for c in rows.columns if c.startswith("param_"))
    keys = CASE[:1] + params + CASE[1:]
    return [k for k in keys if k in rows.columns and k not in ignore]


def compare(
    base: str | Path | Side,
    new: str | Path | Side,
    *,
    threshold: float = THRESHOLD,
    alpha: float = ALPHA,
    ignore: Sequence[str] = (),
) -> pd.DataFrame:
    """One row per matched case and metric: NEW/BASE ratio with CI, p-value, verdict (see module doc)."""
    base = base if isinstance(base, Side) else load_side(base)
    new = new if isinstance(new, Side) else load_side(new)
    keys = [k for k in case_columns(base.rows, ignore) if k in case_columns(new.rows, ignore)]
    records = []
    new_groups = {_key(v): g for v, g in new.rows.groupby(keys, dropna=False, sort=False)}
    for value, base_rows in base.rows.groupby(keys, dropna=False, sort=False):
        new_rows = new_groups.get(_key(value))
        if new_rows is None:
            continue
        ident = dict(zip(keys, _key(value)))
        for metric in CHANGE_METRICS:
            a, b = _pool(base, base_rows, metric), _pool(new, new_rows, metric)
            if not a or not b:
                continue
            records.append({**ident, **metric_row(metric, a, b, threshold, alpha)})
    table = pd.DataFrame.from_records(records, columns=keys + COLUMNS)
    if table.empty:
        return table
    table["verdict"] = within_drift(table, host_drift(base, new))
    order = table["ratio"].map(lambda r: -abs(math.log(r)) if r and r > 0 else 0.0)
    return table.assign(_order=order).sort_values("_order", kind="stable").drop(columns="_order").reset_index(drop=True)


def unmatched(base: Side, new: Side, ignore: Sequence[str] = ()) -> list[str]:
    """Cases found on one side only, as text."""
    keys = [k for k in case_columns(base.rows, ignore) if k in case_columns(new.rows, ignore)]
    a = {_key(v) for v, _ in base.rows.groupby(keys, dropna=False, sort=False)}
    b = {_key(v) for v, _ in new.rows.groupby(keys, dropna=False, sort=False)}
    label = lambda k: " ".join(f"{c}={v}" for c, v in zip(keys, k))  # noqa: E731
    return [f"BASE only: {label(k)}" for k in sorted(a - b, key=str)] + [
        f"NEW only: {label(k)}" for k in sorted(b - a, key=str)
    ]


def metric_row(metric: str, base: list, new: list, threshold: float, alpha: float) -> dict:
    """Ratio NEW/BASE of the medians of per-process values, its CI, Mann-Whitney p and the verdict
    ('cannot tell' when so few processes could never reach significance at alpha)."""
    steady = metric == "steady"
    groups_a = [np.asarray(v, float).reshape(-1, 1) for v in base] if steady else [[v] for v in base]
    groups_b = [np.asarray(v, float).reshape(-1, 1) for v in new] if steady else [[v] for v in new]
    boot_a = hierarchical_medians(groups_a, seed=1)[:, 0]
    boot_b = hierarchical_medians(groups_b, seed=2)[:, 0]
    per_a = [float(np.median(v)) for v in base] if steady else list(map(float, base))
    per_b = [float(np.median(v)) for v in new] if steady else list(map(float, new))
    med_a, med_b = float(point_medians(groups_a)[0]), float(point_medians(groups_b)[0])
    ratio = med_b / med_a if med_a > 0 else math.nan
    lo, hi = percentile_ci(boot_b / boot_a)
    p = independent_p(per_a, per_b)
    return {
        "metric": metric,
        "base_s": med_a,
        "new_s": med_b,
        "ratio": ratio,
        "ratio_ci_low": lo,
        "ratio_ci_high": hi,
        "p_value": p,
        "verdict": change_verdict(ratio, p, threshold, alpha, cannot=undetectable(len(per_a), len(per_b), alpha)),
        "n_base": len(per_a),
        "n_new": len(per_b),
    }


WITHIN_DRIFT = "within host drift"


def host_drift(base: Side, new: Side) -> dict[str, float]:
    """Per host probe both runs recorded, NEW/BASE of its median over their rows: how far the host itself moved."""
    out = {}
    for col in PROBE_COLUMNS:
        if col in base.rows.columns and col in new.rows.columns:
            a, b = base.rows[col].dropna(), new.rows[col].dropna()
            if len(a) and len(b) and a.median() > 0:
                out[col] = float(b.median() / a.median())
    return out


def within_drift(table: pd.DataFrame, drift: dict[str, float]) -> pd.Series:
    """Verdicts, with a steady-state 'faster'/'slower' turned into 'within host drift' where a host probe moved
    the same way at least as far (the probes time steady-state kernels: the cold call and compile keep theirs)."""
    slower_host = max([r for r in drift.values() if r > 1], default=1.0)
    faster_host = min([r for r in drift.values() if 0 < r < 1], default=1.0)
    ratio = table["ratio"]
    excused = (table["metric"] == "steady") & (
        ((table["verdict"] == "slower") & (ratio <= slower_host))
        | ((table["verdict"] == "faster") & (ratio >= faster_host))
    )
    return table["verdict"].where(~excused, WITHIN_DRIFT)


def drift_lines(base: Side, new: Side) -> list[str]:
    """What the two runs' host looked like: CPU steal of each, and the host probe's ratio between them."""
    lines = []
    for name, side in (("BASE", base), ("NEW", new)):
        rows = side.rows
        if "steal_median" in rows.columns and rows["steal_median"].notna().any():
            lines.append(
                f"steal {name}: median {rows['steal_median'].median():.1%}, max {rows['steal_max'].max():.1%}"
                f" ({replaced_processes(rows)} processes replaced)"
            )
        else:
            lines.append(f"steal {name}: not recorded")
    drift = host_drift(base, new)
    if drift:
        parts = ", ".join(f"{col.removeprefix('host_probe_').removesuffix('_s')} {r:.3f}x" for col, r in drift.items())
        lines.append(
            f"host drift (probe NEW/BASE): {parts}; a steady state that moved the same way no further is "
            f"'{WITHIN_DRIFT}'"
        )
    else:
        lines.append("host drift: no host probe on both sides (runs from before jitexp recorded it)")
    return lines


def environment_diff(base: Side, new: Side) -> list[str]:
    """`jax_version: 0.10.2 -> 0.10.3` for every environment column that differs between the runs."""
    lines = []
    for col in ENVIRONMENT:
        a = _values(base.rows, col)
        b = _values(new.rows, col)
        if a != b:
            lines.append(f"{col}: {', '.join(a) or '-'} -> {', '.join(b) or '-'}")
    return lines


def across_machines(base: Side, new: Side) -> bool:
    return any(_values(base.rows, c) != _values(new.rows, c) for c in ("hostname", "cpu_model", "device_kind"))


def _values(rows: pd.DataFrame, col: str) -> list[str]:
    if col not in rows.columns:
        return []
    return sorted({str(v) for v in rows[col].dropna()})


def _pool(side: Side, rows: pd.DataFrame, metric: str) -> list:
    out: list = []
    for job, variant, env, mode in zip(rows["_job"], _text(rows, "variant"), _text(rows, "env"), rows["mode"]):
        out.extend(side.values.get((job, variant, env, str(mode)), {}).get(metric, []))
    return out


def _key(value) -> tuple:
    value = value if isinstance(value, tuple) else (value,)
    return tuple("" if pd.isna(v) else str(v) for v in value)


# ---- output ---------------------------------------------------------------------------------


def render(table: pd.DataFrame) -> pd.DataFrame:
    """The table for reading: case, metric, times, ratio with CI, p, verdict."""
    from .formatting import format_seconds

    view = table.drop(
        columns=[
            c for c in ("base_s", "new_s", "ratio", "ratio_ci_low", "ratio_ci_high", "p_value") if c in table.columns
        ]
    ).copy()
    view.insert(len(view.columns) - 3, "base", table["base_s"].map(format_seconds))
    view.insert(len(view.columns) - 3, "new", table["new_s"].map(format_seconds))
    view.insert(
        len(view.columns) - 3,
        "new/base",
        [
            f"{r:.3f}x ({lo:.3f}-{hi:.3f})"
            for r, lo, hi in zip(table["ratio"], table["ratio_ci_low"], table["ratio_ci_high"])
        ],
    )
    view.insert(len(view.columns) - 3, "p", table["p_value"].map(lambda p: f"{p:.3g}"))
    return view.drop(columns=["n_base", "n_new"])


def plot(table: pd.DataFrame, keys: list[str], threshold: float, path: Path) -> Path:
    """Ratio per case and metric with its CI, a line at 1 and the threshold band shaded."""
    import io

    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    labels = [
        " ".join(str(r[k]) for k in keys if str(r[k]) not in ("", "nan")) + f" [{r['metric']}]"
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jitexp-compare", description=__doc__.splitlines()[0])
    parser.add_argument("base", metavar="BASE", help="the reference run or sweep folder")
    parser.add_argument("new", metavar="NEW", help="the run or sweep folder to judge")
    parser.add_argument(
        "--threshold",
        type=float,
        default=THRESHOLD,
        help=f"smallest change that counts, as a fraction (default {THRESHOLD})",
    )
    parser.add_argument("--alpha", type=float, default=ALPHA, help=f"significance level (default {ALPHA})")
    parser.add_argument(
        "--fail-on",
        default=",".join(CHANGE_METRICS),
        help="metrics whose significant slowdown (or a 'cannot tell') exits 1 (default: steady,first_call,compile)",
    )
    parser.add_argument(
        "--allow-undetectable",
        action="store_true",
        help="a 'cannot tell' (too few processes to reach significance) does not fail --fail-on",
    )
    parser.add_argument("--ignore", default="", help="identity columns not to match on, e.g. mode (comma-separated)")
    parser.add_argument(
        "--out", metavar="DIR", help="where compare.csv, compare.md, compare.png go (default NEW/compare)"
    )
    parser.add_argument("--no-plot", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: the table, files, and exit 1 on a significant slowdown in a --fail-on metric."""
    args = build_parser().parse_args(argv)
    fail_on = [m.strip() for m in args.fail_on.split(",") if m.strip()]
    bad = [m for m in fail_on if m not in CHANGE_METRICS]
    if bad or not 0 < args.threshold < 1 or not 0 < args.alpha < 1:
        what = (
            f"--fail-on={bad[0]!r} is invalid; valid choices: {', '.join(CHANGE_METRICS)}"
            if bad
            else "--threshold and --alpha must lie in (0, 1)"
        )
        print(f"jitexp-compare: error: {what}", file=sys.stderr)
        return 2
    ignore = [c.strip() for c in args.ignore.split(",") if c.strip()]
    try:
        base, new = load_side(args.base), load_side(args.new)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        print(f"jitexp-compare: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    table = compare(base, new, threshold=args.threshold, alpha=args.alpha, ignore=ignore)
    keys = [k for k in case_columns(base.rows, ignore) if k in table.columns]
    env, missing = environment_diff(base, new), unmatched(base, new, ignore)
    scope = "across machines" if across_machines(base, new) else "on one machine"
    head = [
        f"jitexp-compare: BASE {args.base}  NEW {args.new}  ({scope}; threshold {args.threshold:.0%}, "
        f"alpha {args.alpha})",
        *(f"  differs: {line}" for line in env),
        *(f"  {line}" for line in drift_lines(base, new)),
    ]
    from .formatting import markdown_table, text_table

    lines = [*head, ""]
    lines += [text_table(render(table), width=40)] if not table.empty else ["no case in common"]
    lines += ["", *missing] if missing else []
    undecided = table[table["verdict"].str.startswith(CANNOT_TELL)] if not table.empty else table
    if len(undecided):
        lines += [
            "",
            f"{len(undecided)} comparison(s) cannot tell: too few processes for a significant result at "
            f"alpha {args.alpha}; use timing=default (6 processes) or raise timing.processes on both runs",
        ]
    print("\n".join(lines))
    out = (
        Path(args.out) if args.out else Path(args.new if Path(args.new).is_dir() else Path(args.new).parent) / "compare"
    )
    write_csv(table, out / "compare.csv")
    md = [
        "# jitexp-compare",
        "",
        f"BASE `{args.base}`, NEW `{args.new}` ({scope}).",
        "",
        *(f"- differs: {line}" for line in env),
        *(f"- {line}" for line in drift_lines(base, new)),
        "",
        markdown_table(render(table)) if not table.empty else "no case in common",
        "",
        *(f"- {m}" for m in missing),
    ]
    if not args.no_plot and not table.empty:
        plot(table, keys, args.threshold, out / "compare.png")
        md += ["", "![compare](compare.png)"]
    write_atomic(out / "compare.md", ("\n".join(md) + "\n").encode())
    print(f"\ncompare: {out / 'compare.md'}")
    return 1 if len(failing(table, fail_on, args.allow_undetectable)) else 0


def failing(table: pd.DataFrame, fail_on: Sequence[str], allow_undetectable: bool = False) -> pd.DataFrame:
    """The rows that fail a CI gate: significantly slower, or cannot tell unless allowed, in fail_on metrics."""
    if table.empty:
        return table
    bad = table["verdict"] == "slower"
    if not allow_undetectable:
        bad |= table["verdict"].str.startswith(CANNOT_TELL)
    return table[bad & table["metric"].isin(fail_on)]


if __name__ == "__main__":
    raise SystemExit(main())
