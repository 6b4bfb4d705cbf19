"""One set of timing defaults: the CLI's `timing=default`, `jitexp.measure` and `jitexp.run(mapping)` agree.

No worker runs: each path's config is composed or converted and its TimingConfig compared.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np

from jitexp.api import prepare, timing_keys, timing_presets
from jitexp.config import ExperimentConfig, TimingConfig, from_dict
from jitexp.engine.preflight import compose

# The default preset as documented in docs/measurement.md (Timing presets): written out here, not read
# from the code, so that a change to any path's defaults fails this test until the docs follow.
DOCUMENTED = {
    "warmup": 3,
    "max_warmup_time_s": None,
    "min_samples": 10,
    "max_samples": 200,
    "min_sample_time_s": 0.01,
    "max_time_s": 0.5,
    "target_rel_ci": 0.02,
    "processes": 6,
    "max_processes": 12,
    "cold_processes": None,
    "job_time_s": 20.0,
    "timeout_s": 600.0,
    "dispatch_probes": 10,
    "max_steal": 0.05,
    "interleave": "rounds",
    "prepare_next": None,
    "open_retries": 5,
    "open_wait_s": 2.0,
}


# a minimal jitexp.run(mapping): a workload by import path, one mode
MATMUL = {"workload": {"fn": "jitexp.workloads.matmul", "args": [{"shape": [2, 2]}] * 2}, "mode": {"jit": True}}


def double(x):
    return x * 2


def test_the_three_paths_give_the_same_timing():
    cli = compose(["timing=default"]).timing
    cli_implicit = compose([]).timing  # conf/config.yaml's defaults list picks timing: default
    measured = prepare(double, np.ones(4, np.float32))[0].timing
    mapping = from_dict(MATMUL).timing
    assert asdict(cli) == asdict(cli_implicit) == asdict(measured) == asdict(mapping) == DOCUMENTED
    assert asdict(TimingConfig()) == asdict(ExperimentConfig().timing) == DOCUMENTED


def test_a_partial_timing_fills_the_rest_from_the_same_defaults():
    over = {"processes": 7, "max_processes": 9}
    expected = {**DOCUMENTED, **over}
    cli = compose(["timing.processes=7", "timing.max_processes=9"]).timing
    measured = prepare(double, np.ones(4, np.float32), timing=over)[0].timing
    mapping = from_dict({**MATMUL, "timing": over}).timing
    assert asdict(cli) == asdict(measured) == asdict(mapping) == expected
    assert timing_keys(over) == expected and timing_keys("default") == timing_presets()["default"] == DOCUMENTED


def test_the_other_presets_differ_from_the_default():
    for preset in ("quick", "rigorous"):
        cli = asdict(compose([f"timing={preset}"]).timing)
        assert cli != DOCUMENTED
        assert asdict(prepare(double, np.ones(4, np.float32), timing=preset)[0].timing) == cli


def test_docs_measurement_md_documents_these_defaults():
    text = (Path(__file__).resolve().parents[2] / "docs" / "measurement.md").read_text(encoding="utf-8")
    (row,) = [line for line in text.splitlines() if line.startswith("| `default` |")]
    t = TimingConfig()
    assert row == (
        f"| `default` | {t.processes}..{t.max_processes} | {t.min_samples}..{t.max_samples} | "
        f"{t.min_sample_time_s * 1000:g} ms | {t.max_time_s:g} s | {t.target_rel_ci:.0%} | {t.job_time_s:g} s | "
        f"{t.timeout_s:g} s |"
    )
