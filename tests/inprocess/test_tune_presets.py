"""The shipped tuning studies (conf/experiment/tune_*.yaml): each selects the tune sweeper, and every point of its
search space composes into a job the preflight accepts, with the tune keys it says (docs/howto/tune.md)."""

from __future__ import annotations

from dataclasses import replace
from importlib import resources

import pytest
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf

from jitexp import compose
from jitexp.config.tune import parse_objectives, validate_tune
from jitexp.config.validate import validate
from jitexp.engine.tune_space import override, read_space

ABSENT = object()
PRESETS = {  # name: (workload, objectives, per example)
    "tune_rnn": ("rnn_scan", ["steady"], True),
    "tune_mlp": ("mlp_train_step", ["steady", "device_memory"], False),
    "tune_matmul_tpu": ("matmul", ["steady"], False),
}


def preset(name: str):
    return OmegaConf.load(str(resources.files("jitexp.conf").joinpath("experiment", f"{name}.yaml")))


def test_every_tune_preset_is_listed_here():
    folder = resources.files("jitexp.conf").joinpath("experiment")
    assert {p.name[:-5] for p in folder.iterdir() if p.name.startswith("tune_")} == set(PRESETS)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_a_tune_preset_selects_the_sweeper_and_each_searched_value_composes(name):
    workload, objectives, per_example = PRESETS[name]
    raw = preset(name)
    assert raw.hydra.mode == "MULTIRUN" and {"override /hydra/sweeper": "tune"} in list(raw.defaults)
    space = read_space(OmegaConf.to_container(raw.hydra.sweeper.params), [], OverridesParser.create())
    assert space.dimensions and all(d.choices for d in space.dimensions)  # a finite space: a grid can cover it
    base = compose([f"experiment={name}"])
    validate_tune(base)
    assert base.workload_name == workload and [o.label for o in parse_objectives(base.tune.objective)] == objectives
    assert (base.tune.examples == base.workload.params.get("batch")) if per_example else base.tune.examples is None
    for d in space.dimensions:
        if OmegaConf.select(OmegaConf.structured(base), d.key, default=ABSENT) is ABSENT:
            d = replace(d, add=True)  # a compiler option: the sweeper writes it +key=value, as a user would
        for value in (d.choices[0], d.choices[-1]):
            cfg = validate(compose([f"experiment={name}", override(d, value)]))  # the workload's checks too
            got = OmegaConf.select(OmegaConf.structured(cfg), d.key)
            assert got == value, (d.key, value, got)
            if per_example:
                assert cfg.tune.examples == cfg.workload.params["batch"]  # the interpolation follows the trial
