"""to_config's own walks over a config agree with OmegaConf's (convert.missing_keys), and converting a job's variants
leaves the job's config as it was (open to a variant's new keys only in the copy it merges)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional  # noqa: UP035  # OmegaConf reads typing annotations

import pytest
from omegaconf import MISSING, OmegaConf

from jitexp.config import to_config
from jitexp.config.convert import _schema, missing_keys


@dataclass
class _Inner:
    k: int = MISSING


@dataclass
class _Typed:
    x: int = MISSING
    d: Dict[str, Any] = field(default_factory=lambda: {"k": MISSING})  # noqa: UP006
    o: Any = None
    i: Optional[_Inner] = None  # noqa: UP045
    j: _Inner = field(default_factory=_Inner)
    m: Optional[_Inner] = MISSING  # noqa: UP045


CONFIGS = [
    {"a": "???", "b": {"c": "???", "d": [1, "???", {"e": "???"}]}, "f": "${b}", "g": None, "h": "${b.d}"},
    {"a": {"b": "${x}"}, "x": {"y": "???"}},  # found under the interpolation's target, by its own key
    {"o": "${oc.create:{p: ???}}", "l": "???", "m": {"n": None}},  # a resolver's new node
    {"a": "${nope}", "b": "${nope2}"},  # the first that does not resolve, in order
    {"a": ["${nope}", "???"]},
    {"s": "${size}", "size": "???"},
    {"z": "${oc.env:JITEXP_NO_SUCH_VARIABLE}"},
    _Typed,
    None,  # the schema
]


def _outcome(walk: Any, cfg: Any) -> Any:
    try:
        return sorted(walk(cfg))
    except Exception as exc:
        return type(exc).__name__, str(exc), getattr(exc, "full_key", None)


@pytest.mark.parametrize("raw", CONFIGS, ids=range(len(CONFIGS)))
def test_the_missing_keys_and_the_first_error_are_omegaconfs(raw):
    cfg = _schema() if raw is None else OmegaConf.structured(raw) if isinstance(raw, type) else OmegaConf.create(raw)
    assert _outcome(missing_keys, cfg) == _outcome(OmegaConf.missing_keys, cfg)


def test_a_variants_new_key_leaves_the_jobs_config_shut_and_as_it_was():
    args = [{"shape": ["${size}", "${size}"]}, {"value": "${workload.params.n}"}]
    job = {"workload": {"fn": "m.f", "params": {"n": 3}, "args": args, "static_argnums": [1]}, "size": 8}
    job["mode"] = {"eager": True, "jit": True}
    cfg = OmegaConf.create({**job, "variants": {"a": {"size": 4}, "b": {"seed": 2}}})
    OmegaConf.set_struct(cfg, True)  # as Hydra composes it: seed is no key of it
    before = OmegaConf.to_container(cfg)
    exp = to_config(cfg)
    assert exp.variants["b"]["_resolved"]["seed"] == 2 and exp.variants["a"]["_resolved"]["size"] == 4
    assert OmegaConf.is_struct(cfg) and OmegaConf.to_container(cfg) == before
