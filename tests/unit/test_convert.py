"""config/convert.py without Hydra: a composed config, given as the plain mapping it is (what the preflight hands over),
to an ExperimentConfig. Each mistake is the one line naming its key (an interpolation that does not resolve, a key the
config lacks or does not have, a value of the wrong type, a sequence item or a variant that is wrong); each sequence
item and each variant is resolved as a job of its own; the rows' dtype follows the arguments when nothing follows the
job's; numpy is dropped from the modes of a workload without a twin. The same through a command line:
tests/unit/test_inputs_used.py and test_variants_config.py, tests/inprocess/test_inputs_used.py."""

from __future__ import annotations

import copy
import dataclasses
import logging

import pytest
from omegaconf import OmegaConf

from jitexp.config import from_dict, to_config
from jitexp.config.convert import resolve_sequence, resolve_variants
from jitexp.errors import ConfigError

ARGS = [{"shape": ["${size}", "${size}"]}, {"value": "${workload.params.n}"}]


def job(workload=None, **top) -> dict:
    """A composed job (apply_n_times' shape: a size x size matrix and a static literal n), with the changes given."""
    w = {"fn": "m.f", "params": {"n": 3}, "checks": {"n": ">= 0"}, "args": copy.deepcopy(ARGS), "static_argnums": [1]}
    return {"workload": {**w, **(workload or {})}, "mode": {"eager": True, "jit": True}, "size": 8, **top}


def refusal(cfg, convert=from_dict) -> str:
    with pytest.raises(ConfigError) as caught:
        convert(cfg)
    return str(caught.value)


# ---- interpolations that do not resolve --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (
            "${workload.params.nn}",
            "refers to workload.params.nn, which does not exist; did you mean workload.params.n?",
        ),
        ("${workload.params.zzz}", "refers to workload.params.zzz, which does not exist; workload.params has n, m"),
        ("${workload.nope.zzz}", "refers to workload.nope.zzz, which does not exist; workload.nope has none"),
        ("${sise}", "refers to sise, which does not exist; did you mean size?"),
        ("${nosuch}", "refers to nosuch, which does not exist; the config has workload, mode, size"),
        ("${nosuch.deeper.key}", "refers to nosuch.deeper.key, which does not exist; nosuch.deeper has none"),
    ],
)
def test_an_interpolation_to_a_missing_key_names_the_key_that_refers_to_it(value, why):
    cfg = job({"params": {"n": 3, "m": 4}, "args": [{"shape": [8]}, {"value": value}]})
    assert refusal(cfg) == f"workload.args[1].value={value!r} is invalid; {why}"


def test_a_params_node_that_is_none_has_no_keys():
    cfg = job({"params": {}, "args": [{"value": "${workload.params.n}"}], "static_argnums": []})
    assert refusal(cfg) == (
        "workload.args[0].value='${workload.params.n}' is invalid; refers to workload.params.n, which does not exist; "
        "workload.params has none"
    )


def test_a_node_that_is_an_interpolation_is_named_without_a_value():
    message = refusal({**job(), "workload": "${nosuch}"})
    assert message.partition(" is invalid; ")[2] == (
        "refers to nosuch, which does not exist; the config has workload, mode, size"
    )
    assert "=" not in message.partition(" is invalid; ")[0]


def test_a_resolver_that_fails_is_one_line_naming_the_key():
    message = refusal(job({"args": [{"shape": [8]}, {"value": "${oc.env:JITEXP_NO_SUCH}"}]}))
    assert message == (
        "workload.args[1].value='${oc.env:JITEXP_NO_SUCH}' is invalid; cannot be resolved: KeyError raised while "
        "resolving interpolation: \"Environment variable 'JITEXP_NO_SUCH' not found\""
    )


def test_a_composed_config_is_read_as_it_is_not_resolved_first():
    """Hydra hands over a DictConfig: its interpolations are resolved where convert reads them, so one that fails is
    the same line as from a mapping."""
    message = (
        "seed='${oc.env:JITEXP_NO_SUCH}' is invalid; cannot be resolved: KeyError raised while resolving "
        "interpolation: \"Environment variable 'JITEXP_NO_SUCH' not found\""
    )
    assert refusal(OmegaConf.create(job(seed="${oc.env:JITEXP_NO_SUCH}")), to_config) == message
    assert refusal(job(seed="${oc.env:JITEXP_NO_SUCH}"), to_config) == message


# ---- keys and values ---------------------------------------------------------------------------------------------


def test_an_unknown_key_is_named_with_what_it_holds_as_written():
    assert refusal(job(sise="${size}")) == "sise='${size}' is invalid; no such key; did you mean size?"
    assert refusal(job(sise="${nosuch}")) == "sise='${nosuch}' is invalid; no such key; did you mean size?"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"seed": "???"}, "seed is invalid; needs a value (it is ??? in the config)"),
        (
            {"seed": "???", "workload": {"fn": "???"}},  # the first in order
            "seed is invalid; needs a value (it is ??? in the config)",
        ),
        (
            {"workload": {"fn": "???"}},
            "workload.fn is invalid; needs an import path like package.module.function (workload.fn=...)",
        ),
        (
            {"workload": {"args": "???"}},
            "workload.args is invalid; needs the function's arguments, e.g. "
            "'workload.args=[{shape:[${size}]},{value:3}]', or a function that builds them: "
            "workload.setup=package.module.make_inputs",
        ),
    ],
)
def test_a_key_the_config_leaves_missing_is_named_with_what_it_needs(changes, message):
    top = {k: v for k, v in changes.items() if k != "workload"}
    assert refusal(job(changes.get("workload"), **top), to_config) == message


def test_a_setup_needs_no_args_and_the_callers_config_is_left_as_it_was():
    cfg = OmegaConf.create(job({"args": "???", "setup": "m.make"}))
    exp = to_config(cfg)
    assert exp.workload.args is None and exp.workload.setup == "m.make"
    assert OmegaConf.is_missing(cfg.workload, "args")
    assert exp.workload.params == {"n": 3} and exp.size == 8


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"size": "abc"}, "size='abc' is invalid; must be an integer"),
        ({"workload": 3}, "config is invalid; Merge error: int is not a subclass of WorkloadConfig. value: 3"),
        (
            {"workload": {"fn": "m.f", "args": 3}},
            "workload.args=3 is invalid; must be a list or null",
        ),
    ],
)
def test_a_value_of_the_wrong_type_is_one_line_naming_its_key(changes, message):
    assert refusal({**job(), **changes}, to_config) == message


@pytest.mark.parametrize(("sequence", "i", "item"), [([{}, 3], 1, 3), (["ab"], 0, "ab"), ([[1]], 0, [1])])
def test_a_sequence_item_that_is_no_mapping_is_named(sequence, i, item):
    assert refusal(job(sequence=sequence), to_config) == (
        f"sequence[{i}]={item!r} is invalid; a mapping of changes, e.g. {{n: 3}}, {{size: 64}}, {{dtype: float64}}, "
        "{python_scalars: [1]} or {} (as configured)"
    )


# ---- the rows' dtype, numpy without a twin ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "dtype"),
    [
        ([{"shape": [64], "dtype": "float64"}], "float64"),  # nothing follows the job's: the arguments' own
        ([{"shape": [64], "dtype": "float64"}, {"shape": [64]}], "float32"),  # one follows it
        ([{"shape": [64], "dtype": "float64"}, {"shape": [64], "dtype": "float16"}], "float32"),  # no one dtype
    ],
)
def test_the_rows_dtype_is_the_arguments_own_when_nothing_follows_the_jobs(args, dtype):
    assert from_dict(job({"args": args, "params": {}, "checks": {}, "static_argnums": []})).dtype == dtype


def test_numpy_among_other_modes_is_dropped_for_a_workload_without_a_twin(caplog):
    with caplog.at_level(logging.WARNING, logger="jitexp"):
        exp = to_config(job(mode={"eager": True, "jit": True, "numpy": True}))
    assert exp.mode.numpy is False and exp.mode.names == ("eager", "jit")
    assert [r.getMessage() for r in caplog.records] == ["f declares no numpy_fn: measuring eager,jit without numpy"]


@pytest.mark.parametrize(
    ("workload", "mode"),
    [
        ({}, {"numpy": True}),  # numpy alone: validate names the missing twin
        ({"numpy_fn": "m.twin"}, {"eager": True, "numpy": True}),
        ({"numpy_fn": "m.twin"}, {"numpy": True}),
        ({}, {"eager": True, "jit": True}),
        ({"numpy_fn": "m.twin"}, {"jit": True}),
    ],
)
def test_numpy_is_kept_where_it_was_asked_for_alone_or_has_a_twin(workload, mode, caplog):
    with caplog.at_level(logging.WARNING, logger="jitexp"):
        exp = to_config(job(workload, mode=mode))
    assert exp.mode.names == tuple(m for m in ("eager", "jit", "aot", "numpy") if mode.get(m))
    assert exp.mode.numpy is mode.get("numpy", False)
    assert not caplog.records


# ---- a sequence: each item resolved as a job of its own ------------------------------------------------------------


def resolved(item: dict, args, n=3, size=8, dtype="float32") -> dict:
    """A sequence item as convert resolves it: the item, its label and what its job's arguments resolve to."""
    label = ", ".join(f"{k}={v}" for k, v in item.items()) or "as configured"
    return {
        **item,
        "_label": label,
        "_args": args,
        "_kwargs": {"k": n},
        "_params": {"n": n},
        "_size": size,
        "_dtype": dtype,
    }


def test_each_sequence_item_is_resolved_as_a_job_of_its_own():
    sequence = [{}, {"n": 5}, {"size": 4}, {"dtype": "float64"}, {"python_scalars": [1]}, {"n": 2, "size": 2}]
    exp = to_config(job({"kwargs": {"k": "${workload.params.n}"}}, sequence=sequence))
    assert exp.sequence == [
        resolved({}, [{"shape": [8, 8]}, {"value": 3}]),
        resolved({"n": 5}, [{"shape": [8, 8]}, {"value": 5}], n=5),
        resolved({"size": 4}, [{"shape": [4, 4]}, {"value": 3}], size=4),
        resolved({"dtype": "float64"}, [{"shape": [8, 8]}, {"value": 3}], dtype="float64"),
        resolved({"python_scalars": [1]}, [{"shape": [8, 8]}, {"value": 3}]),
        resolved({"n": 2, "size": 2}, [{"shape": [2, 2]}, {"value": 2}], n=2, size=2),
    ]
    assert exp.workload.args == [{"shape": [8, 8]}, {"value": 3}] and exp.size == 8  # the job's own
    assert exp.workload.params == {"n": 3} and exp.dtype == "float32"


def test_a_sequence_resolved_already_is_passed_on_as_it_is():
    """A config passed on (to a worker, to jitexp.run) holds its sequence resolved: read again, nothing changes."""
    first = to_config(job({"kwargs": {"k": "${workload.params.n}"}}, sequence=[{"n": 5}, {"size": 4}]))
    again = to_config(job({"kwargs": {"k": "${workload.params.n}"}}, sequence=first.sequence))
    assert again.sequence == first.sequence
    mixed = to_config(job({"kwargs": {"k": "${workload.params.n}"}}, sequence=[first.sequence[0], {"size": 4}]))
    assert mixed.sequence == first.sequence


def test_a_sequence_item_that_is_no_mapping_is_named_when_resolving_too():
    exp = dataclasses.replace(to_config(job()), sequence=[{}, "n=2"])
    with pytest.raises(ConfigError) as caught:
        resolve_sequence(OmegaConf.create(job()), exp)
    assert str(caught.value) == (
        "sequence[1]='n=2' is invalid; a mapping of changes, e.g. {n: 3}, {size: 64}, {dtype: float64}, "
        "{python_scalars: [1]} or {} (as configured)"
    )


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ({"m": 1}, "sequence[1].m=1 is invalid; no such key; sequence[1] has dtype, n, python_scalars, size"),
        ({"nn": 1}, "sequence[1].nn=1 is invalid; no such key; did you mean sequence[1].n?"),
        ({"size": 0}, "sequence[1].size=0 is invalid; must be > 0"),
        (
            {"dtype": "float8"},
            "sequence[1].dtype='float8' is invalid; valid choices: float32, float16, bfloat16, float64",
        ),
        ({"n": -1}, "sequence[1].n=-1 is invalid; must be >= 0"),  # workload.params.n's check, named by the item
        ({"python_scalars": 1}, "sequence[1].python_scalars=1 is invalid; a list of literal argument positions: [1]"),
        (
            {"python_scalars": [0]},
            "sequence[1].python_scalars=[0] is invalid; a list of literal argument positions: [1]",
        ),
        (
            {"python_scalars": [1, 2]},
            "sequence[1].python_scalars=[1, 2] is invalid; a list of literal argument positions: [1]",
        ),
    ],
)
def test_a_sequence_items_mistake_is_named_by_the_item(item, message):
    assert refusal(job(sequence=[{}, item]), to_config) == message


def test_python_scalars_name_literal_arguments():
    args = [{"value": 1.5}, {"shape": [8]}, {"value": 2}]
    exp = to_config(
        job({"args": args, "static_argnums": [], "params": {}, "checks": {}}, sequence=[{"python_scalars": [0, 2]}])
    )
    assert exp.sequence[0]["python_scalars"] == [0, 2]
    message = refusal(
        job({"args": [{"shape": [8]}], "static_argnums": []}, sequence=[{"python_scalars": [0]}]), to_config
    )
    assert message == "sequence[0].python_scalars=[0] is invalid; a list of literal argument positions: []"


# ---- variants: each resolved and validated as a job of its own ---------------------------------------------------


def mode(**changes) -> dict:
    return {
        "eager": True,
        "jit": True,
        "aot": False,
        "numpy": False,
        "static_argnums": None,
        "static_argnames": None,
        "donate_argnums": [],
        "donate_argnames": [],
        "compiler_options": {},
        "jit_fn": None,
        **changes,
    }


def test_each_variant_is_resolved_as_a_job_of_its_own():
    variants = {"a": {"size": 4}, "b": {"workload.params.n": 5, "seed": 2, "mode.jit_fn": "jax.jit"}}
    exp = to_config(job(variants=variants))
    workload = dataclasses.asdict(exp.workload)
    mesh = {"shape": None, "axis_types": "auto"}
    assert exp.variants == {
        "a": {
            "size": 4,
            "_resolved": {
                "workload": {**workload, "args": [{"shape": [4, 4]}, {"value": 3}]},
                "mode": mode(),
                "mesh": mesh,
                "size": 4,
                "dtype": "float32",
                "seed": 0,
                "size_built": True,
            },
        },
        "b": {
            **variants["b"],
            "_resolved": {
                "workload": {**workload, "args": [{"shape": [8, 8]}, {"value": 5}], "params": {"n": 5}},
                "mode": mode(jit_fn="jax.jit"),
                "mesh": mesh,
                "size": 8,
                "dtype": "float32",
                "seed": 2,
                "size_built": True,
            },
        },
    }
    assert to_config(job()).variants is None
    assert resolve_variants(OmegaConf.create(job()), exp, {}) is None


def test_a_variants_mesh_and_shardings_replace_the_jobs():
    two = {"args": [{"shape": [8, 8]}, {"shape": [8]}], "static_argnums": [], "params": {}, "checks": {}}
    cfg = job(
        {**two, "shardings": {0: ["data", "model"]}},
        mesh={"shape": {"data": 2, "model": 2}},
        device={"count": 4},
        variants={"a": {}, "b": {"mesh.shape": {"data": 4}, "workload.shardings": {1: ["data"]}}},
    )
    exp = from_dict(cfg)
    a, b = (exp.variants[name]["_resolved"] for name in "ab")
    assert (a["mesh"]["shape"], a["workload"]["shardings"]) == ({"data": 2, "model": 2}, {0: ["data", "model"]})
    assert (b["mesh"]["shape"], b["workload"]["shardings"]) == ({"data": 4}, {1: ["data"]})


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        (job(variants={"a": {}, "b": {"size": 0}}), "variants.b.size=0 is invalid; must be > 0"),
        (job(size=0, variants={"a": {}, "b": {"seed": 1}}), "size=0 is invalid; must be > 0"),  # the job's own
        (job(size=0, variants={"b": {"size": -1}, "a": {}}), "variants.b.size=-1 is invalid; must be > 0"),
        (
            job(
                {"kwargs": {"y": {"shape": [8], "init": "bad1"}}},
                variants={"b": {"workload.kwargs": {"y": {"init": "bad2"}}}, "a": {}},
            ),
            "variants.b.workload.kwargs.y.init='bad2' is invalid; valid choices: normal, uniform, zeros, ones, arange",
        ),
        (
            job(variants={"a": {}, "b": {"workload.args": [{"shape": [8]}]}}),  # n's position is gone
            "variants.b.workload.static_argnums=[1] is invalid; indices must lie in [0, 1) for 1 argument(s)",
        ),
    ],
)
def test_a_variants_mistake_is_named_by_the_variant_and_the_jobs_by_the_job(cfg, message):
    assert refusal(cfg) == message


X64 = (
    "x64 is set once per worker process and variants share their processes; compare it in separate processes: envs "
    "(two installs) or a sweep (-m)"
)


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        (
            job(variants={"a": {}, "b": {"dtype": "float64"}}),
            f"variants.b.dtype='float64' is invalid; turns x64 on and the baseline does not; {X64}",
        ),
        (
            job(dtype="float64", variants={"a": {}, "b": {"dtype": "float32"}}),
            f"variants.b.dtype='float32' is invalid; turns x64 off and the baseline does not; {X64}",
        ),
        (
            job(variants={"a": {}, "b": {"workload.args": [{"shape": [8], "dtype": "float64"}, {"value": 3}]}}),
            "variants.b.workload.args=[{'shape': [8], 'dtype': 'float64'}, {'value': 3}] is invalid; turns x64 on and "
            f"the baseline does not; {X64}",
        ),
        (
            job(variants={"a": {"dtype": "float64"}, "b": {"dtype": "float64"}, "c": {}}),
            f"variants.c.workload.args is invalid; turns x64 off and the baseline does not; {X64}",
        ),
    ],
)
def test_a_variant_that_turns_x64_on_or_off_is_refused(cfg, message):
    assert refusal(cfg) == message


def test_a_malformed_interpolation_in_a_mapping_from_python_is_one_line_naming_its_key():
    # OmegaConf.create itself refuses `${oops` (a GrammarParseError): once outside the one-line errors
    with pytest.raises(ConfigError) as raised:
        to_config({"workload": {"name": "add_one", "params": {"n": "${oops"}}})
    assert str(raised.value).startswith("workload.params.n='${oops' is invalid; cannot be parsed: ")
    assert (raised.value.key, raised.value.value) == ("workload.params.n", "${oops")
