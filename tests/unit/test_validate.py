"""config/validate.py, exactly: each value validate() refuses, as the one line the user reads (key, value, what to write),
and the values at each bound it keeps. Configs are built as dataclasses (no Hydra): the layer's fastest way to reach
every rule, which the mutation run over config/validate.py asked for (docs/benchmarks.md, "Mutation testing")."""

from __future__ import annotations

import dataclasses
import os
import tempfile
from pathlib import Path

import pytest

from helpers import job_config
from jitexp.config import ExperimentConfig
from jitexp.config.validate import (
    check_param_types,
    expected_type,
    unknown_key,
    unknown_keys,
    validate,
    writable_dir,
)
from jitexp.errors import ConfigError

ARGS = [{"shape": [8, 8]}, {"value": 3}]


def config(**changes) -> ExperimentConfig:
    """A valid job (fn pkg.mod.f of an 8x8 array and a literal 3, eager and jit), with the changes given."""
    return job_config([dict(a) for a in ARGS], **{"roofline": False, **changes})


def refusal(cfg: ExperimentConfig) -> str:
    with pytest.raises(ConfigError) as caught:
        validate(cfg)
    return str(caught.value)


def test_a_valid_config_is_returned_as_it_is():
    cfg = config()
    before = dataclasses.replace(cfg)
    assert validate(cfg) is cfg
    assert cfg == before


# ---- values and their bounds ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"dtype": "float8"}, "dtype='float8' is invalid; valid choices: float32, float16, bfloat16, float64"),
        ({"device": {"platform": "npu"}}, "device.platform='npu' is invalid; valid choices: cpu, gpu, tpu, auto"),
        ({"device": {"index": -1}}, "device.index=-1 is invalid; must be >= 0"),
        ({"size": 0}, "size=0 is invalid; must be > 0"),
        ({"calls": -1}, "calls=-1 is invalid; must be >= 0"),
        ({"seed": -1}, "seed=-1 is invalid; must be >= 0 (numpy's and JAX's generators take a non-negative seed)"),
        ({"timing": {"job_time_s": float("inf")}}, "timing.job_time_s=inf is invalid; must be a finite number > 0"),
        ({"timing": {"min_samples": 0}}, "timing.min_samples=0 is invalid; must be > 0"),
        ({"timing": {"max_samples": 0}}, "timing.max_samples=0 is invalid; must be > 0"),
        ({"timing": {"min_sample_time_s": 0.0}}, "timing.min_sample_time_s=0.0 is invalid; must be > 0"),
        ({"timing": {"max_time_s": float("inf")}}, "timing.max_time_s=inf is invalid; must be a finite number > 0"),
        ({"timing": {"target_rel_ci": -0.1}}, "timing.target_rel_ci=-0.1 is invalid; must be > 0"),
        ({"timing": {"processes": 0}}, "timing.processes=0 is invalid; must be > 0"),
        ({"timing": {"max_processes": 0}}, "timing.max_processes=0 is invalid; must be > 0"),
        ({"timing": {"job_time_s": -1.0}}, "timing.job_time_s=-1.0 is invalid; must be > 0"),
        ({"timing": {"timeout_s": float("nan")}}, "timing.timeout_s=nan is invalid; must be a finite number > 0"),
        ({"timing": {"dispatch_probes": 0}}, "timing.dispatch_probes=0 is invalid; must be > 0"),
        (
            {"timing": {"target_rel_ci": 1.0}},
            "timing.target_rel_ci=1.0 is invalid; must lie in (0, 1): a fraction of the median, e.g. 0.02",
        ),
        ({"timing": {"cold_processes": 0}}, "timing.cold_processes=0 is invalid; must be > 0"),
        ({"timing": {"warmup": -1}}, "timing.warmup=-1 is invalid; must be >= 0"),
        ({"timing": {"max_warmup_time_s": 0.0}}, "timing.max_warmup_time_s=0.0 is invalid; must be > 0"),
        (
            {"timing": {"max_warmup_time_s": float("inf")}},
            "timing.max_warmup_time_s=inf is invalid; must be a finite number > 0",
        ),
        ({"timing": {"open_retries": -1}}, "timing.open_retries=-1 is invalid; must be >= 0"),
        ({"timing": {"open_wait_s": -0.5}}, "timing.open_wait_s=-0.5 is invalid; must be >= 0"),
        ({"timing": {"open_wait_s": float("inf")}}, "timing.open_wait_s=inf is invalid; must be a finite number >= 0"),
        ({"device": {"premapped_buffer_bytes": 0}}, "device.premapped_buffer_bytes=0 is invalid; must be > 0"),
        (
            {"timing": {"min_samples": 10, "max_samples": 9}},
            "timing.max_samples=9 is invalid; must be >= timing.min_samples (10)",
        ),
        (
            {"timing": {"processes": 6, "max_processes": 5}},
            "timing.max_processes=5 is invalid; must be >= timing.processes (6)",
        ),
        (
            {"timing": {"max_steal": 0.0}},
            "timing.max_steal=0.0 is invalid; must lie in (0, 1]: a share of CPU time, e.g. 0.05",
        ),
        (
            {"timing": {"max_steal": 1.01}},
            "timing.max_steal=1.01 is invalid; must lie in (0, 1]: a share of CPU time, e.g. 0.05",
        ),
        (
            {"roofline": "stale"},
            "roofline='stale' is invalid; true (peaks from the store), fresh (measured again) or false",
        ),
        ({"isolate": "thread"}, "isolate='thread' is invalid; valid choices: process, none"),
    ],
)
def test_a_value_out_of_its_range_is_refused_naming_key_value_and_range(changes, message):
    assert refusal(config(**changes)) == message


@pytest.mark.parametrize(
    "changes",
    [
        {"device": {"index": 0}},
        {"size": 1},
        {"calls": 0},
        {"timing": {"target_rel_ci": 0.99}},
        {"timing": {"cold_processes": 1}},
        {"timing": {"cold_processes": None}},
        {"timing": {"warmup": 0, "open_retries": 0, "open_wait_s": 0.0}},
        {"device": {"premapped_buffer_bytes": None}},
        {"device": {"premapped_buffer_bytes": 1}},
        {"timing": {"min_samples": 10, "max_samples": 10, "processes": 6, "max_processes": 6}},
        {"timing": {"max_steal": 1.0}},
        {"roofline": True},
        {"roofline": "fresh"},
        {"isolate": "none"},
        {"timing": {"interleave": "processes"}},
    ],
)
def test_values_at_their_bounds_are_kept(changes):
    cfg = config(**changes)
    assert validate(cfg) is cfg


# ---- interleave, cores, envs, profile, variants ---------------------------------------------------------------------

ENVS = {"a": "/venv/a/bin/python", "b": "/venv/b/bin/python"}
VARIANTS = {"x": {}, "y": {"size": 16}}


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"isolate": "none"}, "needs isolate=process (each mode in fresh worker processes of its own)"),
        ({"envs": ENVS}, "cannot be combined with envs: use timing.interleave=rounds"),
        ({"variants": VARIANTS}, "cannot be combined with variants: use timing.interleave=rounds"),
    ],
)
def test_interleaving_processes_needs_fresh_processes_without_envs_or_variants(changes, why):
    assert (
        refusal(config(timing={"interleave": "processes"}, **changes))
        == f"timing.interleave='processes' is invalid; {why}"
    )


def test_an_unknown_interleave_is_refused_with_the_choices():
    assert refusal(config(timing={"interleave": "modes"})) == (
        "timing.interleave='modes' is invalid; valid choices: rounds, processes"
    )


def test_cpu_affinity_takes_a_non_empty_list_of_this_machines_cores():
    usable = sorted(os.sched_getaffinity(0))
    assert validate(config(cpu_affinity=[usable[0]])).cpu_affinity == [usable[0]]
    assert validate(config(cpu_affinity=None)).cpu_affinity is None
    assert refusal(config(cpu_affinity=[])) == (
        f"cpu_affinity=[] is invalid; cores of this machine: a non-empty list from {usable}"
    )
    assert refusal(config(cpu_affinity=[usable[0], 9999])) == (
        f"cpu_affinity=[{usable[0]}, 9999] is invalid; cores of this machine: a non-empty list from {usable} "
        "(9999 is not one)"
    )
    assert refusal(config(cpu_affinity=["0"])) == (  # a core as text is not a core
        f"cpu_affinity=['0'] is invalid; cores of this machine: a non-empty list from {usable} (0 is not one)"
    )


def test_cpu_affinity_takes_the_cores_this_process_may_run_on_not_every_core(monkeypatch):
    def allowed(pid):
        assert pid == 0, "the cores of another process"
        return {3, 1}

    monkeypatch.setattr(os, "sched_getaffinity", allowed)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert refusal(config(cpu_affinity=[0, 1])) == (
        "cpu_affinity=[0, 1] is invalid; cores of this machine: a non-empty list from [1, 3] (0 is not one)"
    )
    assert validate(config(cpu_affinity=[3, 1])).cpu_affinity == [3, 1]


def test_cpu_affinity_where_the_os_cannot_tell_is_every_core_counted(monkeypatch):
    monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setattr(os, "cpu_count", lambda: 3)
    assert refusal(config(cpu_affinity=[3])) == (
        "cpu_affinity=[3] is invalid; cores of this machine: a non-empty list from [0, 1, 2] (3 is not one)"
    )
    assert validate(config(cpu_affinity=[2])).cpu_affinity == [2]
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert refusal(config(cpu_affinity=[1])).endswith("a non-empty list from [0] (1 is not one)")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"envs": "py"}, "envs='py' is invalid; a mapping {name: path/to/python, ...}"),
        (
            {"envs": {"a": "/venv/a/bin/python"}},
            "envs={'a': '/venv/a/bin/python'} is invalid; at least two environments, {name: path/to/python, ...}; "
            "the first is the baseline",
        ),
        (
            {"envs": {"a": "/p", " ": "/q"}},
            "envs. ='/q' is invalid; a name and the path of that environment's Python interpreter",
        ),
        (
            {"envs": {"a": "/p", "b": " "}},
            "envs.b=' ' is invalid; a name and the path of that environment's Python interpreter",
        ),
        (
            {"envs": {"a": "/p", "b": 3}},
            "envs.b=3 is invalid; a name and the path of that environment's Python interpreter",
        ),
        (
            {"envs": {1: "/p", "b": "/q"}},
            "envs.1='/p' is invalid; a name and the path of that environment's Python interpreter",
        ),
        (
            {"envs": ENVS, "isolate": "none"},
            "isolate='none' is invalid; envs measures in worker processes of each environment: use isolate=process",
        ),
        (
            {"envs": ENVS, "variants": VARIANTS},
            f"envs={ENVS!r} is invalid; envs and variants cannot be combined in one job: measure one of them",
        ),
        (
            {"profile": True, "envs": ENVS},
            "profile=True is invalid; profiles one version of a job: run it in a job without envs or variants",
        ),
        (
            {"profile": True, "variants": VARIANTS},
            "profile=True is invalid; profiles one version of a job: run it in a job without envs or variants",
        ),
        (
            {"variants": VARIANTS, "sequence": [{"n": 2}]},
            "sequence='[...]' is invalid; the retrace probe calls one config; run it in a job without variants",
        ),
        (
            {"sequence": [{"n": 2}]},
            "sequence[0]={'n': 2} is invalid; needs the config composed from YAML (the command line or "
            "jitexp.compose) so that each variant's arguments resolve",
        ),
        (
            {"sequence": [{"_args": [], "n": 2}, 3]},
            "sequence[1]=3 is invalid; needs the config composed from YAML (the command line or "
            "jitexp.compose) so that each variant's arguments resolve",
        ),
    ],
)
def test_envs_profile_variants_and_sequence_mistakes(changes, message):
    assert refusal(config(**changes)) == message


def test_envs_profile_variants_and_a_composed_sequence_that_fit_are_kept(tmp_path):
    assert validate(config(envs=ENVS)).envs == ENVS
    assert validate(config(variants=VARIANTS)).variants == VARIANTS
    assert validate(config(profile=True)).profile is True
    assert validate(config(sequence=[{"_args": [], "n": 2}])).sequence == [{"_args": [], "n": 2}]
    cache = str(tmp_path / "cache")
    assert validate(config(compilation_cache_dir=cache)).compilation_cache_dir == cache


def test_a_disk_cache_folder_is_refused_with_variants(tmp_path):
    assert refusal(config(variants=VARIANTS, compilation_cache_dir=str(tmp_path))) == (
        f"compilation_cache_dir={str(tmp_path)!r} is invalid; the disk-cache probe measures one config; run it in a "
        "job without variants"
    )


# ---- the function, its modes and its NumPy twin ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"workload": {"fn": "f"}}, "workload.fn='f' is invalid; an import path like package.module.function"),
        (
            {"mode": {"eager": False, "jit": False}},
            "mode=[] is invalid; select at least one mode: eager, jit, aot, numpy (several as mode=[eager,jit])",
        ),
        (
            {"workload": {"numpy_fn": "twin"}},
            "workload.numpy_fn='twin' is invalid; an import path like package.module.function",
        ),
        (
            {"mode": {"numpy": True}},
            "mode='numpy' is invalid; workload f declares no numpy_fn (a NumPy twin); select eager, jit or aot, or "
            "set workload.numpy_fn",
        ),
        (
            {"mode": {"numpy": True}, "workload": {"name": "mine"}},
            "mode='numpy' is invalid; workload mine declares no numpy_fn (a NumPy twin); select eager, jit or aot, "
            "or set workload.numpy_fn",
        ),
    ],
)
def test_function_and_mode_mistakes(changes, message):
    assert refusal(config(**changes)) == message


def test_a_numpy_mode_with_a_twin_is_kept():
    cfg = config(mode={"numpy": True}, workload={"numpy_fn": "pkg.mod.f_numpy"})
    assert validate(cfg).mode.names == ("eager", "jit", "numpy")


# ---- the inputs: args or setup, keywords, names, carry, jit_fn -------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"workload": {"setup": "pkg.mod.make"}},
            "workload.setup='pkg.mod.make' is invalid; a workload gives workload.args or workload.setup, not both "
            "(workload.args=null to use setup)",
        ),
        (
            {"workload": {"args": None}},
            "workload.args is invalid; needs the function's arguments, e.g. "
            "'workload.args=[{shape:[${size}]},{value:3}]', or a function that builds them: "
            "workload.setup=package.module.make_inputs",
        ),
        (
            {"workload": {"args": None, "setup": "make"}},
            "workload.setup='make' is invalid; an import path like package.module.make_inputs",
        ),
        (
            {"workload": {"args": {"shape": [8]}}},
            "workload.args={'shape': [8]} is invalid; a list of array specs and literals",
        ),
        (
            {"workload": {"jit_fn": "jit"}},
            "workload.jit_fn='jit' is invalid; an import path like jax.jit, equinox.filter_jit or flax.nnx.jit",
        ),
        (
            {"mode": {"jit_fn": "filter_jit"}},
            "mode.jit_fn='filter_jit' is invalid; an import path like jax.jit, equinox.filter_jit or flax.nnx.jit",
        ),
        ({"workload": {"kwargs": {"1x": 3}}}, "workload.kwargs='1x' is invalid; keyword names (Python identifiers)"),
        (
            {"workload": {"static_argnames": ["ok", "a-b"]}},
            "workload.static_argnames='a-b' is invalid; keyword names (Python identifiers)",
        ),
        (
            {"mode": {"static_argnames": ["a b"]}, "workload": {"static_argnames": ["fine"]}},
            "mode.static_argnames='a b' is invalid; keyword names (Python identifiers)",
        ),
        ({"mode": {"donate_argnames": [3]}}, "mode.donate_argnames=3 is invalid; keyword names (Python identifiers)"),
        (
            {"workload": {"carry": {0: -1}}},
            "workload.carry={0: -1} is invalid; {output position: argument position}, e.g. {0: 0, 1: 1}",
        ),
        (
            {"workload": {"carry": {-1: 0}}},
            "workload.carry={-1: 0} is invalid; {output position: argument position}, e.g. {0: 0, 1: 1}",
        ),
        (
            {"workload": {"carry": {"0": 0}}},
            "workload.carry={'0': 0} is invalid; {output position: argument position}, e.g. {0: 0, 1: 1}",
        ),
        (
            {"workload": {"carry": {0: "0"}}},
            "workload.carry={0: '0'} is invalid; {output position: argument position}, e.g. {0: 0, 1: 1}",
        ),
        (
            {"workload": {"carry": {0: 0, 1: 2}}},
            "workload.carry={0: 0, 1: 2} is invalid; argument positions must lie in [0, 2) for 2 argument(s)",
        ),
        (
            {"workload": {"kwargs": {"x": {"shape": "8"}}}},
            "workload.kwargs.x.shape='8' is invalid; a list of non-negative ints, e.g. [${size}, ${size}]",
        ),
    ],
)
def test_input_mistakes(changes, message):
    assert refusal(config(**changes)) == message


def test_inputs_that_fit_are_kept():
    cfg = config(
        workload={
            "kwargs": {"scale": 2.0, "x": {"shape": [8]}, "opt": {"value": 1}},
            "static_argnames": ["scale"],
            "carry": {0: 0, 1: 1},
            "jit_fn": "equinox.filter_jit",
        },
        mode={"donate_argnames": ["x"], "jit_fn": "jax.jit"},
    )
    assert validate(cfg) is cfg
    setup = config(workload={"args": None, "setup": "pkg.mod.make", "carry": {0: 5}, "static_argnums": [7]})
    assert validate(setup) is setup  # positions are checked against what setup returns, in the worker


# ---- one argument ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        (3, "workload.args[1]=3 is invalid; a mapping: {shape: [...], dtype: ..., init: ...} or {value: ...}"),
        (
            {"value": 3, "shape": [2]},
            "workload.args[1]={'value': 3, 'shape': [2]} is invalid; a literal is {value: ...} alone",
        ),
        (
            {"shape": [2], "shap": [3]},
            "workload.args[1].shap=[3] is invalid; did you mean workload.args[1].shape? array keys: shape, dtype, "
            "init, scale, start (or a literal {value: ...})",
        ),
        (
            {"shape": [2], "zzz": 1, "yyy": 2},
            "workload.args[1].yyy=2 is invalid; array keys: shape, dtype, init, scale, start (or a literal "
            "{value: ...})",
        ),
        ({"shape": 8}, "workload.args[1].shape=8 is invalid; a list of non-negative ints, e.g. [${size}, ${size}]"),
        ({}, "workload.args[1].shape is invalid; a list of non-negative ints, e.g. [${size}, ${size}]"),
        (
            {"shape": [2, True]},
            "workload.args[1].shape=[2, True] is invalid; a list of non-negative ints, e.g. [${size}, ${size}]",
        ),
        (
            {"shape": [2, -1]},
            "workload.args[1].shape=[2, -1] is invalid; a list of non-negative ints, e.g. [${size}, ${size}]",
        ),
        (
            {"shape": [2.0]},
            "workload.args[1].shape=[2.0] is invalid; a list of non-negative ints, e.g. [${size}, ${size}]",
        ),
        (
            {"shape": [2], "dtype": "float8"},
            "workload.args[1].dtype='float8' is invalid; valid choices: float32, float16, bfloat16, float64, int8, "
            "int16, int32, int64, uint8, uint32, bool, complex64, complex128",
        ),
        (
            {"shape": [2], "init": "gaussian"},
            "workload.args[1].init='gaussian' is invalid; valid choices: normal, uniform, zeros, ones, arange",
        ),
        ({"shape": [2], "scale": "big"}, "workload.args[1].scale='big' is invalid; a number"),
        ({"shape": [2], "start": None}, "workload.args[1].start is invalid; a number"),
    ],
)
def test_an_argument_mistake_names_the_argument_and_its_key(arg, message):
    assert refusal(config(workload={"args": [{"shape": [8]}, arg]})) == message


def test_an_argument_takes_the_jobs_dtype_unless_it_names_its_own():
    assert refusal(config(workload={"args": [{"shape": [2]}]}, dtype="int8")) == (
        "dtype='int8' is invalid; valid choices: float32, float16, bfloat16, float64"
    )
    kept = config(workload={"args": [{"shape": [0, 2], "dtype": "int8", "init": "arange", "scale": 2, "start": 1.5}]})
    assert validate(kept) is kept


# ---- the workload's rules on its params ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "rule", "message"),
    [
        ({"m": 1}, ">= 0", "workload.checks.n='>= 0' is invalid; names no param; params: m"),
        ({"m": 1, "k": 2}, ">= 0", "workload.checks.n='>= 0' is invalid; names no param; params: m, k"),
        ({}, ">= 0", "workload.checks.n='>= 0' is invalid; names no param; params: (none)"),
        ({"n": True}, ">= 0", "workload.params.n=True is invalid; must be a number >= 0"),
        ({"n": "3"}, ">= 0", "workload.params.n='3' is invalid; must be a number >= 0"),
        ({"n": 1}, "=> 0", """workload.checks.n='=> 0' is invalid; comparisons like ">= 0" joined by " and \""""),
        ({"n": 1}, ">= zero", """workload.checks.n='>= zero' is invalid; comparisons like ">= 0" joined by " and \""""),
        ({"n": -1}, ">= 0", "workload.params.n=-1 is invalid; must be >= 0"),
        ({"n": 0}, "> 0", "workload.params.n=0 is invalid; must be > 0"),
        ({"n": 10}, ">= 0 and < 10", "workload.params.n=10 is invalid; must be >= 0 and < 10"),
        ({"n": 10.5}, "<= 10", "workload.params.n=10.5 is invalid; must be <= 10"),
    ],
)
def test_a_param_outside_its_workloads_rule_is_refused(params, rule, message):
    assert refusal(config(workload={"params": params, "checks": {"n": rule}})) == message


@pytest.mark.parametrize(
    ("value", "rule"),
    [(0, ">= 0"), (1, "> 0"), (9.5, ">= 0 and < 10"), (10, "<= 10"), (10.0, " >= 10 and <= 10 "), (0, ">=  0")],
)
def test_a_param_inside_its_workloads_rule_is_kept(value, rule):
    cfg = config(workload={"params": {"n": value}, "checks": {"n": rule}})
    assert validate(cfg) is cfg


# ---- static and donated positions ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"mode": {"static_argnums": [2]}},
            "mode.static_argnums=[2] is invalid; indices must lie in [0, 2) for 2 argument(s)",
        ),
        (
            {"mode": {"static_argnums": [-3]}},
            "mode.static_argnums=[-3] is invalid; indices must lie in [0, 2) for 2 argument(s)",
        ),
        (
            {"workload": {"static_argnums": [1, 5]}},
            "workload.static_argnums=[1, 5] is invalid; indices must lie in [0, 2) for 2 argument(s)",
        ),
        (
            {"mode": {"static_argnums": [0]}},
            "mode.static_argnums=[0] is invalid; argument 0 is an array; only literal {value: ...} arguments can be "
            "static",
        ),
        (
            {"mode": {"donate_argnums": [1]}},
            "mode.donate_argnums=[1] is invalid; positions of traced array arguments: [0]",
        ),
        (
            {"mode": {"donate_argnums": None}, "workload": {"donate_argnums": [2]}},
            "mode.donate_argnums=[2] is invalid; positions of traced array arguments: [0]",
        ),
    ],
)
def test_static_and_donated_positions_out_of_place_are_refused(changes, message):
    assert refusal(config(**changes)) == message


@pytest.mark.parametrize(
    "changes",
    [
        {"mode": {"static_argnums": [1]}},
        {"mode": {"static_argnums": [-1]}},
        {"mode": {"static_argnums": [-2]}, "workload": {"args": [{"value": 3}, {"shape": [8]}]}},
        {"workload": {"static_argnums": [1]}},
        {"mode": {"static_argnums": [], "donate_argnums": [0]}, "workload": {"static_argnums": [0]}},
        {"mode": {"donate_argnums": None}, "workload": {"donate_argnums": [0]}},
    ],
)
def test_static_literals_and_donated_arrays_are_kept(changes):
    cfg = config(**changes)
    assert validate(cfg) is cfg


def test_a_negative_static_position_keeps_its_array_from_being_donated():
    cfg = config(workload={"args": [{"shape": [8]}, {"value": 3}, {"shape": [8]}]}, mode={"static_argnums": [-2]})
    assert validate(cfg) is cfg
    donated = dataclasses.replace(cfg, mode=dataclasses.replace(cfg.mode, donate_argnums=[2]))
    assert validate(donated) is donated


# ---- a disk-cache folder --------------------------------------------------------------------------------------------


def test_a_cache_folder_may_not_exist_yet_but_must_be_writable_where_it_would_be(tmp_path, monkeypatch):
    probes = []
    real_mkdtemp = tempfile.mkdtemp

    def probe(**kwargs):
        probes.append(Path(real_mkdtemp(**kwargs)))
        return str(probes[-1])

    monkeypatch.setattr(tempfile, "mkdtemp", probe)
    writable_dir("compilation_cache_dir", str(tmp_path / "a" / "b"))
    [made] = probes  # a hidden folder made and removed in the nearest folder that exists
    assert made.parent == tmp_path and made.name.startswith(".jitexp-probe-")
    assert list(tmp_path.iterdir()) == []  # probed, nothing left behind and nothing created
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError) as caught:
        writable_dir("compilation_cache_dir", str(tmp_path / "file" / "cache"))
    assert str(caught.value) == (
        f"compilation_cache_dir={str(tmp_path / 'file' / 'cache')!r} is invalid; {tmp_path / 'file'} is a file, "
        "not a directory"
    )
    assert refusal(config(compilation_cache_dir=str(tmp_path / "file"))) == (
        f"compilation_cache_dir={str(tmp_path / 'file')!r} is invalid; {tmp_path / 'file'} is a file, not a directory"
    )


@pytest.mark.parametrize(
    ("error", "words"), [(PermissionError(13, "Permission denied"), "Permission denied"), (OSError("full"), "full")]
)
def test_a_cache_folder_that_cannot_be_written_says_why(tmp_path, monkeypatch, error, words):
    def refuse(**kwargs):
        raise error

    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    with pytest.raises(ConfigError) as caught:
        writable_dir("k", str(tmp_path / "new"))
    assert str(caught.value) == f"k={str(tmp_path / 'new')!r} is invalid; cannot write in {tmp_path}: {words}"
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


def test_a_cache_folder_under_the_home_folder_is_written_as_tilde(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    writable_dir("k", "~/cache")
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match=f"{tmp_path / 'f'} is a file"):
        writable_dir("k", "~/f/cache")


# ---- param types, the schema's words, unknown keys ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("default", "value", "message"),
    [
        (3, 2.5, "workload.params.p=2.5 is invalid; must be an integer like its default (3)"),
        (3, True, "workload.params.p=True is invalid; must be an integer like its default (3)"),
        (1.5, "x", "workload.params.p='x' is invalid; must be a number like its default (1.5)"),
        (1.5, False, "workload.params.p=False is invalid; must be a number like its default (1.5)"),
        (True, 1, "workload.params.p=1 is invalid; must be true or false like its default (True)"),
        ("a", 1, "workload.params.p=1 is invalid; must be a string like its default ('a')"),
    ],
)
def test_a_param_of_another_type_than_its_default_is_refused(default, value, message):
    with pytest.raises(ConfigError) as caught:
        check_param_types({"p": default}, {"p": value})
    assert str(caught.value) == message


def test_a_param_after_one_without_a_typed_default_is_still_checked():
    for defaults, params in (
        ({"absent": 1, "p": 3}, {"p": 2.5}),
        ({"none": None, "p": 3}, {"none": 1, "p": 2.5}),
        ({"list": [1], "p": 3}, {"list": "x", "p": 2.5}),
    ):
        with pytest.raises(ConfigError, match=r"^workload\.params\.p=2\.5 is invalid"):
            check_param_types(defaults, params)


def test_a_param_of_its_defaults_type_or_without_a_typed_default_is_kept():
    check_param_types(
        {"i": 3, "f": 1.5, "b": True, "s": "a", "none": None, "list": [1], "absent": 3},
        {"i": 4, "f": 2, "b": False, "s": "b", "none": "anything", "list": "anything"},
    )


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("size", "must be an integer"),
        ("timing.max_time_s", "must be a number"),
        ("check", "must be true or false"),
        ("dtype", "must be a string"),
        ("workload.name", "must be a string or null"),
        ("timing.cold_processes", "must be an integer or null"),
        ("workload.static_argnums", "must be a list of integers"),
        ("mode.static_argnums", "must be a list of integers or null"),
        ("workload.static_argnames", "must be a list"),
        ("sequence", "must be a list of mappings"),
        ("workload.kwargs", "must be a mapping"),
        ("workload.args", "must be a list or null"),
        ("roofline", "has the wrong type"),
        ("size.bits", "has the wrong type"),
        ("nothing", "has the wrong type"),
    ],
)
def test_the_schemas_type_at_a_key_in_words(key, words):
    assert expected_type(key) == words


def test_an_unknown_key_says_the_close_one_or_the_keys_beside_it():
    assert str(unknown_key("timing.warmpu", 3, ["warmup", "processes"])) == (
        "timing.warmpu=3 is invalid; no such key; did you mean timing.warmup?"
    )
    assert str(unknown_key("sise", 64, ["size", "seed"])) == "sise=64 is invalid; no such key; did you mean size?"
    assert str(unknown_key("timing.zzz", 1, ["warmup", "processes"])) == (
        "timing.zzz=1 is invalid; no such key; timing has processes, warmup"
    )
    assert str(unknown_key("zzz", 1, [])) == "zzz=1 is invalid; no such key; the config has none"


def test_unknown_keys_are_found_at_any_depth_and_known_ones_kept():
    unknown_keys({"size": 8, "timing": {"warmup": 1}, "workload": {"params": {"anything": 1}}})
    unknown_keys("not a mapping")
    with pytest.raises(ConfigError) as caught:
        unknown_keys({"size": 8, "timing": {"warmpu": 1}})
    assert str(caught.value) == "timing.warmpu=1 is invalid; no such key; did you mean timing.warmup?"
    with pytest.raises(ConfigError) as caught:
        unknown_keys({"sise": 8})
    assert str(caught.value) == "sise=8 is invalid; no such key; did you mean size?"
