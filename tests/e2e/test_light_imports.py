"""What importing jitexp's light modules pulls in, in one fresh interpreter: the pytest plugin (loaded in every
pytest session) neither pandas nor JAX; the package, its CLI, config, store, API and IPython magic no JAX; the
report's modules neither matplotlib nor JAX; and a whole `jitexp` job's driver no JAX (its workers and the preflight's
check of the workload's arity import it, in processes of their own). The imports accumulate: a module absent after a step was pulled in by
none of that step's imports nor an earlier one's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jitexp
from jitexp.report import build

STEPS = {
    "plugin": "jitexp.pytest_plugin",
    "core": "jitexp, jitexp.cli, jitexp.config, jitexp.store.folders",
    "api": "jitexp.api, jitexp.ipython",
    "report": "jitexp.report.build, jitexp.report.tables, jitexp.report.plots",
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
    "import atexit, sys\n"
    "atexit.register(lambda: print('driver imported jax:', 'jax' in sys.modules))\n"
    "sys.argv = ['jitexp', *sys.argv[1:]]\n"
    "from jitexp.cli import main\n"
    "main()\n"
)


def test_a_jobs_driver_never_imports_jax(tmp_path):
    args = ["workload=add_one", "size=1", "timing=quick", f"hydra.run.dir={tmp_path / 'run'}"]
    out = subprocess.run([sys.executable, "-c", DRIVER, *args], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "driver imported jax: False" in out.stdout, out.stdout
    assert (tmp_path / "run" / "results.csv").exists()
