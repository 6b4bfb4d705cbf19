"""Config composition of every group option, and validation messages (no JAX needed)."""

from __future__ import annotations

import dataclasses
from importlib import resources

import pytest

import jitexp
from jitexp import ConfigError, ExperimentConfig, compose
from jitexp.config import validate


def options(group: str) -> list[str]:
    folder = resources.files("jitexp.conf").joinpath(group)
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))


def test_default_config_is_the_main_job():
    cfg = compose()
    assert isinstance(cfg, ExperimentConfig)
    assert (cfg.workload_name, cfg.mode.names, cfg.size, cfg.dtype, cfg.device.platform) == (
        "compute_heavy",
        ("eager", "jit"),
        1000,
        "float32",
        "auto",  # the accelerator where the machine has one (the tests pin the CPU: tests/conftest.py)
    )
    assert compose(["mode=aot"]).mode.names == ("aot",)
    assert compose(["mode=[jit,aot,eager]"]).mode.names == ("eager", "jit", "aot")
    assert cfg.workload.args[0]["shape"] == [1000, 1000]


CHOSEN = {
    "workload": lambda cfg: cfg.workload_name,
    "mode": lambda cfg: cfg.mode.names[0],
    "device": lambda cfg: cfg.device.platform,
}


@pytest.mark.parametrize("group", ["workload", "mode", "device", "timing", "experiment"])
def test_every_group_option_composes(group):
    names = options(group)
    assert names, group
    seen = set()
    for name in names:
        extra = (
            ["workload.fn=jitexp.workloads.matmul", "workload.args=[{shape:[2,2]},{shape:[2,2]}]"]
            if (group, name) == ("workload", "custom")
            else ["workload=matmul", "workload.numpy_fn=numpy.matmul"]
            if (group, name) == ("mode", "numpy")
            else []
        )
        cfg = compose([f"{group}={name}", *extra])
        if group in CHOSEN and name != "custom":
            assert CHOSEN[group](cfg) == name
        seen.add(repr(cfg.timing) if group == "timing" else repr(cfg))
    if group != "experiment":  # presets differ mostly in their sweeps (tested in test_cli.py)
        assert len(seen) == len(names), f"two {group} options compose to the same config"


def test_the_builtin_choices_exist():
    assert {"compute_heavy", "conditional", "conditional_lax", "apply_n_times", "custom"} <= set(options("workload"))
    assert options("mode") == ["aot", "eager", "jit", "numpy"]
    assert options("device") == ["auto", "cpu", "gpu", "tpu"]
    assert options("timing") == ["default", "quick", "rigorous"]
    assert {"seed_speedup", "seed_control_flow", "seed_static_args"} <= set(options("experiment"))


def test_workload_args_follow_size_dtype_and_params():
    cfg = compose(["workload=apply_n_times", "size=7", "dtype=bfloat16", "workload.params.n=5"])
    assert cfg.workload.args == [{"shape": [7, 7], "dtype": "bfloat16", "init": "normal", "scale": 0.1}, {"value": 5}]
    assert cfg.static_argnums == (1,)
    assert compose(["workload=apply_n_times", "mode.static_argnums=[]"]).static_argnums == ()


def test_custom_workload_from_the_command_line():
    cfg = compose(
        [
            "workload=custom",
            "workload.fn=jitexp.workloads.elementwise_chain",
            "workload.args=[{shape:[${size}],init:uniform}]",
            "size=16",
        ]
    )
    assert cfg.workload_name == "elementwise_chain"
    assert cfg.workload.args == [{"shape": [16], "init": "uniform"}]


@pytest.mark.parametrize(
    "overrides, key, fragment",
    [
        (["dtype=float128"], "dtype", "float32, float16, bfloat16, float64"),
        (["mode=jit", "mode.jit=false"], "mode", "eager, jit, aot"),
        (["isolate=thread"], "isolate", "process, none"),
        (["timing.processes=4", "timing.max_processes=2"], "timing.max_processes", ">= timing.processes"),
        (["device.platform=fpga"], "device.platform", "cpu, gpu, tpu, auto"),
        (["size=0"], "size", "> 0"),
        (["workload=apply_n_times", "mode.static_argnums=[5]"], "mode.static_argnums", "[0, 2)"),
        (["workload=apply_n_times", "mode.static_argnums=[0]"], "mode.static_argnums", "only literal"),
        (["+workload.args.0.colour=red"], "workload.args[0].colour", "array keys"),
        (["workload.args.0.init=gaussian"], "workload.args[0].init", "normal, uniform"),
        (["timing.min_samples=50", "timing.max_samples=10"], "timing.max_samples", ">= timing.min_samples"),
    ],
)
def test_bad_values_name_key_value_and_choices(overrides, key, fragment):
    with pytest.raises(ConfigError) as info:
        compose(overrides)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{key}=")
    assert fragment in message


def test_python_api_without_hydra():
    cfg = ExperimentConfig()
    with pytest.raises(ConfigError, match="workload.fn"):
        validate(cfg)
    ok = dataclasses.replace(
        cfg, workload=jitexp.WorkloadConfig(fn="jitexp.workloads.matmul", args=[{"shape": [2, 2]}] * 2)
    )
    with pytest.raises(ConfigError, match="^mode=.*select at least one mode"):
        validate(ok)
    ok = dataclasses.replace(ok, mode=jitexp.ModeConfig(jit=True))
    assert validate(ok) is ok


def test_a_built_ins_old_import_path_still_names_it():
    from jitexp.config import import_fn
    from jitexp.workloads import library

    assert import_fn("jitexp.library.softmax") is library.softmax is import_fn("jitexp.workloads.library.softmax")
    with pytest.raises(ConfigError, match="has no callable 'nope'"):
        import_fn("jitexp.library.nope")


def test_a_mesh_or_shardings_given_as_a_mapping_replace_the_configs_own():
    # tp_mlp's YAML shards arguments 1 and 2 over `model`; a mapping on the command line (or in a variant) is the
    # whole of it, not merged into the YAML's (which would keep 1 and 2 and refuse the `data` mesh)
    job = compose(["workload=tp_mlp", "device.count=4", "mesh.shape={data:4}", "workload.shardings={0:[data,null]}"])
    assert (job.workload.shardings, job.mesh.shape) == ({0: ["data", None]}, {"data": 4})
    variants = "variants={one: {mesh.shape: {model: 1}}, two: {mesh.shape: {data: 2}, workload.shardings: {0: [data]}}}"
    job = compose(["workload=tp_mlp", "device.count=2", "mesh.shape={model:2}", variants])
    one, two = jitexp.config.variant_configs(job).values()
    assert (one.mesh.shape, one.workload.shardings) == ({"model": 1}, {1: [None, "model"], 2: ["model", None]})
    assert (two.mesh.shape, two.workload.shardings) == ({"data": 2}, {0: ["data"]})  # not {model: 2, data: 2}
    with pytest.raises(ConfigError, match=r"variants\.two\.workload\.shardings\.1=.*axis 'model' is not in mesh"):
        compose(["workload=tp_mlp", "device.count=2", "variants={one: {size: 8}, two: {mesh.shape: {x: 2}}}"])


def test_the_preflight_reads_hydra_mode_as_hydra_does_and_hands_it_over_without_a_compose():
    from hydra._internal.hydra import Hydra
    from hydra.types import RunMode

    from jitexp.engine.compose import MODE_UNREAD, hydra_session, known_mode
    from jitexp.engine.preflight import check_command

    for argv in (["size=8"], ["hydra.mode=MULTIRUN", "size=8,16"], ["-m", "size=8,16"]):
        checked = check_command(argv)
        overrides = [a for a in argv if a != "-m"]
        with hydra_session(None) as hydra:
            assert checked.hydra_mode == hydra.get_mode("config", overrides), argv
    assert check_command(["hydra.mode=MULTIRUN", "size=8,16"]).hydra_mode == RunMode.MULTIRUN
    assert check_command(["--cfg", "job"]).hydra_mode is MODE_UNREAD  # nothing composed: Hydra reads it itself

    original = Hydra.get_mode
    with known_mode(RunMode.RUN):
        assert Hydra.get_mode(None, "config", ["size=8,16"]) == RunMode.RUN  # no compose: None is no Hydra
    assert Hydra.get_mode is original
    with known_mode(MODE_UNREAD):
        assert Hydra.get_mode is original
