"""The user's number (issue 61): a jitexp job's reading against a plain process a user would start, pair by pair.

Each round starts one plain process (`python benchmarks/user_plain.py CASE`: a fresh interpreter, no jitexp import,
`f(*args).block_until_ready()` in batches of >= 10 ms, the median of 30) and one jitexp job per arm (`python -m
jitexp ...`, the command line as a user runs it; its results.csv row for jit), one process after another in an
order rotated each round. Per case and arm: the median of the per-round ratios jitexp/plain, its bootstrap 95% CI
and the pair count, against the target (CPU: within 1 +- 0.03 with the CI covering 1; TPU: within 1 +- 0.02).

An arm switches candidate factors off: a config override (the driver's status ticker: progress=false; the
compilation cache; samples shaped like the plain loop's) or a name in JITEXP_WORKER_OFF, which the worker reads
(jitexp.worker.factors lists them). Arms run in the same rounds, against the same plain process, so an arm's
ratio over as_is's is that factor's share.

    python benchmarks/user_pairs.py [--cases add_one,chain_1e5,compute_heavy,optax_step] [--arms as_is,...]
        [--pairs 24] [--budget-s 400] [--csv rounds.csv] [--extra OVERRIDE ...] [--arm 'NAME=OVR;OVR|OFF,OFF' ...]
    python benchmarks/user_pairs.py --table-from rounds.csv[:ARM=NAME,...] [more.csv ...] [--markdown]   # the tables,
        # from the rounds (ARM=NAME: that file's arm read as NAME, to pool the same job run under two names)

Rows print as each round ends (a crash keeps what came before); the table at the end of each case.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OFF = "JITEXP_WORKER_OFF"
SCALAR = "workload.args=[{shape:[]}]"
# The jitexp side of each case: the plain side runs user_plain.CASES[PLAIN.get(case, case)].
JOBS: dict[str, list[str]] = {
    "add_one": ["workload=custom", "workload.fn=user_plain.add_one", SCALAR, "mode=jit", "timing=quick"],
    "chain_1e5": [
        "workload=custom",
        "workload.fn=user_plain.chain",
        "workload.args=[{shape:[100000]}]",
        "mode=jit",
        "timing=quick",
    ],
    "compute_heavy": ["workload=compute_heavy", "size=1000", "mode=jit", "timing=quick"],
    "compute_small": ["workload=compute_heavy", "size=256", "mode=jit", "timing=quick"],
    "optax_step": [
        "workload=custom",
        "workload.fn=user_plain.optax_step",
        "workload.setup=user_plain.setup_optax",
        "+workload.carry={0: 0, 1: 1}",
        "size=64",
        "mode=jit",
        "timing=quick",
    ],
    "main_job": [],  # `jitexp` as it is: compute_heavy at 1000, eager and jit, timing=default; its jit row
}
PLAIN = {"main_job": "compute_heavy"}
USER_TIMING = [  # samples shaped like the plain loop's: 3 warm-up calls, 30 samples of >= 10 ms
    "timing.warmup=3",
    "timing.min_sample_time_s=0.01",
    "timing.min_samples=30",
    "timing.max_samples=30",
    "timing.max_time_s=60",
    "timing.job_time_s=60",
]
ARMS: dict[str, tuple[list[str], list[str]]] = {  # name: (overrides, JITEXP_WORKER_OFF names)
    "as_is": ([], []),
    "no_progress": (["progress=false"], []),
    "no_cache": (["compilation_cache=false"], []),
    "no_check": (["check=false"], []),
    "no_extras": ([], ["extras"]),
    "no_host_probe": ([], ["host_probe"]),
    "no_warm_backend": ([], ["warm_backend"]),
    "no_freeze": ([], ["freeze"]),
    "no_preload": ([], ["preload"]),
    "gc_on": ([], ["gc_disable"]),
    "no_ticks": ([], ["ticks"]),
    "no_inputs_folder": ([], ["inputs_folder"]),
    "user_timing": (USER_TIMING, []),
}
ARMS["all_off"] = (
    sorted({o for o, _ in ARMS.values() for o in o}),
    sorted({n for _, names in ARMS.values() for n in names}),
)
# the rounds as they were before issue 61's fix: bookkeeping right before each sample, the collect right before the
# first (JITEXP_WORKER_OFF=settle,early_collect); as_is against it is the fix's effect
ARMS["before_fix"] = ([], ["settle", "early_collect"])
# the one untimed call before a short sample of few calls (2026-12-07): off, the TPU's one-call samples as before
ARMS["no_short_settle"] = ([], ["short_settle"])
# the timed calls on the worker's own thread, ~15 frames deep (2026-12-07: jaxlib walks the stack at each call)
ARMS["deep_stack"] = ([], ["shallow_stack"])
# the main job without eager beside jit in its rounds (on the TPU the whole job's jit row read 0.970 of the user's loop,
# the jit-only job 1.005, in calls 10 minutes apart: 2026-12-07)
ARMS["jit_only"] = (["mode=jit"], [])
# the next worker not forked while the current one measures (on the chip it is, by default): is the host's other work
# during the rounds what makes the chip's figure read low? (benchmarks/busy_host.py measures that in one process)
ARMS["no_prepare"] = (["timing.prepare_next=false"], [])
# each worker importing JAX itself after the fork, and no next worker forked (and importing) while one measures: on the
# chip no_preload read 1.090 of the user's loop, 1.094x as_is (2026-12-07); is it the neighbour's import or its own?
ARMS["no_preload_no_prepare"] = (["timing.prepare_next=false"], ["preload"])
# timing=quick's few one-call samples on the chip, against samples shaped otherwise (round 9: the user's 10 ms batches
# in one worker read 0.950 of quick's samples): thirty one-call samples, or quick's count of 10 ms batches
ARMS["quick_many"] = (["timing.min_samples=30", "timing.max_samples=30"], [])
ARMS["quick_batched"] = (["timing.min_sample_time_s=0.01"], [])
# quick's sample floor raised from 0.5 ms (compute_small on the CPU, 2026-12-07: 0.926x as_is, 0.868-0.982)
ARMS["quick_5ms"] = (["timing.min_sample_time_s=0.005"], [])
# timing=quick's warm-up as before 2026-12-07 21:00 UTC: one call (now 100, at most 0.1 s); compute_small read 1.167 of
# the user's loop so, 1.008 with 100 calls (0.851x, 0.807-0.979, 30 pairs)
ARMS["warmup_1"] = (["timing.warmup=1", "timing.max_warmup_time_s=null"], [])
# timing=quick's sample floor as before 2026-12-08 00:30 UTC: 0.5 ms (now 10 ms, timing=default's); x + 1 on the CPU read
# 1.264 of the user's loop so, 1.021 with 10 ms samples (quick_batched, 0.923x, 0.794-0.994, 48 pairs, the noisy phase)
ARMS["floor_05"] = (["timing.min_sample_time_s=0.0005"], [])
# arms on the plain side: the user's loop itself in a forkserver child, as jitexp's worker runs (user_plain.py's
# second argument); against plain, the worker's process alone, with no jitexp code in the loop
PLAIN_ARMS = {
    "plain_fs": "forkserver",
    "plain_fs_bare": "forkserver_bare",
    # the user's own process with the collector as jitexp's worker has it (2026-12-07: plain_fs read 0.968 on the chip)
    "plain_frozen": "fresh_frozen",
    "plain_gcoff": "fresh_gcoff",
    # the user's loop in an interpreter multiprocessing spawns (jitexp's workers spawned read 1.097 on the chip)
    "plain_spawn": "spawn",
}
TARGET = {"cpu": 0.03, "tpu": 0.02}


def run(cmd: list[str], env: dict[str, str], timeout_s: float) -> tuple[str | None, str]:
    """(stdout, '') of a process, or (None, its last line of stderr) when it failed."""
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s, cwd=HERE.parent)
    except subprocess.TimeoutExpired:
        return None, f"no result after {timeout_s:g} s"
    if done.returncode != 0:
        lines = [ln for ln in (done.stderr + done.stdout).splitlines() if ln.strip()]
        return None, f"exit {done.returncode}: {lines[-1] if lines else ''}"
    return done.stdout, ""


def plain_side(case: str, env: dict[str, str], timeout_s: float, where: str = "fresh") -> tuple[float | None, str]:
    """The plain process's median seconds per call, and the platform it ran on (or the failure)."""
    cmd = [sys.executable, str(HERE / "user_plain.py"), PLAIN.get(case, case), where]
    for _ in range(6):  # on a TPU the process before may hold the chip for a second or two after it exits
        out, why = run(cmd, env, timeout_s)
        if out is not None or not any(w in why.lower() for w in ("in use", "busy", "unavailable")):
            break
        time.sleep(2.0)
    if out is None:
        return None, why
    try:
        line = json.loads(out.strip().splitlines()[-1])
        return float(line["median_s"]), str(line["platform"])
    except (ValueError, KeyError, IndexError):
        return None, f"no result line in its output: {out.strip()[-200:]!r}"


def jitexp_side(case: str, arm: str, folder: Path, env: dict[str, str], extra: list[str], timeout_s: float):
    """The jitexp job's jit median (seconds per call) with the arm's factors off, or None and why."""
    overrides, names = ARMS[arm]
    env = {**env, OFF: ",".join(names)} if names else env
    cmd = [sys.executable, "-m", "jitexp", *JOBS[case], *overrides, *extra, f"hydra.run.dir={folder}"]
    out, why = run(cmd, env, timeout_s)
    if out is None:
        return None, why
    try:
        with open(folder / "results.csv", newline="") as f:
            rows = [r for r in csv.DictReader(f) if r.get("mode") == "jit"]
    except OSError as exc:
        return None, f"no results.csv ({exc})"
    if not rows or rows[0].get("status") != "ok" or not rows[0].get("median_s"):
        row = rows[0] if rows else {}
        return None, f"jit row: {row.get('status', 'missing')} {row.get('error_message', '')}"
    return float(rows[0]["median_s"]), f"job {float(rows[0]['job_wall_s']):.1f} s"


def bootstrap_ci(values: np.ndarray, resamples: int = 10000, seed: int = 0) -> tuple[float, float]:
    """The percentile bootstrap 95% CI of the median."""
    if values.size < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    medians = np.median(values[rng.integers(0, values.size, (resamples, values.size))], axis=1)
    return float(np.percentile(medians, 2.5)), float(np.percentile(medians, 97.5))


def table(case: str, platform: str, arms: list[str], rounds: list[dict[str, float]], markdown: bool = False) -> int:
    """The case's rows, one per arm, from its rounds ({"plain": s, arm: s, ...}); returns how many miss the target.
    Beside the first arm listed (as_is, as a rule), an arm's `vs` column is the median of its per-round ratio to the
    first's: that factor's share."""
    tol = TARGET.get(platform, TARGET["cpu"])
    missed = 0
    plains = [r["plain"] for r in rounds]
    ref = arms[0]
    if markdown:
        target = f"1 +- {tol}" + (", CI covers 1" if platform == "cpu" else "")
        print(f"\n| case | arm | pairs | jitexp | plain | ratio | 95% CI | vs {ref} (95% CI) | target ({target}) |")
        print("|---|---|---|---|---|---|---|---|---|")
    else:
        print(f"\n{case} on {platform}: median of per-pair ratios jitexp/plain, bootstrap 95% CI (target 1 +- {tol})")
        print(
            f"{'case':14} {'arm':21} {'pairs':>5} {'jitexp':>10} {'plain':>10} {'ratio':>7} {'95% CI':>15} "
            f"{'vs ' + ref + ' (95% CI)':>24}  ok"
        )
    for arm in arms:
        mine = [r for r in rounds if arm in r]
        x = np.asarray([r[arm] / r["plain"] for r in mine])
        if x.size == 0:
            print(f"{case:14} {arm:21} {0:5}  (no pair finished)")
            missed += 1
            continue
        med = float(np.median(x))
        lo, hi = bootstrap_ci(x)
        ok = abs(med - 1) <= tol and (platform != "cpu" or lo <= 1 <= hi)
        missed += not ok
        both = np.asarray([r[arm] / r[ref] for r in mine if ref in r])
        versus = ""
        if arm != ref and both.size:
            vlo, vhi = bootstrap_ci(both)
            versus = f"{np.median(both):.3f} ({vlo:.3f}-{vhi:.3f})"
        ours = np.median([r[arm] for r in mine]) * 1e6
        cells = [case, arm, str(x.size), f"{ours:.2f}us", f"{np.median(plains) * 1e6:.2f}us", f"{med:.3f}"]
        cells += [f"{lo:.3f}-{hi:.3f}", versus, "yes" if ok else "NO"]
        if markdown:
            print("| " + " | ".join(cells) + " |")
        else:
            print(
                f"{case:14} {arm:21} {x.size:5} {cells[3]:>10} {cells[4]:>10} {med:7.3f} {cells[6]:>15} "
                f"{versus:>24}  {cells[8]}",
                flush=True,
            )
    return missed


def tables_from(paths: list[str], markdown: bool = False) -> int:
    """The tables of the rounds --csv files hold (a run cut short keeps its rounds there; several files pool their
    rounds, each arm over the rounds that ran it); rows missed. `FILE:ARM=NAME,...` reads those arms of that file
    under another name (the same job under a name of its day: pooled with a later run's arm of that name)."""
    cases: dict[str, dict] = {}
    for spec in paths:
        path, _, renames = spec.partition(":")
        name = dict(pair.split("=", 1) for pair in renames.split(",") if pair)
        with open(path, newline="") as f:
            for case, arm, i, platform, plain_s, jitexp_s in csv.reader(f):
                arm = name.get(arm, arm)
                c = cases.setdefault(case, {"platform": platform, "arms": [], "rounds": {}})
                c["arms"] += [arm] if arm not in c["arms"] else []
                r = c["rounds"].setdefault((path, i, plain_s), {"plain": float(plain_s)})  # a round's plain once
                if jitexp_s:
                    r[arm] = float(jitexp_s)
    return sum(table(k, c["platform"], c["arms"], list(c["rounds"].values()), markdown) for k, c in cases.items())


def pairs_of(case: str, arms: list[str], args: argparse.Namespace, folder: Path, writer) -> int:
    """Rounds of one plain process and one jitexp job per arm, until --pairs or --budget-s; the case's table."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    env.pop(OFF, None)
    sides = ["plain", *arms]
    rounds: list[dict[str, float]] = []
    platform = "?"
    started = time.monotonic()
    for i in range(args.pairs):
        if i >= 2 and time.monotonic() - started > args.budget_s:
            print(f"{case}: --budget-s={args.budget_s:g} s spent after {i} rounds", flush=True)
            break
        k = i % len(sides)
        order = sides[k:] + sides[:k]
        if (i // len(sides)) % 2:
            order.reverse()
        got: dict[str, float] = {}
        notes: dict[str, str] = {}  # a jitexp job's wall time
        for side in order:
            if side == "plain":
                value, note = plain_side(case, env, args.timeout_s)
                platform = note if value is not None else platform
            elif side in PLAIN_ARMS:
                value, note = plain_side(case, env, args.timeout_s, PLAIN_ARMS[side])
            else:
                value, note = jitexp_side(case, side, folder / f"{case}-{side}-{i}", env, args.extra, args.timeout_s)
            if value is None:
                print(f"{case} round {i} {side}: failed ({note})", flush=True)
                continue
            got[side] = value
            if side in ARMS:
                notes[side] = note
        if "plain" not in got:
            continue
        rounds.append(got)
        line = [f"{case} round {i:2}: plain {got['plain'] * 1e6:9.2f}us"]
        for arm in arms:
            if arm in got:
                line.append(f"{arm} {got[arm] / got['plain']:.3f}" + (f" ({notes[arm]})" if notes.get(arm) else ""))
            if writer is not None:
                writer.writerow([case, arm, i, platform, got["plain"], got.get(arm, "")])
        print("  ".join(line), flush=True)
    return table(case, platform, arms, rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="add_one,chain_1e5,compute_heavy,optax_step", help=", ".join(JOBS))
    parser.add_argument("--arms", default="as_is", help=", ".join([*ARMS, *PLAIN_ARMS]))
    parser.add_argument("--pairs", type=int, default=24, help="rounds per case (each: one plain, one job per arm)")
    parser.add_argument("--budget-s", type=float, default=1e9, help="no new round of a case after this long")
    parser.add_argument("--timeout-s", type=float, default=300.0, help="one process's limit")
    parser.add_argument("--csv", help="append each round's values here (case, arm, round, platform, plain_s, jitexp_s)")
    parser.add_argument("--extra", nargs="*", default=[], help="overrides added to every jitexp job")
    parser.add_argument(
        "--arm",
        action="append",
        default=[],
        help="an arm of its own, then named in --arms: 'NAME=OVERRIDE;OVERRIDE|OFF,OFF' (overrides, JITEXP_WORKER_OFF names)",
    )
    parser.add_argument(
        "--table-from", nargs="+", help="print the tables of --csv files' rounds, pooled (nothing is run)"
    )
    parser.add_argument("--markdown", action="store_true", help="with --table-from: the rows as a Markdown table")
    args = parser.parse_args()
    if args.table_from:
        raise SystemExit(tables_from(args.table_from, args.markdown) and 1)
    for spec in args.arm:
        name, _, rest = spec.partition("=")
        overrides, _, off = rest.partition("|")
        ARMS[name] = ([o for o in overrides.split(";") if o], [o for o in off.split(",") if o])
    cases, arms = args.cases.split(","), args.arms.split(",")
    for name, known, what in ((cases, JOBS, "--cases"), (arms, {**ARMS, **PLAIN_ARMS}, "--arms")):
        bad = [n for n in name if n not in known]
        if bad:
            raise SystemExit(f"{what}: {','.join(bad)} is not one of {', '.join(known)}")
    print(f"{os.cpu_count()} CPU(s), affinity {len(os.sched_getaffinity(0))}, load {os.getloadavg()[0]:.2f}, ", end="")
    print(f"JAX_PLATFORMS={os.environ.get('JAX_PLATFORMS', '')!r}; arms {', '.join(arms)}", flush=True)
    missed = 0
    with tempfile.TemporaryDirectory(prefix="user_pairs-") as tmp:
        # line-buffered: each round reaches the file as it ends, so a run its timeout kills keeps its rounds
        out = open(args.csv, "a", newline="", buffering=1) if args.csv else None  # noqa: SIM115
        writer = csv.writer(out, lineterminator="\n") if out else None
        try:
            for case in cases:
                missed += pairs_of(case, arms, args, Path(tmp), writer)
        finally:
            if out:
                out.close()
    print(f"\n{missed} row(s) outside the target; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
