"""Config files parsed once per process (engine.config_files): a user's edit between two composes is seen, and what
one compose (or its caller) changes reaches no other."""

from __future__ import annotations

import copy

import pytest
from omegaconf import OmegaConf, open_dict

from jitexp import ConfigError
from jitexp.config import grammar_cache
from jitexp.engine import config_files, preflight
from jitexp.engine.compose import compose_raw, hydra_session


def test_an_edit_between_two_composes_is_seen_even_at_the_same_size(tmp_path, monkeypatch):
    """A notebook's compose(), the file edited (same size, perhaps within the file system's clock tick), again."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "conf" / "experiment").mkdir(parents=True)
    mine = tmp_path / "conf" / "experiment" / "mine.yaml"
    mine.write_text("# @package _global_\nseed: 1\n")
    assert preflight.compose(["experiment=mine"], config_dir="conf").seed == 1
    mine.write_text("# @package _global_\nseed: 2\n")
    assert preflight.compose(["experiment=mine"], config_dir="conf").seed == 2
    mine.write_text("# @package _global_\nseed: [2\n")  # broken after it was read: Hydra's own error, named
    with pytest.raises(ConfigError) as caught:
        preflight.compose(["experiment=mine"], config_dir="conf")
    assert str(caught.value).startswith("conf/experiment/mine.yaml:3:1: experiment='mine' is invalid; not valid YAML")


def test_a_composed_config_changed_by_its_caller_leaves_the_next_compose_alone():
    """Hydra merges a loaded file's nodes into the config without copying them: each compose gets its own copy."""
    with hydra_session(None) as hydra:
        first = compose_raw(hydra, ["workload=matmul"])
        fn, args = first.workload.fn, OmegaConf.to_container(first.workload.args)
        with open_dict(first):
            first.workload.fn = "changed.fn"
            first.workload.args[0].shape = [1]
            del first.timing
    with hydra_session(None) as hydra:
        again = compose_raw(hydra, ["workload=matmul"])
    assert (again.workload.fn, OmegaConf.to_container(again.workload.args)) == (fn, args)
    assert "timing" in again


def test_each_load_of_a_file_is_a_fresh_copy_and_new_text_is_parsed_again():
    header, config = config_files.parsed("/nowhere/a.yaml", "# @package _global_\nx: {y: 1}\n")
    _, other = config_files.parsed("/nowhere/a.yaml", "# @package _global_\nx: {y: 1}\n")
    assert header == {"package": "_global_"}
    config.x.y = 5
    assert other.x.y == 1 and other is not config
    assert config_files.parsed("/nowhere/a.yaml", "x: {y: 3}\n") == (
        {"package": None},
        OmegaConf.create({"x": {"y": 3}}),
    )


def test_a_copy_of_the_structured_source_reads_the_one_store():
    """Hydra deep-copies its repository at each compose: the copy reads the process's ConfigStore, not a copy of it."""
    from hydra.core.config_store import ConfigStore

    from jitexp.config import register_configs

    register_configs()
    source = config_files.StructuredConfigSource("schema", "structured://")
    clone = copy.deepcopy(source)
    assert clone.store is ConfigStore.instance() and clone.provider == "schema"
    assert clone.load_config("jitexp_schema").config == source.load_config("jitexp_schema").config


def test_each_load_from_the_store_is_a_copy_of_its_own_and_a_new_store_entry_is_read():
    """The stored node is copied by a pickle, not deep-copied: a change to one load reaches neither the store nor the
    next load, and `store()` of the same name again (a notebook re-registering) is what the next load reads."""
    from hydra.core.config_store import ConfigStore

    store = ConfigStore.instance()
    store.store(name="jitexp_test_node", node={"a": {"b": 1}}, group="jitexp_test_group", package="pkg")
    try:
        source = config_files.StructuredConfigSource("schema", "structured://")
        first = source.load_config("jitexp_test_group/jitexp_test_node")
        assert first.header == {"package": "pkg"} and first.provider == "schema" and first.path == "structured://"
        first.config.a.b = 5
        second = source.load_config("jitexp_test_group/jitexp_test_node")
        assert second.config.a.b == 1 and second.config is not first.config
        store.store(name="jitexp_test_node", node={"a": {"b": 2}}, group="jitexp_test_group", package="pkg")
        assert source.load_config("jitexp_test_group/jitexp_test_node").config.a.b == 2
    finally:
        del store.repo["jitexp_test_group"]  # the process's one store: the help's group listing reads it


def test_a_stored_node_that_does_not_pickle_is_deep_copied_as_hydra_does():
    """In a launcher's child that restored Hydra's state (submitit), a structured node's class is not the one
    importable by its name, and pickle refuses it: such a node is copied as Hydra copies it."""
    import dataclasses

    from hydra.core.config_store import ConfigStore

    @dataclasses.dataclass
    class LocalConf:  # a class pickle cannot find by its name
        a: int = 1

    store = ConfigStore.instance()
    store.store(name="jitexp_local_node", node=LocalConf, group="jitexp_test_local")
    try:
        source = config_files.StructuredConfigSource("schema", "structured://")
        first = source.load_config("jitexp_test_local/jitexp_local_node").config
        first.a = 5
        second = source.load_config("jitexp_test_local/jitexp_local_node").config
        assert second.a == 1 and OmegaConf.get_type(second) is LocalConf
    finally:
        del store.repo["jitexp_test_local"]


def test_the_grammar_memo_resolves_as_omegaconf_and_a_bad_string_raises_each_time():
    from omegaconf import _utils, base, grammar_parser
    from omegaconf.errors import GrammarParseError

    grammar_cache.install()
    grammar_cache.install()  # once per process
    assert base.parse is _utils.parse is grammar_parser.parse and grammar_parser.parse.jitexp_memo
    cfg = OmegaConf.create({"size": 4, "shape": ["${size}", "${size}"], "name": "n${size}x${size}", "n": "${size}"})
    assert OmegaConf.to_container(cfg, resolve=True) == {"size": 4, "shape": [4, 4], "name": "n4x4", "n": 4}
    cfg.size = 5  # the same strings, parsed once, resolve to the new value
    assert OmegaConf.to_container(cfg, resolve=True) == {"size": 5, "shape": [5, 5], "name": "n5x5", "n": 5}
    for _ in range(2):
        with pytest.raises(GrammarParseError):
            OmegaConf.create({"a": "${oops"})
