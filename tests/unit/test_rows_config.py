"""rows' identity columns: which case a row is (identity_row, jit_options), and the error row of a sweep job whose
config is invalid (config_error_result), read from a hand-made OmegaConf node (no Hydra)."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from jitexp.analysis.rows import config_error_result, identity_row, jit_options
from jitexp.config import ExperimentConfig, ModeConfig, WorkloadConfig
from jitexp.config.schema import DeviceConfig, MeshConfig
from jitexp.errors import ConfigError

ERROR = {
    "status": "error",
    "error_phase": "config",
    "error_type": "jitexp.errors.ConfigError",
    "error_message": "size=-1 is invalid; a positive integer",
    "hint": "fix size",
}


def test_identity_row_names_the_case_its_jit_options_inputs_and_mesh():
    workload = WorkloadConfig(
        fn="pkg.mod.fn",
        args=[{"shape": [8]}],
        params={"k": 3, "j": "x"},
        static_argnums=[1],
        static_argnames=["flag"],
        donate_argnums=[0],
        jit_fn="equinox.filter_jit",
        setup="pkg.mod.make",
        shardings={0: ["data"]},
    )
    mode = ModeConfig(jit=True, donate_argnums=None, donate_argnames=["x"], compiler_options={"b": 2, "a": True})
    cfg = ExperimentConfig(
        workload=workload,
        mode=mode,
        device=DeviceConfig(count=2),
        mesh=MeshConfig(shape={"data": 2}),
        size=16,
        dtype="bfloat16",
        seed=5,
    )
    assert identity_row(cfg, 4, "size=16", "setup") == {
        "workload": "fn",
        "mode": None,
        "size": 16,
        "dtype": "bfloat16",
        "static_argnums": "[1]",
        "param_k": 3,
        "param_j": "x",
        "seed": 5,
        "job_num": 4,
        "overrides": "size=16",
        "static_argnames": "['flag']",
        "jit_fn": "equinox.filter_jit",
        "donate_argnums": "[0]",
        "donate_argnames": "['x']",
        "compiler_options": "a=True,b=2",
        "prejitted": "",
        "inputs": "setup",
        "input_shapes": None,
        "device_count": 2,
        "distributed_processes": 1,
        "mesh": "data=2",
        "mesh_axis_types": "auto",
        "shardings": "0:P('data')",
    }


def test_identity_row_of_a_setup_no_worker_imported_says_size():
    cfg = ExperimentConfig(workload=WorkloadConfig(fn="pkg.fn", setup="pkg.make"), mode=ModeConfig(jit=True))
    row = identity_row(cfg, 0, "")
    assert (row["workload"], row["inputs"], row["static_argnums"], row["jit_fn"]) == ("fn", "size", "[]", "jax.jit")


@pytest.mark.parametrize(
    "args, expected",
    [
        ((None, None, None, None, None), ("[]", "jax.jit", "[]", "[]", "")),
        (((), {}), ("[]", "jax.jit", "[]", "[]", "")),
        (
            ((0, 2), {"b": 1, "a": "x"}, ("n",), "flax.nnx.jit", ("y", "z")),
            ("['n']", "flax.nnx.jit", "[0, 2]", "['y', 'z']", "a=x,b=1"),
        ),
        (
            ([1], {"xla_cpu_enable_fast_math": True}, [], "", []),
            ("[]", "jax.jit", "[1]", "[]", "xla_cpu_enable_fast_math=True"),
        ),
    ],
)
def test_jit_options_as_row_text(args, expected):
    keys = ("static_argnames", "jit_fn", "donate_argnums", "donate_argnames", "compiler_options")
    assert jit_options(*args) == dict(zip(keys, expected))


def node(**changes) -> dict:
    """A composed job's config as far as config_error_result reads it: workload=custom-like, jit and eager on."""
    cfg = {
        "workload": {
            "fn": "pkg.mod.fn",
            "name": None,
            "params": {"n": 3, "kind": "a"},
            "static_argnums": [1],
            "static_argnames": ["flag"],
            "donate_argnums": [0],
            "jit_fn": "equinox.filter_jit",
        },
        "mode": {
            "eager": True,
            "jit": True,
            "aot": False,
            "numpy": False,
            "static_argnums": None,
            "static_argnames": None,
            "donate_argnums": None,
            "donate_argnames": ["x"],
            "compiler_options": {"b": 2, "a": True},
            "jit_fn": None,
        },
        "size": -1,
        "dtype": "float16",
        "seed": 9,
    }
    for key, value in changes.items():
        head, _, leaf = key.partition("__")
        if leaf:
            cfg[head][leaf] = value
        else:
            cfg[head] = value
    return cfg


def error_rows(cfg: dict, **kwargs) -> list[dict]:
    return config_error_result(OmegaConf.create(cfg), ConfigError("size", -1, "a positive integer"), **kwargs).rows


def test_a_config_error_is_an_error_row_per_mode_with_the_job_identity():
    rows = error_rows(node(), job_num=3, overrides="size=-1")
    common = {
        "workload": "fn",
        "size": -1,
        "dtype": "float16",
        "static_argnums": "[1]",
        "param_n": 3,
        "param_kind": "a",
        "seed": 9,
        "job_num": 3,
        "overrides": "size=-1",
        "static_argnames": "['flag']",
        "jit_fn": "equinox.filter_jit",
        "donate_argnums": "[0]",
        "donate_argnames": "['x']",
        "compiler_options": "a=True,b=2",
        **ERROR,
    }
    assert rows == [{**common, "mode": "eager"}, {**common, "mode": "jit"}]
    assert list(rows[0])[:2] == ["workload", "mode"]


def test_a_config_error_row_takes_the_modes_own_options_over_the_workloads():
    cfg = node(
        mode__static_argnums=[],
        mode__static_argnames=[],
        mode__donate_argnums=[],
        mode__jit_fn="flax.nnx.jit",
        mode__jit=False,
        mode__aot=True,
        mode__numpy=True,
        workload__name="named",
    )
    rows = error_rows(cfg)
    assert [r["mode"] for r in rows] == ["eager", "aot", "numpy"]
    assert {
        (r["workload"], r["static_argnums"], r["static_argnames"], r["donate_argnums"], r["jit_fn"]) for r in rows
    } == {("named", "[]", "[]", "[]", "flax.nnx.jit")}
    assert (rows[0]["job_num"], rows[0]["overrides"]) == (0, "")


def test_a_config_error_with_no_mode_on_and_little_config_is_one_row_of_blanks():
    cfg = {"workload": {"fn": None}, "mode": {"eager": False, "jit": False}}
    (row,) = error_rows(cfg)
    assert row == {
        "workload": "",
        "mode": None,
        "size": None,
        "dtype": None,
        "static_argnums": "[]",
        "seed": None,
        "job_num": 0,
        "overrides": "",
        "static_argnames": "[]",
        "jit_fn": "jax.jit",
        "donate_argnums": "[]",
        "donate_argnames": "[]",
        "compiler_options": "",
        **ERROR,
    }


def test_a_config_error_row_leaves_blank_the_values_that_do_not_resolve():
    # the very value that made the config invalid may be an interpolation of a key that is not there
    cfg = node(size="${nope}", workload__params={"n": "${nope}", "kind": "a"}, workload__fn="pkg.mod.other.fn")
    row = error_rows(cfg)[0]
    assert (row["size"], row["param_n"], row["param_kind"], row["workload"]) == (None, None, "a", "fn")
