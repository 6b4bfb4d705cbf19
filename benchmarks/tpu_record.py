"""The accelerator record (docs/benchmarks.md, "On a TPU v5e"): each case as a jitexp job on the default device,
and beside it, in the same run, a plain loop in a fresh process of its own (`f(*args).block_until_ready()`, the
user's loop of benchmarks/accuracy.py) on the same device. One process holds a TPU at a time: the job's processes
and the plain one run one after another.

Printed per row: the wall median jitexp reports and the plain loop's (their ratio, target within 1 +- 0.05: on the
TPU host a call's wall time moves ~3% between processes), device_s, host_overhead_s, the share of the measured peak
(by device time), the job's peak device memory, and for the 8192 bf16 matmul device_s against 5.5-6.3 ms (a plain
profiler trace read 5.88 ms).

    python benchmarks/tpu_record.py [--cases seed_speedup,matmul_8192] [--processes 2] [--csv out.csv]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

# accuracy (the plain loop), here and in its process; appended, so that no file here hides a standard module (this
# folder's profile.py once hid the `profile` that cProfile imports; tests/unit/test_benchmarks_names.py refuses one)
HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE] + [str(HERE)]

CASES: dict[str, list[str]] = {
    "seed_speedup": ["experiment=seed_speedup"],
    **{
        f"size_scaling_{n}": ["workload=compute_heavy", "mode=[eager,jit]", f"size={n}"]
        for n in (64, 128, 256, 512, 1024)
    },
    "mlp_train_step": ["workload=mlp_train_step", "mode=jit"],
    "transformer_block": ["workload=transformer_block", "mode=jit"],
    "nnx_train_step": ["workload=nnx_train_step", "mode=jit"],
    **{f"matmul_{n}": ["workload=matmul", f"size={n}", "dtype=bfloat16", "mode=jit"] for n in (1024, 2048, 4096, 8192)},
}
TARGET_RATIO = 0.05
MATMUL_8192_DEVICE = (5.5e-3, 6.3e-3)


def plain_median(cfg: Any) -> float | None:
    from jitexp.engine.handover import with_retries
    from jitexp.engine.processes import Target, launch
    from jitexp.records import Task

    task = Task(cfg, 0, ("jit",), 1, extras=False)
    result = with_retries(lambda: launch(Target("accuracy", "plain_entry"), task, 600.0), 5, 2.0)
    if result.failed:
        print(f"  plain loop failed: {result.failure_line()}", flush=True)
        return None
    return float(np.median(result.modes["plain"].samples_s))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--csv", default="")
    args = parser.parse_args()
    # the plain process opens the chip as fast as jitexp's workers do (device.premapped_buffer_bytes's default)
    os.environ.setdefault("TPU_PREMAPPED_BUFFER_SIZE", "268435456")
    import jitexp

    records = []
    for name in args.cases.split(","):
        n = args.processes
        cfg = jitexp.compose([*CASES[name], "timing=quick", f"timing.processes={n}", f"timing.max_processes={n}"])
        start = time.perf_counter()
        try:
            result = jitexp.run(cfg)
        except Exception as exc:  # one case's failure is a row of the table, the others still run
            print(f"{name}: {type(exc).__name__}: {exc}", flush=True)
            records.append(
                {"case": name, "mode": "-", "status": "error", "error_type": type(exc).__name__, "case_s": 0}
            )
            continue
        job_s = time.perf_counter() - start
        plain = plain_median(cfg)
        for row in result.rows:
            records.append({"case": name, **row, "plain_s": plain if row["mode"] == "jit" else None, "case_s": job_s})
            shown = plain if row["mode"] == "jit" else None
            print(f"{name} {row['mode']}: {row.get('status')} median {row.get('median_s')} plain {shown}", flush=True)
        if args.csv:
            import pandas as pd

            pd.DataFrame(records).to_csv(args.csv, index=False)
    table(records)


def table(records: list[dict]) -> None:
    from jitexp.analysis.formatting.values import format_bytes, format_seconds
    from jitexp.report.run.views import share_cell

    def pct(v: Any, rate: str, platform: Any) -> str:  # as the report: a share above 1 is words, not a percentage
        return "-" if v is None or not np.isfinite(v) else share_cell(float(v), rate, platform)

    head = [
        "case",
        "mode",
        "device",
        "jitexp",
        "plain",
        "ratio",
        "target",
        "device_s",
        "host_overhead",
        "% of ceiling FLOP/s",
        "% of ceiling B/s",
        "peak mem",
        "job",
    ]
    print("| " + " | ".join(head) + " |\n|" + " --- |" * len(head))
    for r in records:
        ok = r.get("status") == "ok"
        median, plain = r.get("median_s"), r.get("plain_s")
        ratio = median / plain if ok and plain else None
        target = f"1 +- {TARGET_RATIO:g}" if plain else ""
        if ratio is not None:
            target += " ok" if abs(ratio - 1) <= TARGET_RATIO else " MISS"
        if r["case"] == "matmul_8192" and r.get("device_s") is not None:
            lo, hi = MATMUL_8192_DEVICE
            target += f"; device {lo * 1e3:g}-{hi * 1e3:g} ms " + ("ok" if lo <= r["device_s"] <= hi else "MISS")
        cells = [
            r["case"],
            r["mode"],
            str(r.get("device_kind")),
            format_seconds(median) if ok else f"error: {r.get('error_type')}",
            format_seconds(plain),
            f"{ratio:.3f}" if ratio is not None else "-",
            target,
            format_seconds(r.get("device_s")),
            format_seconds(r.get("host_overhead_s")),
            pct(r.get("device_peak_flops_share"), "FLOP/s", r.get("platform")),
            pct(r.get("device_peak_bytes_share"), "bytes/s", r.get("platform")),
            format_bytes(r.get("device_peak_bytes")),
            f"{r['case_s']:.0f} s",
        ]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
