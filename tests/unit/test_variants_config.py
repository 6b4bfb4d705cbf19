"""Variants: versions of a job's config measured in the same worker processes, paired against the first (issue 17):
their configs, their mistakes (each the one line the command prints: tests/e2e/test_variants_job.py shows one reach
the terminal), their budgets, all found before any function is imported. Checking each variant's function against
its arguments imports it: tests/inprocess/test_variants_config.py. A real variants job is in
tests/e2e/test_variants_job.py; the report and compare of one in tests/unit/test_saved_runs.py.

Hydra composes a command line's variants here once (the first test) and names a command line's mistake once; the
other tests apply their variants to a config composed once per command line (`job`: the composed config as the
preflight hands it to from_dict), and each mistake's command line is composed in tests/inprocess/test_variants_config.py.
"""

from __future__ import annotations

import copy
import dataclasses
import functools

import pytest
from omegaconf import OmegaConf

from helpers import ABCODE_ARGS
from jitexp import ConfigError, compose
from jitexp.analysis.speedups import ab_columns
from jitexp.config import ExperimentConfig, from_dict, variant_configs
from jitexp.engine import preflight
from jitexp.store.schema import AB, OPTIONAL_COLUMNS, PROCESS_COLUMNS, SAMPLE_COLUMNS, with_variant


@functools.cache
def composed(*overrides: str) -> dict:
    """`jitexp OVERRIDES...`'s config as the preflight hands it to from_dict (unresolved, without Hydra's node),
    composed once per command line: the tests below share it."""
    from jitexp.engine.compose import compose_raw, hydra_session

    with hydra_session(None) as hydra:
        node = compose_raw(hydra, list(overrides))
    task = OmegaConf.to_container(node, resolve=False)
    del task["hydra"]
    return task


ONCE = ("workload=custom", ABCODE_ARGS, "workload.fn=abcode.once", "mode=jit")  # one command line, composed once


def job(*overrides: str, **top) -> ExperimentConfig:
    """The job of `jitexp OVERRIDES...` with the top-level keys given set as an override would set them."""
    return from_dict(OmegaConf.create({**copy.deepcopy(composed(*overrides)), **top}))


@pytest.fixture(autouse=True)
def in_tmp_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_hydra_parses_variants_from_the_command_line_and_each_gets_its_own_config():
    cfg = compose(
        [
            "workload=custom",
            ABCODE_ARGS,
            "size=8",
            "variants={a:{workload.fn:abcode.once},b:{workload.fn:abcode.thrice,size:16}}",
        ]
    )
    configs = variant_configs(cfg)
    assert list(configs) == ["a", "b"]  # the first is the baseline
    assert cfg.workload.fn == "abcode.once"  # workload=custom's ??? fn comes from the baseline
    assert (configs["a"].workload.fn, configs["a"].size, configs["a"].workload.args) == (
        "abcode.once",
        8,
        [{"shape": [8, 8]}],
    )
    assert (configs["b"].workload.fn, configs["b"].size, configs["b"].workload.args) == (
        "abcode.thrice",
        16,
        [{"shape": [16, 16]}],
    )
    assert all(c.variants is None for c in configs.values())


def test_nested_and_dotted_keys_and_mode_options_are_variants():
    cfg = job(
        "workload=apply_n_times",
        "size=8",
        variants={
            "plain": {},
            "fast": {"mode": {"compiler_options": {"xla_cpu_enable_fast_math": True}}},
            "more": {"workload.params.n": 5, "mode.jit_fn": "jax.jit"},
        },
    )
    configs = variant_configs(cfg)
    assert configs["plain"].mode.compiler_options == {}
    assert configs["fast"].mode.compiler_options == {"xla_cpu_enable_fast_math": True}
    assert configs["more"].workload.params["n"] == 5 and configs["more"].workload.args[1] == {"value": 5}
    assert cfg.workload.params["n"] == 3  # the job's own is unchanged


# (variants as Hydra parses the command line's `variants=...`, the key named, words of the one line)
MISTAKES = [
    (
        {"a": {"workload.fnn": "abcode.once"}, "b": {}},
        "variants.a.workload.fnn",
        "did you mean variants.a.workload.fn?",
    ),
    ({"a": {}, "b": {"sise": 3}}, "variants.b.sise", "did you mean variants.b.size?"),
    (
        {"a": {}, "b": {"workload.params.nn": 3}},
        "variants.b.workload.params.nn",
        "did you mean variants.b.workload.params.n?",
    ),
    ({"a": {}, "b": {"device.platform": "gpu"}}, "variants.b.device.platform", "envs"),
    ({"a": {}, "b": {"cpu_async_dispatch": False}}, "variants.b.cpu_async_dispatch", "envs"),
    ({"a": {}, "b": {"dtype": "float64"}}, "variants.b.dtype", "x64"),
    ({"a": {}, "b": {"timing.processes": 3}}, "variants.b.timing.processes", "the job's"),
    ({"a": {}, "b": {"mode.eager": True}}, "variants.b.mode.eager", "the job's"),
    ({"a": {}, "b": {"workload": "matmul"}}, "variants.b.workload", "not a config group"),
    ({"a": {}}, "variants", "needs two or more"),
    ({"a": {}, "b": 3}, "variants.b", "a mapping of overrides"),
]


@pytest.mark.parametrize("variants, key, words", MISTAKES)
def test_a_variant_mistake_names_its_key(variants, key, words):
    with pytest.raises(ConfigError) as caught:
        job("workload=apply_n_times", "size=8", variants=variants)
    assert caught.value.key == key and words in str(caught.value), str(caught.value)


PROCESS = (
    "is set once per worker process and variants share their processes; compare it in separate processes: envs (two "
    "installs) or a sweep (-m)"
)
JOBS = "is the job's, the same for every variant: set it outside variants"
TOP = (
    "calls, check, compilation_cache_dir, cpu_affinity, cpu_async_dispatch, device, distributed, dtype, envs, "
    "fail_on_error, isolate, mesh, mode, overwrite, profile, resume, seed, sequence, size, timing, variants, workload"
)
TWO = "needs two or more, the first the baseline, e.g. 'variants={before:{workload.fn:m.f},after:{workload.fn:m.g}}'"


@pytest.mark.parametrize(
    "variants, message",
    [
        (
            {"a": {"workload.fnn": "abcode.once"}, "b": {}},
            "variants.a.workload.fnn='abcode.once' is invalid; no such key; did you mean variants.a.workload.fn?",
        ),
        ({"a": {}, "b": {"sise": 3}}, "variants.b.sise=3 is invalid; no such key; did you mean variants.b.size?"),
        ({"a": {}, "b": {"foo": 1}}, f"variants.b.foo=1 is invalid; no such key; variants.b has {TOP}"),
        (
            {"a": {}, "b": {"workload.params.nn": 3}},
            "variants.b.workload.params.nn=3 is invalid; no such key; did you mean variants.b.workload.params.n?",
        ),
        (
            {"a": {}, "b": {"mesh.axis_typs": "explicit"}},
            "variants.b.mesh.axis_typs='explicit' is invalid; no such key; did you mean variants.b.mesh.axis_types?",
        ),
        (
            {"a": {}, "b": {"mode.donate": [0]}},
            "variants.b.mode.donate=[0] is invalid; no such key; did you mean variants.b.mode.donate_argnums?",
        ),
        ({"a": {}, "b": {"device.platform": "gpu"}}, f"variants.b.device.platform='gpu' is invalid; {PROCESS}"),
        ({"a": {}, "b": {"cpu_async_dispatch": False}}, f"variants.b.cpu_async_dispatch=False is invalid; {PROCESS}"),
        ({"a": {}, "b": {"timing.processes": 3}}, f"variants.b.timing.processes=3 is invalid; {JOBS}"),
        ({"a": {}, "b": {"mode": {"jit": True}}}, f"variants.b.mode.jit=True is invalid; {JOBS}"),
        (
            {"a": {}, "b": {"workload": "matmul"}},
            "variants.b.workload='matmul' is invalid; a variant sets keys of workload (workload.KEY: value), not a "
            "config group",
        ),
        (
            {"a": {}, "b": {"workload": {"params": 3}}},
            "variants.b.workload.params=3 is invalid; a variant sets keys of workload.params (workload.params.KEY: "
            "value), not a config group",
        ),
        (
            {"a": {}, "b": {"workload.fn.x": 1}},
            "variants.b.workload.fn.x=1 is invalid; workload.fn takes a value, not keys",
        ),
        ({"a": {}}, f"variants=['a'] is invalid; {TWO}"),
        ({"a": {}, "b": 3}, "variants.b=3 is invalid; a mapping of overrides, e.g. {workload.fn: m.f}"),
    ],
)
def test_a_variant_mistake_is_the_one_line_naming_key_value_and_why(variants, message):
    with pytest.raises(ConfigError) as caught:
        job("workload=apply_n_times", "size=8", variants=variants)
    assert str(caught.value) == message


@pytest.mark.parametrize("variants", [3, "ab", ["a", "b"]])
def test_variants_that_are_no_mapping_are_named_as_written(variants):
    with pytest.raises(ConfigError) as caught:
        job("workload=apply_n_times", "size=8", variants=variants)
    assert str(caught.value).startswith(f"variants={variants!r} is invalid; ")


def test_a_params_key_below_a_param_is_refused():
    with pytest.raises(ConfigError) as caught:
        job("workload=apply_n_times", "size=8", variants={"a": {}, "b": {"workload.params.n.x": 1}})
    assert str(caught.value).startswith("variants.b.workload.params.n.x=1 is invalid; ")
    assert "takes a value, not keys" in str(caught.value)


def test_a_variants_interpolation_resolves_in_the_variant():
    cfg = job(
        "workload=apply_n_times",
        "size=8",
        variants={
            "a": {},
            "b": {"workload.params.n": 5, "size": "${workload.params.n}", "seed": 2, "dtype": "float16"},
        },
    )
    b = variant_configs(cfg)["b"]
    assert (b.size, b.workload.args[0]["shape"], b.seed, b.dtype) == (5, [5, 5], 2, "float16")
    assert (cfg.size, cfg.seed, cfg.dtype) == (8, 0, "float32")  # the job's own


def test_keys_beginning_with_an_underscore_are_kept_data_not_overrides():
    """A config passed on holds each variant resolved beside its overrides (`_resolved`); read again, the same."""
    cfg = job("workload=apply_n_times", "size=8", variants={"a": {"_note": "x", "size": 4}, "b": {"size": 16}})
    assert [c.size for c in variant_configs(cfg).values()] == [4, 16]
    again = job("workload=apply_n_times", "size=8", variants=cfg.variants)
    assert again.variants == cfg.variants and "_note" not in again.variants["a"]


def test_a_key_the_job_leaves_missing_that_every_variant_sets_comes_from_the_baseline():
    both = {
        "a": {"size": 4, "workload.fn": "abcode.once", "workload.params.n": 2},
        "b": {"size": 16, "workload.fn": "abcode.thrice", "workload.params.n": 3},
    }
    # workload=custom's fn (???) and a param left ??? (`+workload.params.n=???`), on the config composed for ONCE
    workload = {**composed(*ONCE)["workload"], "fn": "???", "params": {"n": "???"}}
    cfg = job(*ONCE, workload=workload, variants=both)
    # every variant sets size too, and the job's own (1000, not missing) is kept
    assert (cfg.workload.fn, cfg.workload.params, cfg.size) == ("abcode.once", {"n": 2}, 1000)
    assert [c.workload.fn for c in variant_configs(cfg).values()] == ["abcode.once", "abcode.thrice"]
    with pytest.raises(ConfigError) as caught:  # one variant without it: the job has none
        job(*ONCE, workload=workload, variants={"a": {"workload.fn": "abcode.once"}, "b": {"size": 4}})
    assert str(caught.value).startswith("workload.fn is invalid; needs an import path")


def test_probes_of_one_config_refuse_variants(tmp_path):
    both = {"before": {"workload.fn": "abcode.once"}, "after": {"workload.fn": "abcode.thrice"}}
    for extra, key in (
        ({"sequence": [{"size": 4}]}, "sequence"),
        ({"compilation_cache_dir": str(tmp_path)}, "compilation_cache_dir"),
    ):
        with pytest.raises(ConfigError) as caught:
            job(*ONCE, variants=both, **extra)
        assert caught.value.key == key


def test_variant_columns_are_written_only_with_variants():
    values = {metric: [1.0, 2.0] for metric in ("steady", "first_call", "compile")}
    assert set(ab_columns("a", values, values)) == set(AB)  # the names rows writes are the names results knows
    assert with_variant(SAMPLE_COLUMNS, [{"mode": "jit"}]) == SAMPLE_COLUMNS
    columns = with_variant(PROCESS_COLUMNS, [{"mode": "jit", "variant": "a"}])
    assert columns[columns.index("mode") + 1] == "variant" and set(OPTIONAL_COLUMNS) >= {"variant", *AB}


def test_a_variants_job_gives_each_variant_a_plain_jobs_budgets(monkeypatch):
    from jitexp.engine import runner
    from jitexp.records import ModeResult, ProcessResult

    seen = []

    def fake_measure(task, cfg):
        seen.append(task.cfg.timing)
        return ProcessResult(task.process, variants={name: {"jit": ModeResult()} for name in "abc"})

    monkeypatch.setattr(runner, "run_task", fake_measure)
    monkeypatch.setattr(runner.pyenvs, "enough", lambda *a: True)
    three = {"a": {"size": 8}, "b": {"size": 16}, "c": {"size": 32}}
    cfg = job(*ONCE, variants=three)
    timing = dict(processes=2, max_processes=2, max_time_s=0.5, job_time_s=20.0)
    cfg = dataclasses.replace(cfg, timing=dataclasses.replace(cfg.timing, **timing))
    runner.collect(cfg)
    assert len(seen) == 2 and {(t.max_time_s, t.job_time_s) for t in seen} == {(1.5, 60.0)}
    plain = job(*ONCE)
    plain = dataclasses.replace(plain, timing=dataclasses.replace(plain.timing, max_time_s=0.5))
    assert runner.per_variant_budgets(plain) is plain


@pytest.mark.parametrize(
    "variants, words",
    [
        ("{before:{workload.fn:abcode.once},after:{device.platform:gpu}}", "variants.after.device.platform='gpu'"),
    ],
)
def test_a_variant_mistake_on_the_command_line_is_one_line(variants, words):
    """What `jitexp workload=custom ABCODE_ARGS variants=...` prints after `jitexp: error: ` (exit 2, nothing run)."""
    with pytest.raises(ConfigError) as caught:
        preflight.check(["workload=custom", ABCODE_ARGS, f"variants={variants}"])
    message = str(caught.value)
    assert "\n" not in message and message.startswith("variants") and words in message
