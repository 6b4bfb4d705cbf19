"""Where the README's test command spends its time (issue 26's target: under 4 minutes, install included).

Runs the command's two parts as the README does (two at a time, then those marked `serial` alone) with a pytest
plugin (`suite_events.py`) that logs each test's seconds, layer and `slow` mark, with the machine's CPU counters
read before and after each part. Prints, per part, the wall time and how busy the cores were, then the test-seconds by
layer and for the tests marked `slow`, and the total against the target (the install, ~48 s on the 2-core VM, is
not run here: `--install-s` adds it). Run it on a quiet machine, nothing else running:

    python benchmarks/suite.py [--install-s 48]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

TARGET_S = 240.0
ROOT = Path(__file__).resolve().parent.parent
PARTS = {
    "two at a time": ["-n", "2", "--dist", "worksteal", "-m", "not serial"],
    "serial": ["-m", "serial"],
}


def busy_seconds(before: list[int], after: list[int]) -> tuple[float, float]:
    """Core-seconds busy and in all between two reads of /proc/stat's `cpu` line (user..steal; idle and iowait
    count as not busy)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = sum(after[:8]) - sum(before[:8])
    idle = (after[3] + after[4]) - (before[3] + before[4])
    return (total - idle) / ticks, total / ticks


def cpu_line() -> list[int]:
    with open("/proc/stat") as f:
        return [int(v) for v in f.readline().split()[1:]]


def run_part(name: str, flags: list[str], events: Path) -> dict:
    """One part of the README's command, timed, with the CPU counters read around it."""
    env = {**os.environ, "JITEXP_SUITE_EVENTS": str(events), "PYTHONPATH": str(ROOT / "benchmarks")}
    before, start = cpu_line(), time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "suite_events", "-p", "no:cacheprovider", *flags],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    busy, total = busy_seconds(before, cpu_line())
    summary = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-500:]
    return {
        "part": name,
        "wall_s": wall,
        "busy": busy / total if total else 0.0,
        "summary": summary,
        "rc": proc.returncode,
    }


def test_seconds(events: Path) -> tuple[Counter, float, int]:
    """Test-seconds (setup to teardown) by layer, and those of the tests marked `slow` with their count."""
    layers: Counter = Counter()
    slow_s, slow_n = 0.0, 0
    for line in events.read_text().splitlines():
        e = json.loads(line)
        layers[e["layer"]] += e["seconds"]
        if e["slow"]:
            slow_s, slow_n = slow_s + e["seconds"], slow_n + 1
    return layers, slow_s, slow_n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--install-s", type=float, default=48.0, help="the install's seconds, measured apart")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags in PARTS.items():
            events = Path(tmp) / f"{name.replace(' ', '_')}.jsonl"
            events.touch()
            rows.append(run_part(name, flags, events) | {"events": test_seconds(events)})
    print(f"README's test command, {os.cpu_count()} cores, load average {load:.2f} before  [{time.strftime('%H:%M')}]")
    print(f"{'part':<14} {'wall':>8} {'cores busy':>11}  pytest")
    for r in rows:
        print(f"{r['part']:<14} {r['wall_s']:7.1f}s {r['busy']:10.0%}  {r['summary']}")
    for r in rows:
        layers, slow_s, slow_n = r["events"]
        total = sum(layers.values())
        by_layer = ", ".join(f"{k} {v:.0f}s" for k, v in sorted(layers.items()))
        share = f"{slow_s / total:.0%}" if total else "-"
        print(f"{r['part']}: {total:.0f} test-seconds ({by_layer}); {slow_n} marked slow: {slow_s:.0f}s ({share})")
    whole = args.install_s + sum(r["wall_s"] for r in rows)
    ok = "yes" if whole <= TARGET_S else "NO"
    parts = f"(install {args.install_s:.0f}s + both parts)"
    print(f"{'total':<14} {whole:7.1f}s  {parts}   target <= {TARGET_S:.0f}s  ok: {ok}")
    if any(r["rc"] for r in rows):
        raise SystemExit("a part failed: " + "; ".join(r["summary"] for r in rows if r["rc"]))


if __name__ == "__main__":
    main()
