"""What a user reads agrees with itself, on jobs run anywhere (issue 50): tests/unit/test_consistency.py's check of a
job's answer line against its results.csv and the report's speedup table, applied to real run folders (a TPU run's,
brought back), with device_s against its traced call and the shares printed on the line.

    python benchmarks/consistency_check.py LOG:FOLDER [LOG:FOLDER ...]

LOG is the file holding what the command printed (its answer lines; a sweep's lines start `[i/N ...]` and name job
i-1's folder under FOLDER); FOLDER is the job's (or the sweep's) output folder. Prints one row per job: agree or not.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "unit"), str(ROOT / "tests")]
import test_consistency as tc  # noqa: E402

from jitexp.report.run import tables  # noqa: E402
from jitexp.store.folders import load_results  # noqa: E402


def jobs(log: Path, folder: Path) -> list[tuple[str, str, Path]]:
    """(name, answer line, results.csv) of each job the log printed."""
    found = []
    for line in log.read_text().splitlines():
        sweep = re.match(r"\[(\d+)/\d+[^\]]*\] (.*)", line)
        if sweep and (folder / str(int(sweep[1]) - 1) / "results.csv").is_file():
            found.append(
                (f"{folder.name}/{int(sweep[1]) - 1}", sweep[2], folder / str(int(sweep[1]) - 1) / "results.csv")
            )
        elif re.search(r" (eager|jit|aot) [\d.]+ (ns|us|ms|s) ±", line) and (folder / "results.csv").is_file():
            found.append((folder.name, line, folder / "results.csv"))
    return found


def check(name: str, line: str, csv: Path) -> str:
    df = load_results(csv)
    for _, row in df.iterrows():
        if row.get("device_s") == row.get("device_s") and row["device_s"] > row["device_trace_wall_s"] * 1.01:
            if "no share" not in line:
                return f"device_s {row['device_s']} above its traced call {row['device_trace_wall_s']}, unsaid"
    shares = [float(v) for v in re.findall(r"([\d.]+)% of", line)]
    if any(v > 100 for v in shares):
        return f"a share above 100% printed: {shares}"
    figures = tc.line_figures(line)
    try:
        if figures["paired"]:
            tc.test_the_line_the_csv_and_the_tables_agree((line, df, tables.speedup_table(df)))
        else:  # one mode: its median and ± only
            for mode, printed in figures["modes"].items():
                row = df[df["mode"] == mode].iloc[0]
                half = (row["ci95_high_s"] - row["ci95_low_s"]) / 2 / row["median_s"]
                assert tc.close(printed["median_s"], row["median_s"]) and abs(printed["pm"] - half) <= 0.005 + 1e-9
    except AssertionError as error:
        return f"DISAGREE {str(error)[:200]}"
    return "agree" + ("" if figures["paired"] else " (one mode: median and ±)")


def main() -> int:
    bad = 0
    for spec in sys.argv[1:]:
        log, _, folder = spec.partition(":")
        for name, line, csv in jobs(Path(log), Path(folder)):
            verdict = check(name, line, csv)
            bad += not verdict.startswith("agree")
            print(f"{name:<16} {verdict}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
