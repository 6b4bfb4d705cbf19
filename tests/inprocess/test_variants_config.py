"""Each variant's function is checked against its arguments as a job's is (importing it, so JAX), and a preset
may set variants (issue 17). The rest of the variants' configs, mistakes and budgets: tests/unit/test_variants_config.py."""

from __future__ import annotations

import pytest

from helpers import ABCODE_ARGS, abcode_module
from jitexp import ConfigError
from jitexp.config import variant_configs
from jitexp.engine import preflight


@pytest.fixture(autouse=True)
def user_module(tmp_path, monkeypatch):
    abcode_module(tmp_path, monkeypatch)


def test_an_experiment_preset_sets_variants(tmp_path):
    (tmp_path / "experiment").mkdir()
    (tmp_path / "experiment" / "ab.yaml").write_text(
        "# @package _global_\ndefaults:\n  - override /workload: custom\nworkload:\n  args: [{shape: [8, 8]}]\n"
        "variants:\n  before: {workload.fn: abcode.once}\n  after: {workload: {fn: abcode.thrice}}\n"
    )
    [cfg] = preflight.check(["--config-dir", str(tmp_path), "experiment=ab"])
    assert {name: c.workload.fn for name, c in variant_configs(cfg).items()} == {
        "before": "abcode.once",
        "after": "abcode.thrice",
    }


def test_each_variants_function_is_checked_like_the_jobs():
    with pytest.raises(ConfigError, match=r"^variants\.b\.workload\.args is invalid; .*abcode\.two"):
        preflight.check(
            ["workload=custom", ABCODE_ARGS, "variants={a:{workload.fn:abcode.once},b:{workload.fn:abcode.two}}"]
        )
