"""Hydra's YAML config files parsed once per process: each compose (the preflight's, then Hydra's own run, and every
jitexp.compose() in a notebook) reads each file again, and parsing it (PyYAML, then OmegaConf's interpolation
grammar) is half of a compose's time.

The cache is keyed on the file's path and its whole text, read again at each load: an edited file is parsed again
(no mtime granularity to miss an edit), and a file that fails to read or parse goes through Hydra's own code, so its
error is Hydra's. Hydra mutates what it loads (it pops the defaults list, merges nodes without copying them), so each
load gets a copy of its own and the cached one is never handed out: kept pickled, the copy is a pickle.loads (0.2-0.7
ms a file, 4-7x quicker than copy.deepcopy of the config, a twentieth of the parse; OmegaConf pickles its configs
whole, flags and types included).
"""

from __future__ import annotations

import copy
import io
import os
import pathlib
import pickle
from typing import Any

from hydra._internal.core_plugins import file_config_source, importlib_resources_config_source, structured_config_source
from hydra.plugins.config_source import ConfigResult, ConfigSource
from omegaconf import Container, OmegaConf

_PARSED: dict[str, tuple[str, dict[str, str | None], bytes]] = {}  # path -> (its text, header, config pickled)


def parsed(path: str, text: str) -> tuple[dict[str, str | None], Container]:
    """The header and config of the file at `path` holding `text`, as Hydra's sources read them: fresh copies."""
    hit = _PARSED.get(path)
    if hit is None or hit[0] != text:
        header = ConfigSource._get_header_dict(text[:512])  # Hydra reads the header from the first 512 characters
        stream = io.StringIO(text)
        stream.name = path  # as a file's: PyYAML names it in its marks
        config = OmegaConf.load(stream)
        hit = _PARSED[path] = (text, header, pickle.dumps(config, protocol=pickle.HIGHEST_PROTOCOL))
    return dict(hit[1]), pickle.loads(hit[2])


# Named as Hydra's own classes: Hydra's registry keeps a source of the same name when it scans its plugins again (a
# launcher's child restoring Hydra's state), where it refuses one of another name.


class ImportlibResourcesConfigSource(importlib_resources_config_source.ImportlibResourcesConfigSource):
    """pkg:// (jitexp's and Hydra's own configs) through the cache; a zipped package's files as Hydra reads them."""

    def _read_config(self, res: Any) -> ConfigResult:
        if not isinstance(res, pathlib.Path):
            return super()._read_config(res)
        try:
            header, config = parsed(str(res), res.read_text(encoding="utf-8"))
        except Exception:  # Hydra's own read raises it, as Hydra words it
            return super()._read_config(res)
        return ConfigResult(config=config, path=f"pkg://{self.path}", provider=self.provider, header=header)


class FileConfigSource(file_config_source.FileConfigSource):
    """file:// (a --config-dir, a user's configs) through the cache."""

    def load_config(self, config_path: str) -> ConfigResult:
        full_path = os.path.realpath(os.path.join(self.path, self._normalize_file_name(config_path)))
        try:
            with open(full_path, encoding="utf-8") as f:
                header, config = parsed(full_path, f.read())
        except Exception:  # a missing or broken file: Hydra's own load raises it, as Hydra words it
            return super().load_config(config_path)
        return ConfigResult(config=config, path=f"file://{self.path}", provider=self.provider, header=header)


class StructuredConfigSource(structured_config_source.StructuredConfigSource):
    """structured:// (the ConfigStore) whose copies share the store: Hydra deep-copies its config repository at each
    compose and each listing of a group's options, and with it the whole ConfigStore (~4 ms); the store is the
    process's one singleton, nothing in a compose changes it, and each load from it is a deep copy already."""

    def __deepcopy__(self, memo: dict[int, Any]) -> StructuredConfigSource:
        return copy.copy(self)

    def load_config(self, config_path: str) -> ConfigResult:
        """Hydra's own load, each copy of the stored node a pickle.loads (ConfigStore.load deep-copies it: ~3x the
        time); the store's entries are never changed in place (a `store()` of the same name puts a new node)."""
        stored = self.store._load(self._normalize_file_name(config_path))
        return ConfigResult(
            config=_fresh(stored.node),
            path=f"{self.scheme()}://{self.path}",
            provider=stored.provider if stored.provider is not None else self.provider,
            header={"package": stored.package},
        )


# id(stored node) -> (the node, kept alive so that no other object takes its id; the node pickled, or None)
_STORED: dict[int, tuple[Container, bytes | None]] = {}


def _fresh(node: Container) -> Container:
    """A copy of a ConfigStore node of its own: unpickled, or deep-copied as Hydra does where the node does not pickle
    (a launcher's child that restored Hydra's state holds structured nodes whose class is not the one importable by
    its name: submitit's, for one)."""
    hit = _STORED.get(id(node))
    if hit is None:
        try:
            pickled: bytes | None = pickle.dumps(node, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            pickled = None
        hit = _STORED[id(node)] = (node, pickled)
    return pickle.loads(hit[1]) if hit[1] is not None else copy.deepcopy(node)


def install() -> None:
    """Hydra's pkg://, file:// and structured:// sources replaced by ours, for every Hydra instance of this process."""
    from hydra._internal.sources_registry import SourcesRegistry
    from hydra.core.plugins import Plugins

    Plugins.instance()  # Hydra registers its own sources on its first scan; ours replace them after it
    registry = SourcesRegistry.instance()
    for source in (ImportlibResourcesConfigSource, FileConfigSource, StructuredConfigSource):
        registry.types[source.scheme()] = source
