"""Issue 51's search: every key of docs/configuration.md, set to a value the chosen workload and mode cannot use, is
refused before anything runs (one line naming the key: `jitexp` prints it and exits 2), or is listed here as used by
every job or as legitimately ignored in some jobs, with the reason (docs/decisions.md, "Every input is used or refused",
says how the row shows it). A key added to docs/configuration.md without a decision here fails the test.

Each REFUSED command line is run through the preflight in tests/inprocess/test_keys_used.py (45 Hydra composes, 7 s
of this layer's time otherwise); the rules that refuse them are tested one by one without Hydra in test_usage.py
(config/usage.py), test_validate.py and test_inputs_used.py."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"


def documented_keys() -> list[str]:
    """The first column of docs/configuration.md's tables."""
    text = (DOCS / "configuration.md").read_text()
    return re.findall(r"^\| `([^`]+)` \|", text, flags=re.MULTILINE)


def decisions_issue_51() -> str:
    text = (DOCS / "decisions.md").read_text()
    section = text.partition("## Every input is used or refused (issue 51)")[2]
    return section.partition("\n## ")[0]


F = ["workload=custom", "workload.fn=keys_i51.f", "workload.args=[{shape:[${size}]}]"]
A = ["workload=add_one"]
EAGER = [*A, "mode=eager"]
NONE = [*A, "isolate=none"]

# key: (a command line setting it to a value the job cannot use, where that key is named in the one line)
REFUSED: dict[str, list[str]] = {
    "workload.args": [*F, "workload.setup=keys_i51.s"],
    "workload.setup": [*A, "workload.setup=keys_i51.s"],
    "workload.kwargs": [*F, "+workload.kwargs.z={value: 1}"],
    "workload.static_argnums": [*A, "workload.static_argnums=[0]"],
    "workload.static_argnames": [*F, "workload.static_argnames=[z]"],
    "workload.donate_argnums": [*A, "workload.donate_argnums=[0]"],
    "workload.carry": [*A, "+workload.carry={0: 5}"],
    "workload.jit_fn": [*EAGER, "workload.jit_fn=equinox.filter_jit"],
    "workload.params.*": ["workload=apply_n_times", "+workload.params.m=3"],
    "workload.checks.*": [*A, "+workload.checks.nope='> 0'"],
    "workload.numpy_fn": [*A, "workload.numpy_fn=numpy.add"],
    "workload.shardings": [*A, "workload.shardings={0:[data]}"],
    "workload.out_shardings": [*A, "workload.out_shardings=[data]"],
    "mode.static_argnums": [*A, "mode.static_argnums=[0]"],
    "mode.static_argnames": [*F, "mode.static_argnames=[z]"],
    "mode.jit_fn": [*EAGER, "mode.jit_fn=equinox.filter_jit"],
    "mode.donate_argnames": [*EAGER, "mode.donate_argnames=[x]"],
    "mode.donate_argnums": [*EAGER, "mode.donate_argnums=[0]"],
    "mode.compiler_options": [*EAGER, "+mode.compiler_options.xla_bogus_flag=1"],
    "device_time": [*EAGER, "device_time=true"],
    "profile": [*EAGER, "profile=true"],
    "device.premapped_buffer_bytes": [*A, "device=cpu", "device.premapped_buffer_bytes=1000"],
    "device.count": [*A, "device=cpu", "device.count=4"],
    "mesh.shape": [*A, "device=cpu", "mesh.shape={data:4}"],
    "mesh.axis_types": [*A, "mesh.axis_types=explicit"],
    "distributed.processes": [*EAGER, "distributed.processes=2"],
    "timing.min_samples": [*A, "timing.min_samples=500"],
    "timing.max_samples": [*A, "timing.min_samples=10", "timing.max_samples=5"],
    "timing.cold_processes": [*A, "timing.cold_processes=50"],
    "timing.interleave": [*A, "mode=jit", "timing.interleave=processes"],
    "timing.prepare_next": [*NONE, "timing.prepare_next=true"],
    "timing.open_retries": [*A, "device=cpu", "timing.open_retries=9"],
    "timing.open_wait_s": [*A, "device=cpu", "timing.open_wait_s=9"],
    "cpu_affinity": [*A, "cpu_affinity=[0,0]"],
    "envs": [*A, "envs={a:python}"],
    "size": [*F[:2], "workload.args=[{shape:[128]}]", "size=64"],
    "dtype": [*F[:2], "workload.args=[{shape:[${size}],dtype:float32}]", "dtype=float64"],
    "seed": [*F[:2], "workload.args=[{shape:[${size}],init:arange}]", "seed=3"],
    "check": [*EAGER, "check=true"],
    "sequence": ["workload=apply_n_times", "sequence=[{python_scalars:[1]}]"],
    # (two variants alike are allowed: an A/A copy shows what no change reads as, tests/e2e/test_variants_job.py)
    "variants": [*A, "variants={a:{workload.nosuch:1},b:{size:8}}"],
    "compilation_cache": [*NONE, "compilation_cache=true"],
    "compilation_cache_dir": [*A, "compilation_cache=false", "compilation_cache_dir=kept_cache"],
    "cache_probe": [*EAGER, "cache_probe=true"],
    "cpu_async_dispatch": [*A, "device=tpu", "cpu_async_dispatch=true"],
    # experiment=fit's keys, set without fit.key (an ordinary job has nothing to search)
    "fit.start": [*A, "fit.start=64"],
    "fit.max": [*A, "fit.max=64"],
    "fit.step": [*A, "fit.step=8"],
    "fit.memory_bytes": [*A, "fit.memory_bytes=1000"],
    "fit.time": [*A, "fit.time=false"],
    # hydra/sweeper=tune's keys, set in a run that is no tune sweep
    "tune.objective": [*A, "tune.objective=first_call"],
    "tune.trials": [*A, "tune.trials=5"],
    "tune.baseline": [*A, "tune.baseline=[size=8]"],
    "tune.seed": [*A, "tune.seed=3"],
    "tune.confirm_processes": [*A, "tune.confirm_processes=0"],
    "tune.runoff": [*A, "tune.runoff=0"],
    "tune.examples": [*A, "tune.examples=8"],
}

# every job uses them: no value of theirs is one a job ignores (a wrong one is refused as a plain config mistake)
ALWAYS: dict[str, str] = {
    "workload": "the group that names the function and its arguments",
    "workload.fn": "the function measured",
    "workload.name": "the rows' workload column",
    "mode": "the group that selects the modes measured",
    "mode.eager": "set by the option eager: a mode measured",
    "mode.jit": "set by the option jit: a mode measured",
    "mode.aot": "set by the option aot: a mode measured",
    "roofline": "the device's peaks and every row's share columns, whatever the modes",
    "device": "the group that sets device.platform",
    "device.platform": "where the workers run",
    "device.index": "the device used; one the machine lacks is a config error when the job opens it",
    "mesh": "the node of mesh.shape and mesh.axis_types, decided by them",
    "distributed": "the node of distributed.processes, decided by it",
    "timing": "the group of the timing keys, decided one by one",
    "timing.warmup": "untimed calls before every mode's calibration",
    "timing.max_warmup_time_s": "every mode's warm-up, when set",
    "timing.min_sample_time_s": "every mode's calibration",
    "timing.max_time_s": "every process's sampling budget",
    "timing.target_rel_ci": "every process's and the job's stopping rule",
    "timing.max_steal": "every round's steal mark and the rows' unstable flag",
    "timing.dispatch_probes": "every mode's dispatch_s",
    "isolate": "where the job runs",
    "experiment": "a preset: the keys it sets are decided one by one",
    "calls": "the first calls of every mode in calls.csv",
    "progress": "the job's sign of life on stderr",
    "fit": "the node of the fit keys, decided one by one",
    "fit.key": "null: an ordinary job; a key: the search (one the job cannot search is refused)",
    "tune": "the node of the tune keys, decided one by one",
}

# legitimately ignored in some jobs: the reason, and docs/decisions.md says how the row shows it
IGNORED: dict[str, str] = {
    "workload.description": "a line for jitexp --help: it describes, and never changes what is measured",
    "mode.numpy": "a workload without numpy_fn among others (a sweep over workloads): a warning, the modes column",
    "timing.processes": "isolate=none runs one in-process measurement: n_processes 1, stop_reason isolate=none",
    "timing.max_processes": "as timing.processes",
    "timing.job_time_s": "as timing.processes (and when the first processes already exceed it)",
    "timing.timeout_s": "isolate=none: nothing to kill in-process (the isolate column)",
    "resume": "a folder with nothing complete for the config: every job runs",
    "overwrite": "a folder that holds no results: nothing to replace",
    "fail_on_error": "a single job: an error row exits 1 either way",
}


def test_every_documented_key_has_a_decision():
    keys = documented_keys()
    assert len(keys) > 70  # the table was found
    decided = [*REFUSED, *ALWAYS, *IGNORED]
    assert len(decided) == len(set(decided)), "a key decided twice"
    undecided = [key for key in keys if key not in decided]
    assert not undecided, f"keys of docs/configuration.md without a decision in this test: {undecided}"
    stale = [key for key in decided if key not in keys]
    assert not stale, f"decided keys docs/configuration.md no longer lists: {stale}"


def test_the_keys_legitimately_ignored_are_listed_in_the_decisions():
    section = decisions_issue_51()
    missing = [key for key in IGNORED if f"`{key}`" not in section]
    assert not missing, f"docs/decisions.md (issue 51) does not say how the row shows these ignored keys: {missing}"
