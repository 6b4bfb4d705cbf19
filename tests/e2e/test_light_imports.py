"""What importing jitexp's light modules pulls in, in one fresh interpreter: the pytest plugin (loaded in every
pytest session) neither pandas nor JAX; the package, its CLI, config, store, API and IPython magic no JAX; the
report's modules neither matplotlib nor JAX. The imports accumulate: a module absent after a step was pulled in by
none of that step's imports nor an earlier one's. And a `jitexp` sweep's driver no JAX: its workers and the
preflight's check of the functions' arity import it, in processes of their own, forked from a server whose imports
are frozen out of the garbage collector's reach."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd

import jitexp
from jitexp.report.run import build

STEPS = {
    "plugin": "jitexp.pytest_plugin",
    "core": "jitexp, jitexp.cli, jitexp.config, jitexp.store.folders",
    "api": "jitexp.api, jitexp.ipython",
    "report": "jitexp.report.run.build, jitexp.report.run.tables, jitexp.report.plots",
}
CODE = (
    "import json, sys\n"
    "seen = {}\n"
    + "".join(
        f"import {modules}\nseen[{step!r}] = sorted(m for m in ('pandas', 'matplotlib', 'jax') if m in sys.modules)\n"
        for step, modules in STEPS.items()
    )
    + "print(json.dumps(seen))"
)


def test_the_light_modules_import_no_jax_and_the_plugin_no_pandas():
    src = str(Path(build.__file__).parents[2])
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, check=True)
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["plugin"] == []  # a pytest11 entry point: nothing heavier than pytest and NumPy
    for step in ("core", "api", "report"):
        assert "jax" not in seen[step] and "matplotlib" not in seen[step], (step, seen)
    assert callable(jitexp.load_ipython_extension) and jitexp.Measurement.__name__ == "Measurement"


DRIVER = (
    "import atexit, os, sys\n"
    "atexit.register(lambda: print('driver', os.getpid(), 'imported jax:', 'jax' in sys.modules))\n"
    "sys.argv = ['jitexp', *sys.argv[1:]]\n"
    "from jitexp.cli import main\n"
    "main()\n"
)
LOGGED = """import gc
import os

import jax.numpy as jnp

with open(os.environ["IMPORT_LOG"], "a") as log:
    log.write(f"{os.getpid()} {gc.get_freeze_count()}\\n")


def f(x):
    return jnp.sin(x)


def g(x):
    return jnp.cos(x)


def make(n=4, **kw):
    return (jnp.ones((n,)),)
"""


def test_a_sweeps_driver_never_imports_jax_and_checks_every_function_in_one_child(tmp_path):
    (tmp_path / "logged.py").write_text(LOGGED)
    log = tmp_path / "imports.log"
    args = ["-m", "workload=custom", "workload.fn=logged.f,logged.g", "workload.setup=logged.make", "timing=quick"]
    env = {**os.environ, "IMPORT_LOG": str(log)}
    out = subprocess.run(
        [sys.executable, "-c", DRIVER, *args, f"hydra.sweep.dir={tmp_path / 'sweep'}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    driver = re.search(r"driver (\d+) imported jax: (\w+)", out.stdout)
    assert driver and driver.group(2) == "False", out.stdout
    lines = [line.split() for line in log.read_text().splitlines()]
    importers = [pid for pid, _ in lines]
    # the preflight's one child checked both functions, then each job's one worker (timing=quick) imported it
    assert len(importers) == 3 and len(set(importers)) == 3 and driver.group(1) not in importers, importers
    # each forked from the server after its gc.freeze(): the worker's collect before sampling skips JAX's objects
    assert all(int(frozen) > 50_000 for _, frozen in lines), lines
    rows = pd.read_csv(tmp_path / "sweep" / "results.csv")
    assert sorted(set(rows["workload"])) == ["f", "g"] and (rows["status"] == "ok").all()
    assert (rows["inputs"] == "setup").all()  # make() names no size: the workers said so; the driver never imported it
