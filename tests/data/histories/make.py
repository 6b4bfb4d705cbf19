"""Remake the saved synthetic histories: one run folder per commit c1..c12 of a matmul jit case (and an error row),
with this VM's between-run noise, from fixed seeds. `python tests/data/histories/make.py` from the repository."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[1]))  # tests/, for helpers

from helpers import history_commits  # noqa: E402

# name: (steady level per commit, compile level per commit, seed)
HISTORIES = {
    "twelve_commits": (
        [1e-3] * 6 + [1.5e-3] * 6,
        [0.02] * 9 + [0.04] * 3,
        0,
    ),  # issue 24's: steady x1.5 at c7, compile x2 at c10
    "unchanged": ([1e-3] * 12, [0.02] * 12, 1),
    "slower_newest": ([1e-3] * 9 + [1.5e-3] * 3, [0.02] * 12, 0),
    "recovered": ([1e-3] * 4 + [1.5e-3] * 4 + [1e-3] * 4, [0.02] * 12, 0),
}

if __name__ == "__main__":
    for name, (steady, compile_s, seed) in HISTORIES.items():
        shutil.rmtree(HERE / name, ignore_errors=True)
        history_commits(HERE / name, steady, compile_s, seed=seed)
        print(f"{name}: {len(steady)} runs")
