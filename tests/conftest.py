"""Shared helpers: run the installed `jitexp` command in a subprocess, read its CSVs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pandas as pd
import pytest

BIN = Path(sys.executable).parent


def command(name: str) -> str:
    path = shutil.which(name, path=str(BIN)) or shutil.which(name)
    if path is None:
        pytest.fail(f"console script {name!r} not installed: run `pip install .` first")
    return path


def run_cli(
    args: list[str], cwd: Path, name: str = "jitexp", timeout: int = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    env = {**os.environ, "HYDRA_FULL_ERROR": "0", **(env or {})}
    env.pop("PYTHONPATH", None)  # test the installed package, not the source tree
    return subprocess.run([command(name), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def sweep(args: list[str], tmp_path: Path) -> tuple[subprocess.CompletedProcess, Path]:
    """Run `jitexp -m ARGS` into tmp_path/sweep; return the process and the sweep dir."""
    out = tmp_path / "sweep"
    proc = run_cli(["-m", *args, "timing=quick", f"hydra.sweep.dir={out}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, out


def read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path)


def make_env(path: Path, shared: bool = True) -> Path:
    """A venv at path (no pip) whose Python sees this test venv's packages (shared: a .pth file) or none; its python.

    Two shared ones are an A/A pair for `envs`: this jitexp and jax, each from its own interpreter path.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    if shared:
        purelib = Path(sysconfig.get_paths()["purelib"])
        site = path / purelib.relative_to(sys.prefix)
        (site / "jitexp-tests-shared.pth").write_text(f"{purelib}\n")
    return path / "bin" / "python"
