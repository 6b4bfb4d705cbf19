"""Each variant's function is checked against its arguments as a job's is (importing it, so JAX), and a preset
may set variants (issue 17), and the command lines whose variants tests/unit/test_variants_config.py applies to a
config composed once (a Hydra compose each here: Hydra parses the `variants=...` the user types). The rest of the
variants' configs, mistakes and budgets: tests/unit/test_variants_config.py."""

from __future__ import annotations

import pytest

from helpers import ABCODE_ARGS, abcode_module
from jitexp import ConfigError, compose
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


def test_nested_and_dotted_keys_and_mode_options_are_variants():
    cfg = compose(
        [
            "workload=apply_n_times",
            "size=8",
            "variants={plain:{},fast:{mode:{compiler_options:{xla_cpu_enable_fast_math:true}}},"
            "more:{workload.params.n:5, mode.jit_fn:jax.jit}}",
        ]
    )
    configs = variant_configs(cfg)
    assert configs["plain"].mode.compiler_options == {}
    assert configs["fast"].mode.compiler_options == {"xla_cpu_enable_fast_math": True}
    assert configs["more"].workload.params["n"] == 5 and configs["more"].workload.args[1] == {"value": 5}
    assert cfg.workload.params["n"] == 3  # the job's own is unchanged


@pytest.mark.parametrize(
    "variants, key, words",
    [
        ("{a:{workload.fnn:abcode.once},b:{}}", "variants.a.workload.fnn", "did you mean variants.a.workload.fn?"),
        ("{a:{},b:{sise:3}}", "variants.b.sise", "did you mean variants.b.size?"),
        (
            "{a:{},b:{workload.params.nn:3}}",
            "variants.b.workload.params.nn",
            "did you mean variants.b.workload.params.n?",
        ),
        ("{a:{},b:{device.platform:gpu}}", "variants.b.device.platform", "envs"),
        ("{a:{},b:{cpu_async_dispatch:false}}", "variants.b.cpu_async_dispatch", "envs"),
        ("{a:{},b:{dtype:float64}}", "variants.b.dtype", "x64"),
        ("{a:{},b:{timing.processes:3}}", "variants.b.timing.processes", "the job's"),
        ("{a:{},b:{mode.eager:true}}", "variants.b.mode.eager", "the job's"),
        ("{a:{},b:{workload:matmul}}", "variants.b.workload", "not a config group"),
        ("{a:{}}", "variants", "needs two or more"),
        ("{a:{},b:3}", "variants.b", "a mapping of overrides"),
    ],
)
def test_a_variant_mistake_names_its_key(variants, key, words):
    with pytest.raises(ConfigError) as caught:
        compose(["workload=apply_n_times", "size=8", f"variants={variants}"])
    assert caught.value.key == key and words in str(caught.value), str(caught.value)


def test_probes_of_one_config_refuse_variants(tmp_path):
    both = "variants={before:{workload.fn:abcode.once},after:{workload.fn:abcode.thrice}}"
    for extra, key in (
        ("sequence=[{size: 4}]", "sequence"),
        (f"compilation_cache_dir={tmp_path}", "compilation_cache_dir"),
    ):
        with pytest.raises(ConfigError) as caught:
            compose(["workload=custom", ABCODE_ARGS, both, extra])
        assert caught.value.key == key


@pytest.mark.parametrize(
    "variants, words",
    [
        ("{before:{workload.fnn:abcode.once},after:{}}", "did you mean variants.before.workload.fn?"),
        ("{before:{workload.fn:abcode.once}}", "needs two or more"),
    ],
)
def test_a_variant_mistake_on_the_command_line_is_one_line(variants, words):
    """What `jitexp workload=custom ABCODE_ARGS variants=...` prints after `jitexp: error: ` (exit 2, nothing run)."""
    with pytest.raises(ConfigError) as caught:
        preflight.check(["workload=custom", ABCODE_ARGS, f"variants={variants}"])
    message = str(caught.value)
    assert "\n" not in message and message.startswith("variants") and words in message
