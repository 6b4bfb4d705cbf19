"""config/usage.py, exactly: each key a job would not use is refused as the one line the user reads (key, value, what
to write instead), and the values beside each refusal are kept. Configs are built as dataclasses, and the composed
config the preflight hands over (`task`: unresolved, what refers to what) as the plain dict it is, without Hydra: every
rule reached directly, as test_validate.py does for validate.py. The same refusals from a command line: one per rule
family in tests/unit/test_inputs_used.py, every documented key in tests/inprocess/test_keys_used.py."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path

import pytest

from helpers import job_config
from jitexp.config import ExperimentConfig
from jitexp.config.usage import NOT_JIT, READS, _referenced, check_used, own_dtype, reads_dtype
from jitexp.errors import ConfigError

FN = "pkg.mod.f"


def config(**changes) -> ExperimentConfig:
    """A job that uses every key it sets (fn pkg.mod.f of one random 8-vector, eager and jit), with the changes given."""
    return job_config([{"shape": [8]}], **changes)


def eager(**changes) -> ExperimentConfig:
    """The job measuring eager alone: no compiled mode."""
    return config(mode={"jit": False, **changes.pop("mode", {})}, **changes)


def refusal(exp: ExperimentConfig, task: dict | None = None, given=()) -> str:
    with pytest.raises(ConfigError) as caught:
        check_used(exp, task, given)
    return str(caught.value)


def kept(exp: ExperimentConfig, task: dict | None = None, given=()) -> None:
    assert check_used(exp, task, given) is None


def task_of(workload: dict | None = None, **top) -> dict:
    """The composed config as the preflight hands it over: unresolved, without Hydra's node."""
    return {"workload": {"fn": FN, "args": [{"shape": ["${size}"]}], **(workload or {})}, "size": 8, **top}


def test_a_job_that_uses_everything_it_sets_is_kept():
    kept(config())
    kept(config(), task_of(), ["workload", "size", "seed", "dtype", "mode"])


# ---- the jit transformation ---------------------------------------------------------------------------------------

NOT_A_JIT = [
    "jax.checkpoint",
    "jax.remat",
    "jax.vmap",
    "jax.pmap",
    "jax.grad",
    "jax.value_and_grad",
    "jax.jacfwd",
    "jax.jacrev",
    "jax.hessian",
]


def test_the_transformations_that_are_not_a_jit():
    assert list(NOT_JIT) == NOT_A_JIT


@pytest.mark.parametrize("name", NOT_A_JIT)
def test_a_transformation_that_is_not_a_jit_is_refused_naming_where_it_was_set(name):
    why = (
        f"is not a jit transformation: the jit and aot rows would time {name}(fn), uncompiled; write jax.jit, "
        "equinox.filter_jit or flax.nnx.jit, and apply other transformations inside workload.fn"
    )
    assert refusal(config(mode={"jit_fn": name})) == f"mode.jit_fn={name!r} is invalid; {why}"
    assert refusal(config(workload={"jit_fn": name})) == f"workload.jit_fn={name!r} is invalid; {why}"
    # the mode's wins over the workload's: a jit there makes the workload's vmap unused, not wrong
    kept(config(workload={"jit_fn": name}, mode={"jit_fn": "jax.jit"}))


@pytest.mark.parametrize("name", ["jax.jit", "equinox.filter_jit", "flax.nnx.jit", "jax.vmapped", "mine.checkpoint"])
def test_a_jit_transformation_is_kept(name):
    kept(config(mode={"jit_fn": name}))
    kept(config(workload={"jit_fn": name}))


# ---- what only compiled modes read ----------------------------------------------------------------------------------

FIX = "measure a compiled mode beside it (mode=[eager,jit]) or drop it"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"mode": {"donate_argnums": [0]}},
            f"mode.donate_argnums=[0] is invalid; applies to the compiled modes (jit, aot) and mode=eager has none; {FIX}",
        ),
        (
            {"mode": {"donate_argnames": ["x"]}},
            "mode.donate_argnames=['x'] is invalid; applies to the compiled modes (jit, aot) and mode=eager has none; "
            + FIX,
        ),
        (
            {"mode": {"compiler_options": {"xla_flag": 1}}},
            "mode.compiler_options={'xla_flag': 1} is invalid; applies to the compiled modes (jit, aot) and mode=eager "
            f"has none; {FIX}",
        ),
        (
            {"profile": True},
            f"profile=True is invalid; profiles the compiled modes (jit, aot) and mode=eager has none; {FIX}",
        ),
        (
            {"cache_probe": True},
            "cache_probe=True is invalid; probes the compiled modes' (jit, aot) disk cache and mode=eager has none; "
            + FIX,
        ),
    ],
)
def test_what_only_compiled_modes_read_is_refused_without_one(changes, message):
    assert refusal(eager(**changes)) == message
    # whatever the command line set (these are refused from a preset's or a workload's file too)
    assert refusal(eager(**changes), task_of(), ["size"]) == message
    kept(config(**changes))  # eager and jit
    top = {k: v for k, v in changes.items() if k != "mode"}
    kept(config(mode={"eager": False, "jit": False, "aot": True, **changes.get("mode", {})}, **top))


def test_the_fix_lists_every_mode_measured():
    assert refusal(eager(mode={"numpy": True}, profile=True)) == (
        "profile=True is invalid; profiles the compiled modes (jit, aot) and mode=eager,numpy has none; measure a "
        "compiled mode beside it (mode=[eager,numpy,jit]) or drop it"
    )


@pytest.mark.parametrize("donate", [[], None])
def test_nothing_donated_is_kept_without_a_compiled_mode(donate):
    kept(eager(mode={"donate_argnums": donate, "donate_argnames": [], "compiler_options": {}}))


def test_the_first_key_compiled_modes_read_is_named():
    everything = {"donate_argnums": [0], "donate_argnames": ["x"], "compiler_options": {"a": 1}}
    assert refusal(eager(mode=everything, profile=True, cache_probe=True)).startswith("mode.donate_argnums=[0] ")
    assert refusal(eager(mode={**everything, "donate_argnums": []}, profile=True)).startswith("mode.donate_argnames=")
    assert refusal(eager(mode={"compiler_options": {"a": 1}}, profile=True)).startswith("mode.compiler_options=")
    assert refusal(eager(profile=True, cache_probe=True)).startswith("profile=True ")


# ---- what an argument's init reads ---------------------------------------------------------------------------------

READERS = {"scale": "only normal, uniform, ones, arange do", "start": "only arange does"}


def test_what_each_init_reads():
    assert READS == {
        "normal": ("scale",),
        "uniform": ("scale",),
        "zeros": (),
        "ones": ("scale",),
        "arange": ("scale", "start"),
    }


@pytest.mark.parametrize(
    ("arg", "option"),
    [
        ({"shape": [8], "start": 2}, "start"),  # normal, by default
        ({"shape": [8], "init": "normal", "start": 2}, "start"),
        ({"shape": [8], "init": "uniform", "start": 0}, "start"),  # a 0 is written, so read or refused
        ({"shape": [8], "init": "ones", "start": 1}, "start"),
        ({"shape": [8], "init": "zeros", "scale": 3}, "scale"),
        ({"shape": [8], "init": "zeros", "start": 3}, "start"),
    ],
)
def test_an_option_the_arguments_init_does_not_read_is_refused(arg, option):
    init = arg.get("init", "normal")
    why = (
        f"is invalid; init {init} does not read {option} ({READERS[option]}); drop it, or set {{key}}.init to one "
        "that does"
    )
    key = "workload.args[1]"
    exp = config(workload={"args": [{"shape": [8]}, arg]})
    assert refusal(exp) == f"{key}.{option}={arg[option]!r} " + why.format(key=key)
    key = "workload.kwargs.y"
    exp = config(workload={"kwargs": {"x": 3, "y": arg}})
    assert refusal(exp) == f"{key}.{option}={arg[option]!r} " + why.format(key=key)


@pytest.mark.parametrize(
    "arg",
    [
        {"shape": [8], "scale": 2.0},
        {"shape": [8], "init": "uniform", "scale": 2.0},
        {"shape": [8], "init": "ones", "scale": 2.0},
        {"shape": [8], "init": "arange", "scale": 2.0, "start": 1},
        {"shape": [8], "init": "zeros"},
        {"shape": [8], "init": "lognormal", "scale": 2.0, "start": 1},  # validate names an unknown init
        {"value": 3, "start": 1},  # a literal, not an array spec
    ],
)
def test_an_option_the_init_reads_is_kept(arg):
    kept(config(workload={"args": [arg]}))
    kept(config(workload={"args": [], "kwargs": {"y": arg, "z": 2}}))


# ---- seed ------------------------------------------------------------------------------------------------------------

SEED = (
    "seed=3 is invalid; no input is random (every array argument's init is zeros, ones or arange), so the seed "
    "changes nothing; drop it, or give an argument init: normal"
)


@pytest.mark.parametrize(
    "workload",
    [
        {"args": [{"shape": [8], "init": "arange"}]},
        {"args": [{"shape": [8], "init": "zeros"}, {"shape": [8], "init": "ones"}, {"value": 1.5}]},
        {"args": [{"value": 3}]},
        {"args": [], "kwargs": {"y": {"shape": [8], "init": "zeros"}}},
        {"args": []},
    ],
)
def test_a_seed_that_no_input_reads_is_refused_when_the_command_line_sets_it(workload):
    exp = config(workload=workload, seed=3)
    assert refusal(exp, given=["seed"]) == SEED
    assert refusal(exp, task_of(), given=["+seed"]) == SEED
    kept(exp)  # the default seed is nobody's word
    kept(exp, task_of(), ["size"])


@pytest.mark.parametrize(
    "workload",
    [
        {"args": [{"shape": [8], "init": "zeros"}, {"shape": [8]}]},  # normal, by default
        {"args": [{"shape": [8], "init": "normal"}]},
        {"args": [{"shape": [8], "init": "uniform"}]},
        {"args": [{"value": 3}], "kwargs": {"y": {"shape": [8], "init": "uniform"}}},
        {"args": None, "setup": "pkg.mod.setup"},  # a setup gets the seed
        {"args": [{"shape": [8], "init": "zeros"}], "setup": "pkg.mod.setup"},
    ],
)
def test_a_seed_that_an_input_reads_is_kept(workload):
    kept(config(workload=workload, seed=3), given=["seed"])


# ---- params: each reaches an argument ----------------------------------------------------------------------------------


def unused_param(name, value, guess=""):
    return (
        f"workload.params.{name}={value!r} is invalid; {guess}no argument of {FN} refers to it "
        f"(${{workload.params.{name}}}), so it would only label the rows; drop it, or use it in workload.args or "
        "workload.kwargs"
    )


def test_a_param_no_argument_refers_to_is_refused():
    params = {"n": 3, "m": 4}
    exp = config(workload={"params": params})
    task = task_of({"params": params, "args": [{"shape": ["${workload.params.n}"]}]})
    assert refusal(exp, task) == unused_param("m", 4)
    assert refusal(exp, task_of({"params": params})) == unused_param("n", 3)  # the first one, in order
    kept(exp)  # without the composed config nothing tells what refers to what


def test_an_unused_param_close_to_a_used_one_says_which_was_meant():
    params = {"features": 256, "feature": 128, "zz": 1}
    exp = config(workload={"params": params})
    task = task_of({"params": params, "args": [{"shape": ["${workload.params.features}"]}]})
    assert refusal(exp, task) == unused_param("feature", 128, "did you mean workload.params.features? ")
    del params["feature"]
    assert refusal(config(workload={"params": params}), task) == unused_param("zz", 1)  # nothing close
    params = {"features": 256, "zz": 1}  # a close name that is unused itself is no guess
    task = task_of({"params": params, "args": [{"shape": ["${workload.params.zz}"]}]})
    assert refusal(config(workload={"params": params}), task) == unused_param("features", 256)


@pytest.mark.parametrize(
    "task",
    [
        task_of({"params": {"n": 3}, "args": [{"shape": [8]}, {"value": "${workload.params.n}"}]}),
        task_of({"params": {"n": 3}, "kwargs": {"times": "${workload.params.n}"}}),
        task_of({"params": {"n": 3}}, sequence=[{"size": "${workload.params.n}"}]),
    ],
)
def test_a_param_an_argument_refers_to_is_kept(task):
    kept(config(workload={"params": {"n": 3}}), task)


@pytest.mark.parametrize(
    "task",
    [
        task_of({"params": {"n": 3}, "checks": {"n": "${workload.params.n} > 0"}}),
        task_of({"params": {"n": 3, "m": "${workload.params.n}"}}),
        task_of({"params": {"n": 3}}, variants={"a": {"workload.args": ["${workload.params.n}"]}, "b": {}}),
    ],
    ids=["in checks", "in another param", "in variants"],
)
def test_a_param_referred_to_only_by_checks_params_or_variants_is_refused(task):
    assert refusal(config(workload={"params": {"n": 3}}), task) == unused_param("n", 3)


def test_a_param_without_any_reference_is_kept_for_a_setup_which_gets_them_all():
    exp = config(workload={"params": {"n": 3}, "setup": "pkg.mod.setup", "args": None})
    kept(exp, task_of({"params": {"n": 3}}))
    kept(config(), task_of({"params": {}}))


def test_the_composed_config_is_read_not_changed():
    task = task_of(
        {
            "params": {"n": 3},
            "checks": {"n": "> 0"},
            "args": [{"shape": ["${size}", "${workload.params.n}"]}],
            "name": Path("label"),  # a value JSON has no type for is read as its text
        },
        variants={"a": {}, "b": {}},
        compilation_cache_dir=Path("kept"),
    )
    before = copy.deepcopy(task)
    kept(config(workload={"params": {"n": 3}}), task, ["size"])
    assert task == before
    del task["workload"]  # a config without the node: nothing refers to the param
    assert refusal(config(workload={"params": {"n": 3}}), task) == unused_param("n", 3)


# ---- size: it reaches an argument ----------------------------------------------------------------------------------------

SIZE = (
    "size=64 is invalid; no argument of pkg.mod.f refers to ${size} (their shapes are fixed), so it would only label "
    "the rows; drop it, or write the shapes in terms of it, e.g. workload.args=[{shape:[${size}]}]"
)


@pytest.mark.parametrize(
    "workload",
    [
        {"args": [{"shape": [128]}]},
        # a param's text that names size, not ${size}
        {"args": [{"shape": [128]}, {"value": "${workload.params.kind}"}], "params": {"kind": "max_size"}},
        {"args": [{"shape": [128]}], "checks": {"n": "< ${size}"}},
        {"args": [], "kwargs": {"y": {"shape": [128]}}},
    ],
)
def test_a_size_no_argument_refers_to_is_refused_when_the_command_line_sets_it(workload):
    exp = config(workload={k: v for k, v in workload.items() if k != "checks"}, size=64)
    task = task_of(workload, size=64)
    assert refusal(exp, task, ["size"]) == SIZE
    no_params = dataclasses.replace(exp, workload=dataclasses.replace(exp.workload, params={}))
    assert refusal(no_params, {"size": 64}, ["size"]) == SIZE  # no workload node: nothing refers to it
    kept(exp, task)  # the default size is nobody's word
    kept(exp, None, ["size"])  # nor is anything told without the composed config


@pytest.mark.parametrize(
    "workload",
    [
        {"args": [{"shape": ["${size}"]}]},
        {"args": [{"shape": [128]}], "kwargs": {"y": {"shape": ["${size}", 2]}}},
        {"args": [], "kwargs": {}},
        {"args": None, "setup": "pkg.mod.setup"},  # a setup gets the size
        {"args": [{"shape": [128]}], "setup": "pkg.mod.setup"},
    ],
)
def test_a_size_an_argument_or_setup_reads_is_kept(workload):
    kept(config(workload=workload, size=64), task_of(workload, size=64), ["size"])


# ---- cores ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cores", "message"),
    [
        (
            [2, 1, 2],
            "cpu_affinity=[2, 1, 2] is invalid; names core 2 twice, and the workers would run on 2 core(s) with 3 BLAS "
            "threads; name each core once: [1, 2]",
        ),
        (
            [0, 1, 1, 0],
            "cpu_affinity=[0, 1, 1, 0] is invalid; names core 1 twice, and the workers would run on 2 core(s) with 4 "
            "BLAS threads; name each core once: [0, 1]",
        ),
        (
            [3, 3],
            "cpu_affinity=[3, 3] is invalid; names core 3 twice, and the workers would run on 1 core(s) with 2 BLAS "
            "threads; name each core once: [3]",
        ),
    ],
)
def test_a_core_named_twice_is_refused(cores, message):
    assert refusal(config(cpu_affinity=cores)) == message


@pytest.mark.parametrize("cores", [None, [], [0], [1, 0]])
def test_cores_named_once_are_kept(cores):
    kept(config(cpu_affinity=cores))


# ---- a sequence's python_scalars ------------------------------------------------------------------------------------

STATIC = (
    "sequence[{i}].python_scalars={scalars!r} is invalid; argument {arg} is static already (static_argnums={statics}), "
    "so passing it as a Python scalar changes nothing; name a traced literal argument, or drop it"
)
LITERAL = [{"shape": [8]}, {"value": 3}]


@pytest.mark.parametrize(
    ("workload", "mode", "sequence", "i", "arg", "statics"),
    [
        ({"static_argnums": [1]}, {}, [{"python_scalars": [1]}], 0, 1, [1]),
        ({"static_argnums": [1]}, {}, [{}, {"size": 4}, {"python_scalars": [0, 1]}], 2, 1, [1]),
        ({}, {"static_argnums": [1]}, [{"python_scalars": [1]}], 0, 1, [1]),  # the mode's statics
        ({"static_argnums": [-1]}, {}, [{"python_scalars": [1]}], 0, 1, [-1]),  # counted from the end
        ({"static_argnums": [1]}, {}, [{"python_scalars": [-1]}], 0, -1, [1]),
        ({"static_argnums": [0, 1]}, {}, [{"python_scalars": [3]}], 0, 3, [0, 1]),  # 3 of 2 is 1
    ],
)
def test_a_python_scalar_of_a_static_argument_is_refused(workload, mode, sequence, i, arg, statics):
    exp = config(workload={"args": LITERAL, **workload}, mode=mode, sequence=sequence)
    scalars = sequence[i]["python_scalars"]
    assert refusal(exp) == STATIC.format(i=i, scalars=scalars, arg=arg, statics=statics)


@pytest.mark.parametrize(
    ("workload", "mode", "sequence"),
    [
        ({"static_argnums": [1]}, {}, [{"python_scalars": [0]}]),
        ({"static_argnums": [1]}, {"static_argnums": []}, [{"python_scalars": [1]}]),  # the mode's win
        ({}, {}, [{"python_scalars": [1]}]),
        ({"static_argnums": [1]}, {}, [{"python_scalars": ["1"]}, {"python_scalars": None}, "as configured"]),
        ({"static_argnums": [0], "args": [], "setup": "pkg.mod.setup"}, {}, [{"python_scalars": [0]}]),
        ({"static_argnums": [0], "args": None, "setup": "pkg.mod.setup"}, {}, [{"python_scalars": [0]}]),
    ],
)
def test_a_python_scalar_of_a_traced_argument_is_kept(workload, mode, sequence):
    kept(config(workload={"args": LITERAL, **workload}, mode=mode, sequence=sequence))


# ---- keys the command line set that this job would not use -----------------------------------------------------------

MESH = "applies to a mesh, and the job has none (one device); set mesh.shape too, or drop it"
HELD = "retries a device another process holds, and a CPU is never held; drop it (it applies to gpu and tpu)"

# (the key the command line set, the job, the one line)
GIVEN = [
    (
        "mode.jit_fn",
        eager(mode={"jit_fn": "equinox.filter_jit"}),
        f"mode.jit_fn='equinox.filter_jit' is invalid; wraps the compiled modes (jit, aot) and mode=eager has none; {FIX}",
    ),
    (
        "workload.jit_fn",
        eager(workload={"jit_fn": "equinox.filter_jit"}),
        "workload.jit_fn='equinox.filter_jit' is invalid; wraps the compiled modes (jit, aot) and mode=eager has none; "
        + FIX,
    ),
    (
        "mode.jit_fn",
        eager(),  # jax.jit, the workload's, is in force
        f"mode.jit_fn='jax.jit' is invalid; wraps the compiled modes (jit, aot) and mode=eager has none; {FIX}",
    ),
    (
        "device_time",
        eager(device_time=True),
        f"device_time=True is invalid; traces the compiled modes (jit, aot) and mode=eager has none; {FIX}",
    ),
    (
        "workload.donate_argnums",
        eager(workload={"donate_argnums": [0]}),
        "workload.donate_argnums=[0] is invalid; applies to the compiled modes (jit, aot) and mode=eager has none; "
        + FIX,
    ),
    (
        "check",
        eager(check=True),
        "check=True is invalid; compares the other modes' outputs with eager's, and mode=eager is the only one; drop "
        "it, or measure another mode beside it (mode=[eager,jit])",
    ),
    (
        "workload.donate_argnums",
        config(workload={"donate_argnums": [0]}),
        "workload.donate_argnums=[0] is invalid; is in force only with mode.donate_argnums=null, and "
        "mode.donate_argnums=[] wins; write mode.donate_argnums=null too, or set mode.donate_argnums instead",
    ),
    (
        "workload.donate_argnums",
        config(workload={"donate_argnums": [0]}, mode={"donate_argnums": [1]}),
        "workload.donate_argnums=[0] is invalid; is in force only with mode.donate_argnums=null, and "
        "mode.donate_argnums=[1] wins; write mode.donate_argnums=null too, or set mode.donate_argnums instead",
    ),
    (
        "workload.numpy_fn",
        config(workload={"numpy_fn": "numpy.add"}),
        "workload.numpy_fn='numpy.add' is invalid; is the twin measured by mode numpy, and mode=eager,jit has none; "
        "add it (mode=[eager,jit,numpy]) or drop it",
    ),
    (
        "device.count",
        config(device={"count": 4}),
        "device.count=4 is invalid; gives each worker 4 devices, and without mesh.shape the job runs on one of them; "
        "set mesh.shape too (e.g. 'mesh.shape={data:4}'), or drop it",
    ),
    (
        "device.count",
        config(device={"count": 2}),
        "device.count=2 is invalid; gives each worker 2 devices, and without mesh.shape the job runs on one of them; "
        "set mesh.shape too (e.g. 'mesh.shape={data:2}'), or drop it",
    ),
    ("workload.shardings", config(workload={"shardings": {0: ["data"]}}), f"workload.shardings is invalid; {MESH}"),
    (
        "workload.out_shardings",
        config(workload={"out_shardings": ["data"]}),
        f"workload.out_shardings is invalid; {MESH}",
    ),
    ("mesh.axis_types", config(mesh={"axis_types": "explicit"}), f"mesh.axis_types is invalid; {MESH}"),
    (
        "device.premapped_buffer_bytes",
        config(device={"platform": "cpu", "premapped_buffer_bytes": 1000}),
        "device.premapped_buffer_bytes=1000 is invalid; sizes libtpu's pinned host buffer, and device.platform=cpu "
        "opens no TPU; drop it, or use device=tpu",
    ),
    (
        "device.premapped_buffer_bytes",
        config(device={"platform": "gpu"}),
        "device.premapped_buffer_bytes=268435456 is invalid; sizes libtpu's pinned host buffer, and "
        "device.platform=gpu opens no TPU; drop it, or use device=tpu",
    ),
    (
        "cpu_async_dispatch",
        config(device={"platform": "tpu"}, cpu_async_dispatch=True),
        "cpu_async_dispatch=True is invalid; sets the CPU client's dispatch, and device.platform=tpu measures on no "
        "CPU; drop it, or use device=cpu",
    ),
    (
        "cpu_async_dispatch",
        config(device={"platform": "gpu"}, cpu_async_dispatch=False),
        "cpu_async_dispatch=False is invalid; sets the CPU client's dispatch, and device.platform=gpu measures on no "
        "CPU; drop it, or use device=cpu",
    ),
    ("timing.open_retries", config(device={"platform": "cpu"}), f"timing.open_retries is invalid; {HELD}"),
    ("timing.open_wait_s", config(device={"platform": "cpu"}), f"timing.open_wait_s is invalid; {HELD}"),
    (
        "timing.cold_processes",
        config(timing={"cold_processes": 13}),
        "timing.cold_processes=13 is invalid; counts processes that measure the cold first calls, and the job starts "
        "12 at most (timing.max_processes); write at most 12, or raise timing.max_processes",
    ),
    (
        "timing.cold_processes",
        config(timing={"cold_processes": 5, "processes": 2, "max_processes": 4}),
        "timing.cold_processes=5 is invalid; counts processes that measure the cold first calls, and the job starts "
        "4 at most (timing.max_processes); write at most 4, or raise timing.max_processes",
    ),
    (
        "timing.interleave",
        config(mode={"eager": False}, timing={"interleave": "processes"}),
        "timing.interleave='processes' is invalid; alternates the modes between processes, and mode=jit is one (every "
        "process measures it either way); drop it, or measure two modes (mode=[eager,jit])",
    ),
    (
        "timing.prepare_next",
        config(timing={"prepare_next": True}, isolate="none"),
        "timing.prepare_next=True is invalid; forks the next worker process, and isolate=none starts none; drop it",
    ),
    (
        "compilation_cache",
        config(isolate="none"),
        "compilation_cache=True is invalid; is the job's cache for its fresh worker processes, and isolate=none has "
        "none of its own; drop it",
    ),
    (
        "compilation_cache",
        config(distributed={"processes": 2}),
        "compilation_cache=True is invalid; is the job's cache for its fresh worker processes, and "
        "distributed.processes=2 has none of its own; drop it",
    ),
    (
        "cache_probe",
        config(cache_probe=True, isolate="none"),
        "cache_probe=True is invalid; compares two fresh worker processes, and isolate=none starts none; drop it",
    ),
    (
        "compilation_cache_dir",
        config(compilation_cache=False, compilation_cache_dir="kept_cache"),
        "compilation_cache_dir='kept_cache' is invalid; is where the job's compilation cache lives, and "
        "compilation_cache=false turns it off; drop one of them",
    ),
]


@pytest.mark.parametrize(("key", "exp", "message"), GIVEN, ids=[f"{key}-{i}" for i, (key, _, _) in enumerate(GIVEN)])
def test_a_key_the_command_line_set_and_the_job_would_not_use_is_refused(key, exp, message):
    assert refusal(exp, given=[key]) == message
    assert refusal(exp, task_of(), ["size", f"+{key}"]) == message  # `+key=...` sets it too
    assert refusal(exp, None, [f"~{key}", "seed"]) == message
    kept(exp)  # a preset's or a workload's own value is nobody's word
    kept(exp, task_of(), ["size", "mode", "workload"])


# (the key the command line set, a job that uses it)
GIVEN_KEPT = [
    ("mode.jit_fn", config(mode={"jit_fn": "equinox.filter_jit"})),
    ("workload.jit_fn", config(mode={"eager": False, "aot": True, "jit": False})),
    ("device_time", eager(device_time=False)),
    ("device_time", config(mode={"eager": False})),
    ("workload.donate_argnums", eager(workload={"donate_argnums": []})),
    ("workload.donate_argnums", config(workload={"donate_argnums": [0]}, mode={"donate_argnums": None})),
    ("workload.donate_argnums", config(workload={"donate_argnums": []}, mode={"donate_argnums": [1]})),
    ("check", eager(check=False)),
    ("check", eager(mode={"numpy": True}, check=True)),
    ("check", config(mode={"eager": False}, check=True)),
    ("workload.numpy_fn", config(workload={"numpy_fn": "numpy.add"}, mode={"numpy": True})),
    ("workload.numpy_fn", config(workload={"numpy_fn": None})),
    ("device.count", config(device={"count": 1})),
    ("device.count", config(device={"count": 4}, mesh={"shape": {"data": 4}})),
    ("device.count", config(device={"count": 4}, distributed={"processes": 2})),
    ("workload.shardings", config(mesh={"shape": {"data": 4}})),
    ("workload.out_shardings", config(mesh={"shape": {"data": 2, "model": 2}})),
    ("mesh.axis_types", config(mesh={"shape": {"data": 4}, "axis_types": "explicit"})),
    ("device.premapped_buffer_bytes", config(device={"platform": "tpu"})),
    ("device.premapped_buffer_bytes", config(device={"platform": "auto"})),
    ("cpu_async_dispatch", config(device={"platform": "cpu"}, cpu_async_dispatch=True)),
    ("cpu_async_dispatch", config(device={"platform": "auto"}, cpu_async_dispatch=False)),
    ("cpu_async_dispatch", config(device={"platform": "tpu"}, cpu_async_dispatch=None)),
    ("timing.open_retries", config(device={"platform": "tpu"})),
    ("timing.open_wait_s", config(device={"platform": "auto"})),
    ("timing.cold_processes", config(timing={"cold_processes": 12})),
    ("timing.cold_processes", config(timing={"cold_processes": None})),
    ("timing.interleave", config(timing={"interleave": "processes"})),
    ("timing.interleave", config(mode={"eager": False}, timing={"interleave": "rounds"})),
    ("timing.prepare_next", config(timing={"prepare_next": False}, isolate="none")),
    ("timing.prepare_next", config(timing={"prepare_next": True})),
    ("compilation_cache", config(compilation_cache=False, isolate="none")),
    ("compilation_cache", config(compilation_cache=True)),
    ("cache_probe", config(cache_probe=False, isolate="none")),
    ("cache_probe", config(cache_probe=True)),
    ("compilation_cache_dir", config(compilation_cache=False, compilation_cache_dir="kept", cache_probe=True)),
    ("compilation_cache_dir", config(compilation_cache=True, compilation_cache_dir="kept")),
    ("compilation_cache_dir", config(compilation_cache=False, compilation_cache_dir=None)),
]


@pytest.mark.parametrize(("key", "exp"), GIVEN_KEPT, ids=[f"{key}-{i}" for i, (key, _) in enumerate(GIVEN_KEPT)])
def test_a_key_the_command_line_set_and_the_job_uses_is_kept(key, exp):
    kept(exp, task_of(), [key])


def with_variants(exp: ExperimentConfig, **meshes) -> ExperimentConfig:
    """exp with two variants as convert resolves them, each with the mesh given (None: the job's)."""

    def resolved(mesh):
        entry = {"workload": dataclasses.asdict(exp.workload), "mode": dataclasses.asdict(exp.mode)}
        entry.update(size=exp.size, dtype=exp.dtype, seed=exp.seed)
        if mesh is not None:
            entry["mesh"] = {"shape": mesh, "axis_types": "auto"}
        return {"_resolved": entry}

    return dataclasses.replace(exp, variants={name: resolved(mesh) for name, mesh in meshes.items()})


@pytest.mark.parametrize("key", ["workload.shardings", "workload.out_shardings", "mesh.axis_types", "device.count"])
def test_a_mesh_a_variant_has_is_a_mesh(key):
    exp = config(device={"count": 4})
    kept(with_variants(exp, a=None, b={"data": 4}), given=[key])
    kept(with_variants(exp, a={"data": 2}, b=None), given=[key])
    assert refusal(with_variants(exp, a=None, b=None), given=[key]).startswith(f"{key}")
    assert refusal(with_variants(exp, a={}, b=None), given=[key]).startswith(f"{key}")


# ---- dtype: something follows it -----------------------------------------------------------------------------------


def test_a_dtype_no_argument_follows_is_refused_when_the_command_line_sets_it():
    """convert labels the rows by the arguments' own dtype when nothing follows the job's: the composed config still
    holds the dtype written."""
    exp = config(workload={"args": [{"shape": [8], "dtype": "float64"}, {"shape": [8], "dtype": "int32"}]})
    exp.dtype = "float64"
    message = (
        "dtype is invalid; no argument of pkg.mod.f follows it (their dtypes are their own: {}), so it would only "
        "label the rows; drop it, or write the arguments' dtype as ${{dtype}}"
    )
    assert refusal(exp, task_of(dtype="float32"), ["dtype"]) == message.format("float64, int32")
    kwargs = config(workload={"args": [], "kwargs": {"y": {"shape": [8], "dtype": "float16"}, "z": 2}})
    kwargs.dtype = "float16"
    assert refusal(kwargs, task_of(dtype="float32"), ["+dtype"]) == message.format("float16")
    kept(exp, task_of(dtype="float32"))  # not the command line's
    kept(exp, task_of(dtype="float64"), ["dtype"])  # what was written is what the rows say
    kept(exp, task_of(), ["dtype"])  # the composed config has none: nothing to tell
    kept(exp, None, ["dtype"])


# ---- what follows the job's dtype (the rows' dtype column) --------------------------------------------------------------


@pytest.mark.parametrize(
    ("workload", "top"),
    [
        ({"args": None, "setup": "pkg.mod.setup"}, {}),  # a setup gets the dtype
        ({"args": [{"shape": [8], "dtype": "float64"}], "setup": "pkg.mod.setup"}, {}),
        ({"args": [], "kwargs": {}}, {}),  # nothing to tell
        ({"args": None}, {}),
        ({"args": [{"shape": [8]}]}, {}),  # ${dtype}, by default
        ({"args": [{"shape": [8], "dtype": "float64"}, {"shape": [8]}]}, {}),
        ({"args": [{"shape": [8], "dtype": "float32"}]}, {}),  # the job's own, resolved
        ({"args": [{"shape": [8], "dtype": "float64"}, {"value": 1.5}]}, {}),  # a float literal: the job's dtype
        ({"args": [{"shape": [8], "dtype": "float64"}], "kwargs": {"alpha": 0.5}}, {}),
        ({"args": [{"shape": [8], "dtype": "float64"}], "kwargs": {"alpha": {"value": 0.5}}}, {}),
        ({"args": [], "kwargs": {"y": {"shape": [8]}}}, {}),
        ({"args": [{"shape": [8], "dtype": "float64"}]}, {"sequence": [{}, {"dtype": "float16"}]}),
    ],
)
def test_what_follows_the_jobs_dtype_keeps_it_as_the_rows_label(workload, top):
    exp = config(workload=workload, **top)
    assert reads_dtype(exp) is True
    assert own_dtype(exp) is None


@pytest.mark.parametrize(
    ("args", "kwargs", "own"),
    [
        ([{"shape": [8], "dtype": "float64"}], {}, "float64"),
        ([{"shape": [8], "dtype": "bfloat16"}, {"value": 3}], {"n": 2, "m": {"value": 4}}, "bfloat16"),
        ([{"shape": [8], "dtype": "float64"}, {"shape": [8], "dtype": "int32"}], {}, "float64"),
        ([], {"y": {"shape": [8], "dtype": "float16"}, "z": {"shape": [8], "dtype": "float16"}}, "float16"),
        ([{"shape": [8], "dtype": "float64"}, {"shape": [8], "dtype": "float16"}], {}, None),  # no one dtype
        ([{"shape": [8], "dtype": "int32"}], {}, None),  # no floating one
        ([{"value": 3}], {}, None),
    ],
)
def test_arguments_with_dtypes_of_their_own_label_the_rows_when_they_agree_on_one(args, kwargs, own):
    exp = config(workload={"args": args, "kwargs": kwargs}, sequence=[{}, {"size": 4}])
    assert reads_dtype(exp) is False
    assert own_dtype(exp) == own


def test_a_node_left_out_is_found_under_any_parent_or_none():
    """_referenced (where _check_params looks for references) leaves out a node however deep, and passes over a
    parent that is missing or not a mapping."""
    task = {"a": {"b": {"c": "${workload.params.n}", "d": 1}}, "e": "text", "f": ["${workload.params.m}"]}
    assert json.loads(_referenced(task, ("a.b.c", "e.x.y", "g.h.i"))) == {
        "a": {"b": {"d": 1}},
        "e": "text",
        "f": ["${workload.params.m}"],
    }
    assert json.loads(_referenced(task, ("f", "a.b"))) == {"a": {}, "e": "text"}


def test_an_argument_that_is_no_mapping_is_neither_a_literal_nor_a_spec():
    """validate refuses it later with its one line; what follows the dtype is read before, without failing on it."""
    exp = config(workload={"args": [{"shape": [8], "dtype": "float64"}, 3, "x"]})
    assert reads_dtype(exp) is False and own_dtype(exp) == "float64"
