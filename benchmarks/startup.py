"""Does `jitexp --help` / `jitexp --cfg job` start as fast as a minimal Hydra app? (target: within 1.3x)

Each round runs the minimal app and jitexp back to back (interleaved, so machine drift hits
both alike) as fresh processes; the table prints each command's median wall time and the
ratio of medians, with the 1.3x target per row. Needs the installed `jitexp` command.

    python benchmarks/startup.py [--rounds 9]
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

TARGET = 1.3

MINIMAL_APP = """\
import hydra
from omegaconf import DictConfig


@hydra.main(version_base="1.3", config_path=".", config_name="config")
def app(cfg: DictConfig) -> None:
    print(cfg)


if __name__ == "__main__":
    app()
"""


def wall_time(cmd: list[str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    jitexp = shutil.which("jitexp", path=os.path.dirname(sys.executable)) or shutil.which("jitexp")
    if jitexp is None:
        sys.exit("jitexp is not installed: pip install .")
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "app.py").write_text(MINIMAL_APP)
        Path(tmp, "config.yaml").write_text("size: 1000\ndtype: float32\n")
        cases = {"--help": ["--help"], "--cfg job": ["--cfg", "job"]}
        times: dict[tuple[str, str], list[float]] = {}
        for flags in cases.values():  # one untimed warm-up each: file caches, .pyc
            wall_time([sys.executable, "app.py", *flags], tmp)
            wall_time([jitexp, *flags], tmp)
        for _ in range(args.rounds):
            for name, flags in cases.items():
                times.setdefault((name, "minimal"), []).append(wall_time([sys.executable, "app.py", *flags], tmp))
                times.setdefault((name, "jitexp"), []).append(wall_time([jitexp, *flags], tmp))
    print(f"start-up, median of {args.rounds} interleaved runs each")
    print(f"{'command':<11} {'minimal Hydra app':>18} {'jitexp':>9} {'ratio':>7} {'target':>7}  verdict")
    for name in cases:
        base = statistics.median(times[(name, "minimal")])
        ours = statistics.median(times[(name, "jitexp")])
        ratio = ours / base
        verdict = "ok" if ratio <= TARGET else "SLOWER than target"
        print(f"{name:<11} {base * 1000:>15.0f} ms {ours * 1000:>6.0f} ms {ratio:>6.2f}x {TARGET:>6.1f}x  {verdict}")


if __name__ == "__main__":
    main()
