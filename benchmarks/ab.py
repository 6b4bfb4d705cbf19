"""Drift you can see: steal against timings, false alarms and power of A/B in one run, A/A envs.

Tables (each row: what, the figure, the target, met?):
1. steal: the same jit job 10 times in pairs (timing.max_steal=1.0: nothing replaced, then 0.05:
   processes mostly under steal replaced); each run's steal and median, the correlation between
   them, and the spread of the 10 medians of each kind (max/min and robust cv). Target: the
   spread with replacement is smaller.
2. false alarms: two identical variants (one function under two names) in one job, 10 runs:
   'no significant change' in >= 9 of 10; beside it, the same function as two separate jobs
   compared with jitexp-compare, 10 times (the second job ~30 s after the first).
3. power: a variant doing ~10% more work (a chain of 11 matmuls against 10), 10 runs of 10 processes:
   'slower' in >= 9 of 10; the true ratio from one timing=rigorous A/B job, and how often each run's
   CI covers it.
4. envs: the same jax in two virtual environments (A/A), 5 runs: no significant change in >= 4 of 5.

    python benchmarks/ab.py [--runs 10] [--env-runs 5] [--skip-envs] [--only power] [--power-timing default]

Run it on an otherwise quiet machine: it takes about 10 minutes on the 2-core VM.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # ab_fns, importable in the workers (they inherit sys.path)

import jitexp  # noqa: E402
from jitexp.comparison import compare  # noqa: E402
from jitexp.results import write_job  # noqa: E402
from jitexp.stats import robust_cv  # noqa: E402

SIZE = 128
TIMING = [
    "timing.processes=6",
    "timing.max_processes=10",
    "timing.min_samples=10",
    "timing.max_samples=60",
    "timing.min_sample_time_s=0.005",
    "timing.max_time_s=0.2",
    "timing.job_time_s=8",
]
BASE = [
    "workload=custom",
    "workload.fn=ab_fns.chain10",
    f"size={SIZE}",
    "mode=jit",
    "workload.args=[{shape: [${size}, ${size}]}]",
]
POWER_TIMING = ["timing.processes=10", "timing.max_processes=14"]  # more pairs per run for a 10% change


def job(*overrides: str, timing: list[str] = TIMING) -> pd.DataFrame:
    """One job through the Python API (the benchmark's timing unless given a preset); its rows as a DataFrame."""
    return pd.DataFrame(jitexp.run(jitexp.compose([*BASE, *timing, *overrides])).rows)


def saved(folder: Path, *overrides: str) -> Path:
    """One job written to a folder as the CLI would (for jitexp-compare)."""
    write_job(jitexp.run(jitexp.compose([*BASE, *TIMING, *overrides])), folder)
    return folder


def ab_row(rows: pd.DataFrame, column: str = "variant") -> pd.Series:
    """The non-baseline row of an A/B job."""
    return rows[rows["ab_baseline"].notna() & (rows[column] != rows["ab_baseline"])].iloc[0]


def steal_table(runs: int) -> bool:
    records = []
    for i in range(runs):
        for max_steal in (1.0, 0.05):
            row = job(f"timing.max_steal={max_steal}").iloc[0]
            records.append(
                {
                    "run": i,
                    "max_steal": max_steal,
                    "steal": row.get("steal_median"),
                    "steal_max": row.get("steal_max"),
                    "replaced": row.get("n_steal_replaced"),
                    "median_us": row["median_s"] * 1e6,
                }
            )
    df = pd.DataFrame(records)
    print("\n1. steal: the same jit job (chain of 10 matmuls, 128x128), alternating without / with replacement")
    print(df.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    out = {}
    for max_steal, group in df.groupby("max_steal"):
        med = group["median_us"].to_numpy(float)
        steal = group["steal"].to_numpy(float)
        ok = np.isfinite(steal)
        corr = float(np.corrcoef(steal[ok], med[ok])[0, 1]) if ok.sum() > 2 and np.std(steal[ok]) > 0 else float("nan")
        out[max_steal] = (med.max() / med.min(), robust_cv(med), corr)
        print(
            f"  max_steal={max_steal}: medians {med.min():.1f}-{med.max():.1f} us, spread max/min {med.max() / med.min():.3f}, "
            f"robust cv {robust_cv(med):.3f}; correlation(steal, median) {corr:+.2f}; replaced {int(group['replaced'].sum())}"
        )
    met = out[0.05][1] < out[1.0][1]
    print(
        f"  target: robust cv with replacement < without: {out[0.05][1]:.3f} < {out[1.0][1]:.3f}  {'met' if met else 'NOT met'}"
    )
    return met


POWER = "variants={ten: {workload.fn: ab_fns.chain10}, eleven: {workload.fn: ab_fns.chain11}}"


def ab_tables(
    runs: int, tmp: Path, power_only: bool = False, power_timing: list[str] | None = None
) -> tuple[bool, bool]:
    power_timing = power_timing or [*TIMING, *POWER_TIMING]
    aa, sep, power = [], [], []
    for i in range(runs):
        if power_only:
            power.append(ab_row(job(POWER, timing=power_timing)))
            continue
        first = saved(tmp / f"sep{i}a")
        rows = job("variants={a: {workload.fn: ab_fns.chain10}, b: {workload.fn: ab_fns.chain10_again}}")
        aa.append(ab_row(rows))
        rows = job(POWER, timing=power_timing)
        power.append(ab_row(rows))
        second = saved(tmp / f"sep{i}b")
        table = compare(first, second).set_index("metric")
        sep.append(table.loc["steady"])
    truth_rows = job(POWER, timing=["timing=rigorous"])
    truth = float(ab_row(truth_rows)["ab_steady_ratio"])

    if power_only:
        return True, power_table(power, truth, runs, power_timing)

    print("\n2. false alarms: identical A and B (the same function under two names)")
    print(f"{'path':44} {'no change':>10} {'slower':>7} {'faster':>7} {'other':>6} {'target':>8}  met")
    nc = count([r["ab_steady_verdict"] for r in aa], "no significant change")
    print(
        f"{'variants in one job (paired, interleaved)':44} {nc:>7} of {runs} {count([r['ab_steady_verdict'] for r in aa], 'slower'):>7} "
        f"{count([r['ab_steady_verdict'] for r in aa], 'faster'):>7} {runs - nc - count([r['ab_steady_verdict'] for r in aa], 'slower') - count([r['ab_steady_verdict'] for r in aa], 'faster'):>6} "
        f"{'>= 9':>8}  {'yes' if nc >= 0.9 * runs else 'NO'}"
    )
    snc = count([r["verdict"] for r in sep], "no significant change")
    print(
        f"{'two jobs ~30 s apart + jitexp-compare':44} {snc:>7} of {runs} {count([r['verdict'] for r in sep], 'slower'):>7} "
        f"{count([r['verdict'] for r in sep], 'faster'):>7} {runs - snc - count([r['verdict'] for r in sep], 'slower') - count([r['verdict'] for r in sep], 'faster'):>6} "
        f"{'(info)':>8}"
    )
    print("  A/A ratios (variants): " + ", ".join(f"{r['ab_steady_ratio']:.3f}" for r in aa))
    print("  A/A ratios (two jobs): " + ", ".join(f"{r['ratio']:.3f}" for r in sep))

    return nc >= 0.9 * runs, power_table(power, truth, runs, power_timing)


def count(values: list, verdict: str) -> int:
    return sum(str(v) == verdict for v in values)


def power_table(power: list, truth: float, runs: int, timing: list[str]) -> bool:
    print(f"\n3. power: chain of 11 matmuls against 10 (true ratio from one timing=rigorous A/B job: {truth:.3f}x)")
    print(f"  timing of the runs: {' '.join(timing)}")
    slower = count([r["ab_steady_verdict"] for r in power], "slower")
    covers = sum(r["ab_steady_ratio_ci_low"] <= truth <= r["ab_steady_ratio_ci_high"] for r in power)
    print(f"{'path':44} {'slower':>10} {'CI covers truth':>16} {'target':>8}  met")
    print(
        f"{'variants in one job':44} {slower:>7} of {runs} {covers:>11} of {runs} {'>= 9':>8}  {'yes' if slower >= 0.9 * runs else 'NO'}"
    )
    print(
        "  ratios: "
        + ", ".join(
            f"{r['ab_steady_ratio']:.3f} ({r['ab_steady_ratio_ci_low']:.3f}-{r['ab_steady_ratio_ci_high']:.3f})"
            for r in power
        )
    )
    print("  per run (steal: the median process's CPU steal; p: Wilcoxon over process pairs):")
    for i, r in enumerate(power):
        print(
            f"    {i}: {r['ab_steady_verdict']:22} p={r['ab_steady_p_value']:.4f} pairs={r['ab_steady_n_pairs']:.0f} "
            f"steal={r.get('steal_median', float('nan')):.2f}"
        )
    return slower >= 0.9 * runs


def twin_venv(path: Path) -> Path:
    """A virtual environment of this interpreter's base that sees this environment's packages (an A/A twin)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    site = next((path / "lib").glob("python3*/site-packages"))
    (site / "twin.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return path / "bin" / "python"


def envs_table(runs: int, tmp: Path) -> bool:
    a, b = twin_venv(tmp / "venv_a"), twin_venv(tmp / "venv_b")
    verdicts = []
    for _ in range(runs):
        rows = job(f"envs={{a: {a}, b: {b}}}")
        verdicts.append(ab_row(rows, "env"))
    nc = sum(r["ab_steady_verdict"] == "no significant change" for r in verdicts)
    print("\n4. envs: the same jax in two virtual environments (A/A), processes alternating a,b,b,a,...")
    print(f"{'path':44} {'no change':>10} {'target':>8}  met")
    print(f"{'envs in one job':44} {nc:>7} of {runs} {'>= 4':>8}  {'yes' if nc >= 0.8 * runs else 'NO'}")
    print("  ratios: " + ", ".join(f"{r['ab_steady_ratio']:.3f} ({r['ab_steady_verdict']})" for r in verdicts))
    return nc >= 0.8 * runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--env-runs", type=int, default=5)
    parser.add_argument("--skip-envs", action="store_true")
    parser.add_argument("--only", choices=["steal", "ab", "power", "envs"])
    parser.add_argument(
        "--power-timing", metavar="PRESET", help="time the power runs with this timing preset (e.g. default)"
    )
    args = parser.parse_args()
    os.environ.setdefault("PYTHONPATH", str(HERE))
    start = time.time()
    print(f"benchmarks/ab.py  {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}  load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "steal"):
            steal_table(args.runs)
        if args.only in (None, "ab", "power"):
            power_timing = [f"timing={args.power_timing}"] if args.power_timing else None
            ab_tables(args.runs, Path(tmp), power_only=args.only == "power", power_timing=power_timing)
        if args.only in (None, "envs") and not args.skip_envs:
            envs_table(args.env_runs, Path(tmp))
    print(f"\n{time.time() - start:.0f} s, load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
