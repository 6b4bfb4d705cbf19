"""to_config's structured schema is built once per process; each use gets a copy of its own to merge into."""

from __future__ import annotations

from omegaconf import OmegaConf

from jitexp.config.convert import _schema, _schema_pickled
from jitexp.config.schema import ExperimentConfig


def test_each_schema_is_a_fresh_copy_a_merge_into_it_leaves_the_next_alone():
    built = OmegaConf.structured(ExperimentConfig)
    first = _schema()
    first.merge_with({"size": 123, "timing": {"warmup": 7}})
    assert first.size == 123 and first.timing.warmup == 7
    again = _schema()
    assert again is not first and OmegaConf.to_container(again) == OmegaConf.to_container(built)
    assert OmegaConf.get_type(again) is ExperimentConfig and OmegaConf.get_type(again.timing) is OmegaConf.get_type(
        built.timing
    )
    assert _schema_pickled() is _schema_pickled()  # built and pickled once per process
