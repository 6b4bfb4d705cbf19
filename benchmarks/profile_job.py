"""What profile=true's trace accounts for (issue 25's target): on one device, on seed_speedup, the outermost execution
events per call (results.csv's profile_execute_s) within 20% of the job's measured steady median, per compiled mode;
and the top events. Each job runs the timed workers and then the profile worker, so the figures come from one job.
The other cases have no target: they show the profiler's own cost (step: the profiled loop's time per call against
the median) and a call whose time is dispatch, not execution (add_one). exec/step: the share of the profiled call
the execution events account for (the profiled process's own level aside).

    python benchmarks/profile_job.py [--cases seed_speedup,add_one,mlp] [--timing default]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pandas as pd

import jitexp
from jitexp import noise
from jitexp.store.folders import write_job

TARGET = 0.20
CASES = {
    "seed_speedup": ["experiment=seed_speedup"],  # compute_heavy 1000: a matmul and fused elementwise work
    "mlp": ["workload=mlp", "size=256"],
    "add_one": ["workload=add_one"],  # dispatch alone: the execution is a sliver of the call
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--timing", default="default")
    args = parser.parse_args()
    lines = []
    before = noise.cpu_times()
    print("profile=true: outermost execution events per call against the steady median, one device")
    print(
        f"{'case':14s} {'mode':5s} {'median':>10s} {'step':>10s} {'execute':>10s} {'exec/median':>11s} {'target':>9s}  ok  {'exec/step':>9s}"
    )
    for name in args.cases.split(","):
        with tempfile.TemporaryDirectory() as out:
            job = jitexp.compose(
                [*CASES[name], "mode=[eager,jit,aot]", "profile=true", f"timing={args.timing}", f"hydra.run.dir={out}"]
            )
            result = jitexp.run(job)
            write_job(result, Path(out))  # the traces written as a job folder would hold them
            rows = pd.DataFrame(result.rows).set_index("mode")
            profile = pd.DataFrame(result.profile)
        for mode in ("jit", "aot"):
            median, execute = rows.loc[mode, "median_s"], rows.loc[mode, "profile_execute_s"]
            step = rows.loc[mode, "profile_step_s"]
            ratio = execute / median
            target, ok = (
                ("1+-0.20", "yes" if abs(ratio - 1) <= TARGET else "NO") if name == "seed_speedup" else ("-", "")
            )
            print(
                f"{name:14s} {mode:5s} {median * 1e6:8.1f}us {step * 1e6:8.1f}us {execute * 1e6:8.1f}us "
                f"{ratio:11.3f} {target:>9s}  {ok:3s} {execute / step:9.3f}"
            )
            top = profile[profile["mode"] == mode].nlargest(5, "per_call_s")
            for r in top.itertuples():
                lines.append(
                    f"  {name} {mode}: {r.thread:8s} {r.event[:60]:60s} {r.per_call:5.2f}/call "
                    f"{r.per_call_s * 1e6:9.1f}us/call {r.share:6.1%}"
                )
    share = noise.shares(before, noise.cpu_times())
    print(f"CPU steal over the run: {share.steal:.1%}" if share is not None else "CPU steal unknown")
    print("\ntop 5 events per mode (thread, event, occurrences per call, time per call, share of the call):")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
