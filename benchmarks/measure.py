"""What does `jitexp.measure` cost over the CLI and over a setup function? (issue 18's targets)

(a) `jitexp.measure(f, x)` on a trivial function, as a fresh `python script.py`, against the CLI's
    wall time for the same job (`jitexp workload=add_one`), rounds interleaved: target <= 1.5x;
    and with NumPy arguments the driver imports no JAX (target: no).
(b) The same job with 100 MB of arguments passed by value against a setup function building them
    in the worker (one driver process, rounds interleaved): target <= +1 s; and the memory guard
    counts the argument bytes (target: 100 MB).
Each row prints the medians, the target and whether it is met.

    python benchmarks/measure.py [--rounds 3] [--timing quick]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT = """\
import sys
import {array} as xp
import jitexp

def add_one(x):
    return x + 1

x = xp.ones(1000, xp.float32)
m = jitexp.measure(add_one, x, timing="{timing}")
assert m.ok, m.errors
print("jax imported in the driver:", "jax" in sys.modules)
"""

SETUP = """\
import jax.numpy as jnp

def make(size, dtype, seed, **kw):
    return (jnp.full((size,), 0.5, jnp.float32),)

def total(x):
    return jnp.sum(x * 2.0)
"""

N = 25_000_000  # float32: 100 MB


def wall(cmd: list[str], cwd: str) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timing", default="quick")
    args = parser.parse_args()
    jitexp_cmd = shutil.which("jitexp", path=os.path.dirname(sys.executable)) or shutil.which("jitexp")
    if jitexp_cmd is None:
        sys.exit("jitexp is not installed: pip install .")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "with_jax.py").write_text(SCRIPT.format(array="jax.numpy", timing=args.timing))
        Path(tmp, "with_numpy.py").write_text(SCRIPT.format(array="numpy", timing=args.timing))
        cli = [jitexp_cmd, "workload=add_one", "size=1000", f"timing={args.timing}", f"hydra.run.dir={tmp}/run"]
        api = [sys.executable, "with_jax.py"]
        wall(cli, tmp), wall(api, tmp)  # warm-up: file caches, .pyc
        times: dict[str, list[float]] = {"cli": [], "api": []}
        for _ in range(args.rounds):
            times["cli"].append(wall(cli, tmp)[0])
            times["api"].append(wall(api, tmp)[0])
        cli_s, api_s = statistics.median(times["cli"]), statistics.median(times["api"])
        rows.append(
            (
                "(a) measure(f, x) vs CLI, wall",
                f"{api_s:.2f} s vs {cli_s:.2f} s = {api_s / cli_s:.2f}x",
                "<= 1.5x",
                api_s / cli_s <= 1.5,
            )
        )
        _, out = wall([sys.executable, "with_numpy.py"], tmp)
        imported = "jax imported in the driver: True" in out
        rows.append(("(a) NumPy args: JAX in the driver", "yes" if imported else "no", "no", not imported))
        rows += overhead(tmp, args.rounds, args.timing)
    print(
        f"jitexp.measure overhead, timing={args.timing}, {args.rounds} rounds, {os.cpu_count()} CPU(s), "
        f"load average {os.getloadavg()[0]:.2f}\n"
    )
    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}}  {'measured':<36}  {'target':<8}  ok")
    for case, measured, target, ok in rows:
        print(f"{case:<{width}}  {measured:<36}  {target:<8}  {'yes' if ok else 'NO'}")


def overhead(tmp: str, rounds: int, timing: str) -> list[tuple[str, str, str, bool]]:
    """(b): 100 MB by value (jitexp.measure) against a setup function, in this process, and the memory guard."""
    sys.path.insert(0, tmp)
    Path(tmp, "bigsetup.py").write_text(SETUP)
    import bigsetup  # type: ignore[import-not-found]
    import jax.numpy as jnp

    import jitexp
    from jitexp.api import prepare
    from jitexp.config import sizing
    from jitexp.engine import runner

    x = jnp.full((N,), 0.5, jnp.float32)
    cfg = jitexp.compose(
        [
            "workload=custom",
            "workload.fn=bigsetup.total",
            "workload.setup=bigsetup.make",
            f"size={N}",
            f"timing={timing}",
        ]
    )

    def by_setup() -> None:
        assert all(r["status"] == "ok" for r in jitexp.run(cfg).rows)

    def by_value() -> None:
        assert jitexp.measure(bigsetup.total, x, timing=timing).ok

    by_setup(), by_value()  # warm-up: the forkserver starts
    times: dict[str, list[float]] = {"setup": [], "value": []}
    for _ in range(rounds):
        for name, job in (("setup", by_setup), ("value", by_value)):
            start = time.perf_counter()
            job()
            times[name].append(time.perf_counter() - start)
    setup_s, value_s = statistics.median(times["setup"]), statistics.median(times["value"])
    measured_cfg, payload = prepare(bigsetup.total, x, timing=timing)
    counted = payload.arg_bytes
    available = sizing.available_memory
    sizing.available_memory = lambda: 2 * counted  # type: ignore[assignment]  # less than 3 sets (2 modes + check)
    try:
        runner.check_memory(measured_cfg, payload)
        refused = False
    except jitexp.ConfigError:
        refused = True
    finally:
        sizing.available_memory = available  # type: ignore[assignment]
    return [
        (
            "(b) 100 MB by value vs setup, per job",
            f"{value_s:.2f} s vs {setup_s:.2f} s = {value_s - setup_s:+.2f} s",
            "<= +1 s",
            value_s - setup_s <= 1.0,
        ),
        (
            "(b) memory guard: argument bytes",
            f"{counted / 1e6:.1f} MB counted; refused at 2x: {'yes' if refused else 'no'}",
            "100 MB",
            counted == 4 * N and refused,
        ),
    ]


if __name__ == "__main__":
    main()
