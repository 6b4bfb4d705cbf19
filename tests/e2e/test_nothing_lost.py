"""Nothing lost (issue 57, item 1), through the installed commands: two runs started together each keep their folder,
resume=true with another config is refused with the old rows kept, overwrite=true leaves no stale job folder.
The logic alone: tests/unit/test_nothing_lost.py; Ctrl-C: tests/e2e/test_ctrl_c.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from helpers import command, read, run_cli

OK = """
import jax.numpy as jnp


def ok(x):
    return jnp.sin(x) * 2
"""
BASE = ["mode=jit", "timing=quick", "workload=custom", "workload.args=[{shape:[${size}]}]", "workload.fn=okfn.ok"]


@pytest.fixture
def here(tmp_path: Path) -> Path:
    (tmp_path / "okfn.py").write_text(OK)
    return tmp_path


def test_two_runs_started_together_each_keep_their_folder(here):
    """The default outputs/run/<date>_<time>/ for both (issue 57: one job's rows were lost when both started in the
    same second); a clock-named folder of the user's own that is certain to collide gets the same treatment."""
    env = {**os.environ, "HYDRA_FULL_ERROR": "0"}
    env.pop("PYTHONPATH", None)
    for extra in ([], ["hydra.run.dir=mine/x_${now:%Y}"]):
        both = [
            subprocess.Popen(
                [command("jitexp"), *BASE, f"size={n}", *extra],
                cwd=here,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for n in (4, 8)
        ]
        outs = [p.communicate(timeout=300) for p in both]
        assert [p.returncode for p in both] == [0, 0], [err[-1500:] for _, err in outs]
        found = sorted((here / ("mine" if extra else "outputs/run")).glob("*/results.csv"))
        assert sorted(int(read(f).loc[0, "size"]) for f in found) == [4, 8], found
        if extra:
            names = sorted(f.parent.name for f in found)
            assert names[1] == names[0] + "_2", names
            assert any(f"results   mine/{names[1]}/" in out for out, _ in outs)  # each prints its own folder


def test_resume_with_another_config_is_refused_and_keeps_every_row(here):
    one, sweep = here / "one", here / "sweep"
    assert run_cli([*BASE, "size=4", f"hydra.run.dir={one}"], cwd=here).returncode == 0
    before = (one / "results.csv").read_bytes()
    changed = run_cli([*BASE, "size=8", f"hydra.run.dir={one}", "resume=true"], cwd=here)
    assert changed.returncode == 2 and changed.stderr.strip().splitlines() == [
        f"jitexp: error: hydra.run.dir='{one}' is invalid; resume=true, but it holds the rows of another config "
        "(size=4, where this run has size=8): this run would replace them; resume with that config, write "
        "overwrite=true to replace them, or another hydra.run.dir"
    ]
    assert (one / "results.csv").read_bytes() == before

    assert run_cli(["-m", *BASE, "size=64,128", f"hydra.sweep.dir={sweep}"], cwd=here).returncode == 0
    kept = {p: p.read_bytes() for p in (sweep / "jobs.csv", sweep / "0" / "results.csv", sweep / "results.csv")}
    other = run_cli(["-m", *BASE, "size=256", f"hydra.sweep.dir={sweep}", "resume=true"], cwd=here)
    assert other.returncode == 2 and "Traceback" not in other.stderr
    assert other.stderr.strip() == (
        f"jitexp: error: hydra.sweep.dir='{sweep}' is invalid; resume=true, but its job #0 is another config "
        "(size=64, where this sweep's #0 has size=256): resuming would replace its rows; resume the sweep that made it "
        "(more points may follow its last), write overwrite=true to replace it, or another hydra.sweep.dir"
    )
    assert {p: p.read_bytes() for p in kept} == kept  # job 0's rows and the job list as they were

    # overwrite=true replaces the 2-job sweep with a 1-job one: no job folder of the old one is left to be read
    replaced = run_cli(["-m", *BASE, "size=256", f"hydra.sweep.dir={sweep}", "overwrite=true"], cwd=here)
    assert replaced.returncode == 0, replaced.stderr[-2000:]
    assert "removed the results of an earlier run in sweep/ (results.csv, jobs.csv, 0/results.csv, 1/results.csv)" in (
        replaced.stderr
    )
    assert not (sweep / "1" / "results.csv").exists() and list(read(sweep / "results.csv")["size"]) == [256]
    history = run_cli([str(sweep), "--out", str(here / "history")], cwd=here, name="jitexp-history")
    assert history.returncode == 0 and history.stdout.startswith("1 run, 1 case,"), history.stdout
