"""to_config's structured schema is built once per process and merged into, never changed by a config."""

from __future__ import annotations

from omegaconf import OmegaConf

from jitexp.config.convert import _schema
from jitexp.config.schema import ExperimentConfig


def test_the_cached_schema_is_unchanged_by_a_merge():
    before = OmegaConf.to_container(_schema())
    merged = OmegaConf.merge(_schema(), {"size": 123, "timing": {"warmup": 7}})
    assert merged.size == 123 and merged.timing.warmup == 7
    assert OmegaConf.to_container(_schema()) == before == OmegaConf.to_container(OmegaConf.structured(ExperimentConfig))
    assert _schema() is _schema()
