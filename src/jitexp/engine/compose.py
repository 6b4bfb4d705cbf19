"""Hydra's side of the preflight: the command line read as Hydra reads it, configs composed as Hydra composes
them, sweeps expanded as the basic sweeper expands them, and each composition mistake as one ConfigError
naming the override or the user's config file that made it.
"""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from omegaconf import Container, DictConfig, OmegaConf
from omegaconf.errors import (
    ConfigAttributeError,
    ConfigKeyError,
    MissingMandatoryValue,
    OmegaConfBaseException,
    ValidationError,
)

from jitexp.config import CONFIG_MODULE, expected_type, unknown_key
from jitexp.errors import ConfigError, first_line

CONFIG_NAME = "config"
MODE_UNREAD = object()  # hydra.mode not read by the preflight: Hydra composes to read it
BASIC_SWEEPER = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"


def parse_args(argv: Sequence[str]) -> argparse.Namespace | None:
    """Hydra's own reading of the command line (None when a flag is malformed: Hydra reports that)."""
    from hydra._internal.utils import get_args_parser

    parser = get_args_parser()
    parser.exit = _no_exit  # type: ignore[method-assign,assignment]  # a bad flag is Hydra's to report
    parser.error = _no_exit  # type: ignore[method-assign,assignment]
    try:
        return parser.parse_args(list(argv))
    except _ArgparseExit:
        return None


CHOICE_FLAGS = {  # Hydra's flags whose value is optional or one of a few: an override after them is read as it
    "--cfg": ("job", "hydra", "all"),
    "-c": ("job", "hydra", "all"),
    "--info": ("all", "config", "defaults", "defaults-tree", "plugins", "searchpath"),
    "-i": ("all", "config", "defaults", "defaults-tree", "plugins", "searchpath"),
}


def flag_choice_error(argv: Sequence[str]) -> ConfigError | None:
    """The one line for `--info size=64` or `--cfg size=64`: argparse reads the override as the flag's choice and
    prints its usage (issue 57); None where no such flag swallowed an override."""
    for flag, value in zip(argv, argv[1:]):
        choices = CHOICE_FLAGS.get(flag)
        if choices is None or value in choices or "=" not in value:
            continue
        multirun = "-m" in argv or "--multirun" in argv
        sweep = (
            "; and it shows one job's config while -m runs a sweep: drop -m and give one point of the sweep"
            if multirun
            else ""
        )
        return ConfigError(
            flag,
            value,
            f"{flag} takes one of {', '.join(choices)} (or nothing), and it took the override for its choice: write the "
            f"choice first ({flag} {choices[0]} {value.split(',')[0]}){sweep}",
        )
    return None


class _ArgparseExit(Exception):
    pass


def _no_exit(*_: Any, **__: Any) -> None:
    raise _ArgparseExit


def parse_overrides(overrides: Sequence[str]) -> list[Any]:
    """Hydra's parsed overrides; malformed syntax becomes a ConfigError naming the override."""
    from hydra.core.override_parser.overrides_parser import OverridesParser
    from hydra.errors import OverrideParseException

    parser = OverridesParser.create()
    parsed = []
    for text in overrides:
        try:
            parsed.extend(parser.parse_overrides([text]))
        except OverrideParseException as exc:
            key, eq, value = text.partition("=")
            detail = first_line(exc).rstrip(".")
            raise ConfigError(
                key or text,
                value if eq else None,
                f"malformed override ({detail}); write key=value, and quote values "
                "holding spaces or special characters",
            ) from exc
    return parsed


@contextmanager
def hydra_session(config_dir: str | None) -> Iterator[Any]:
    """A Hydra instance with jitexp's search path (plus --config-dir), cleared afterwards."""
    from hydra._internal.hydra import Hydra
    from hydra._internal.utils import create_automatic_config_search_path
    from hydra.core.config_search_path import SearchPathQuery
    from hydra.core.global_hydra import GlobalHydra

    from jitexp.config import grammar_cache, register_configs
    from jitexp.engine import config_files

    register_configs()
    config_files.install()
    grammar_cache.install()
    search_path = create_automatic_config_search_path(None, None, f"pkg://{CONFIG_MODULE}")
    if config_dir is not None:
        path = os.path.abspath(config_dir)
        if not os.path.isdir(path):
            raise ConfigError("--config-dir", config_dir, f"no such directory ({path})")
        search_path.prepend(provider="command-line", path=f"file://{path}", anchor=SearchPathQuery(provider="schema"))
    GlobalHydra.instance().clear()
    try:
        yield Hydra.create_main_hydra2(task_name="jitexp", config_search_path=search_path)
    finally:
        GlobalHydra.instance().clear()


def sweep_jobs(sweeper: DictConfig, task: Sequence[str], config_loader: Any = None) -> list[list[str]] | None:
    """Every job's task overrides, in order, as the basic sweeper expands them (None for another sweeper)."""
    if sweeper.get("_target_") != BASIC_SWEEPER:
        return None
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    params = [f"{k}={v}" for k, v in (sweeper.get("params") or {}).items()]
    parsed = parse_with(OverridesParser.create(config_loader=config_loader), params + list(task))
    for o in parsed:  # BasicSweeper raises on it when the sweep starts: a HydraException's traceback
        if o.is_interval_sweep():
            raise ConfigError(
                o.key_or_group,
                o.input_line.partition("=")[2],
                "interval() is a range of real numbers for a sweeper that samples; jitexp's sweep runs each listed "
                "value: write a list (a,b), range(start,stop,step) or choice(a,b)",
            )
    return [job for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]


def parse_with(parser: Any, texts: list[str]) -> list[Any]:
    from hydra.errors import HydraException

    try:
        return parser.parse_overrides(texts)
    except HydraException as exc:  # e.g. glob() of a group that does not exist
        raise ConfigError("override", None, first_line(exc)) from exc


def compose_raw(hydra: Any, overrides: Sequence[str]) -> DictConfig:
    """The composed config of one run, Hydra's node included; mistakes as ConfigError."""
    return compose_config(hydra, list(overrides), parse_overrides(overrides), run_mode="RUN")


@contextmanager
def known_mode(mode: Any) -> Iterator[None]:
    """Hydra composes the whole config once only to read hydra.mode (Hydra.get_mode), then again to run it; the
    preflight has read it from the same composition already, so within this block get_mode returns it (0.3 s on a
    CPU, more on a busy host). MODE_UNREAD leaves Hydra as it is."""
    from hydra._internal.hydra import Hydra

    if mode is MODE_UNREAD:
        yield
        return
    original = Hydra.get_mode
    Hydra.get_mode = lambda self, config_name, overrides: mode  # type: ignore[method-assign]
    try:
        yield
    finally:
        Hydra.get_mode = original  # type: ignore[method-assign]


def compose_config(hydra: Any, texts: list[str], parsed: list[Any], *, run_mode: str) -> DictConfig:
    from hydra.types import RunMode

    try:
        return hydra.compose_config(CONFIG_NAME, list(texts), run_mode=RunMode[run_mode])
    except Exception as exc:
        raise _explain(exc, parsed, hydra) from exc


def override_value(parsed: list[Any], key: str) -> Any:
    """The text the user gave for `key`, so the message quotes their own value."""
    for o in reversed(parsed):
        if o.key_or_group == key:
            typed = o.input_line.partition("=")[2]
            # an interpolation as typed: Hydra's own string of it escapes the braces ('$\\{size\\}')
            return typed if o.is_sweep_override() or "${" in typed else o.get_value_element_as_str()
    return None


# ---- mistakes inside config files: the same line as on the command line, naming the file ----

_COMPOSING = re.compile(r"In '(?P<path>[^']+)': \w+ raised while composing config:")
_ABSENT = object()


def _in_file(exc: Exception, hydra: Any) -> ConfigError | None:
    """A key or value Hydra refused while merging a config file, worded as on the command line, naming the file."""
    match = _COMPOSING.match(str(exc))
    cause = exc.__context__  # Hydra re-raises the OmegaConf error without chaining it as the cause
    if match is None or not isinstance(cause, OmegaConfBaseException) or not cause.full_key:
        return None
    key, path = cause.full_key, match["path"]
    if isinstance(cause, (ConfigAttributeError, ConfigKeyError)):
        parent = cause.parent_node
        known = [str(k) for k in parent.keys() if k != "hydra"] if isinstance(parent, DictConfig) else []
        error = unknown_key(key, _file_value(hydra, path, key), known)
    elif isinstance(cause, ValidationError):
        error = ConfigError(key, cause.value, expected_type(re.sub(r"\[\d+\]$", "", key)))
    else:
        error = ConfigError(key, cause.value, first_line(cause))
    return ConfigError(error.key, error.value, error.expected, _file_of(hydra, path) or path)


def _not_yaml(exc: Exception) -> ConfigError | None:
    """A config file that does not parse: `file:line:column`, what the parser expected, where the construct began."""
    import yaml

    mark = getattr(exc, "problem_mark", None)
    if not isinstance(exc, yaml.MarkedYAMLError) or mark is None:
        return None
    name = os.path.relpath(mark.name) if not os.path.relpath(mark.name).startswith(os.pardir) else mark.name
    group, option = os.path.basename(os.path.dirname(mark.name)), os.path.splitext(os.path.basename(mark.name))[0]
    began = f" ({exc.context} from line {exc.context_mark.line + 1})" if exc.context and exc.context_mark else ""
    return ConfigError(
        group or "config", option, f"not valid YAML: {exc.problem}{began}", f"{name}:{mark.line + 1}:{mark.column + 1}"
    )


def located(hydra: Any, error: ConfigError, parsed: list[Any]) -> ConfigError:
    """The mistake with the user's file that set its key named, unless the command line set the key."""
    if error.source or _on_command_line(hydra, parsed, error.key):
        return error
    path = _setting_config(hydra, parsed, error.key)
    source = _file_of(hydra, path) if path else None
    return ConfigError(error.key, error.value, error.expected, source) if source else error


def _on_command_line(hydra: Any, parsed: list[Any], key: str) -> bool:
    """Whether an override (not a group choice) sets `key` or a node above it."""
    repository = hydra.config_loader.repository
    for o in parsed:
        name = o.key_or_group
        if o.is_hydra_override() or repository.group_exists(name):
            continue
        if key == name or key.startswith((name + ".", name + "[")):
            return True
    return False


def _setting_config(hydra: Any, parsed: list[Any], key: str) -> str | None:
    """The config path (`workload/typo`) of the last file in the defaults list that sets `key`, else its parent node.

    A key no file sets (a workload file without `fn`) is blamed on the last file that sets the
    node above it: the workload's own file, or an experiment's `workload:` section.
    """
    from hydra.types import RunMode

    loader = hydra.config_loader
    try:
        defaults = loader.compute_defaults_list(CONFIG_NAME, [o.input_line for o in parsed], RunMode.RUN).defaults
    except Exception:
        return None
    files = [
        d
        for d in defaults
        if d.config_path
        and not (d.package or "").startswith("hydra")
        and _scheme(hydra, d.config_path) in ("file", "pkg")
    ]
    loaded = {d.config_path: loader.repository.load_config(d.config_path) for d in files}
    parts = re.sub(r"\[\d+\]", "", key).split(".")
    for end in range(len(parts), 0, -1):
        node = ".".join(parts[:end])
        for d in reversed(files):
            rel = _relative(node, d.package or "")
            config = loaded[d.config_path]
            if rel is not None and config is not None and _sets(config.config, rel):
                return d.config_path
    return None


def _relative(key: str, package: str) -> str | None:
    """`key` inside a file of `package` (`workload.fn` in package `workload` is `fn`); None when outside it."""
    if not package:
        return key
    if key == package:
        return ""
    return key[len(package) + 1 :] if key.startswith(package + ".") else None


def _sets(cfg: Any, rel: str) -> bool:
    """Whether a loaded file gives the key a value (`???` is none)."""
    if not rel:
        return True
    try:
        return (
            OmegaConf.select(cfg, rel, default=_ABSENT, throw_on_missing=True, throw_on_resolution_failure=False)
            is not _ABSENT
        )
    except MissingMandatoryValue:
        return False


def _file_value(hydra: Any, path: str, key: str) -> Any:
    """What the file at config path `path` writes for `key` (under whatever package), as plain data."""
    loaded = hydra.config_loader.repository.load_config(path)
    parts = key.split(".")
    for i in range(len(parts)):
        rel = ".".join(parts[i:])
        if loaded is not None and _sets(loaded.config, rel):
            value = OmegaConf.select(loaded.config, rel, throw_on_missing=False, throw_on_resolution_failure=False)
            return OmegaConf.to_container(value) if isinstance(value, Container) else value
    return None


def _scheme(hydra: Any, path: str) -> str | None:
    """Where a config comes from: `file` (a user's --config-dir), `pkg` (jitexp's own), `structured` (the schema)."""
    for source in hydra.config_loader.repository.get_sources():
        if source.is_config(path):
            return str(source.scheme())
    return None


def _file_of(hydra: Any, path: str) -> str | None:
    """The user's file behind config path `path`, relative to the cwd when under it; None for jitexp's own configs."""
    for source in hydra.config_loader.repository.get_sources():
        if source.is_config(path):
            if source.scheme() != "file":
                return None
            name = os.path.join(source.path, f"{path}.yaml")
            rel = os.path.relpath(name)
            return name if rel.startswith(os.pardir) else rel
    return None


REPLACED = ("mesh.shape", "workload.shardings")  # a mapping given for these replaces the config's, not merges


def replacing(overrides: Sequence[str]) -> list[str]:
    """The overrides with `KEY=null` before each `KEY={...}` of REPLACED: Hydra merges a mapping into a mapping
    (tp_mlp's own shardings would stay beside the command line's, or an unknown key would be refused), and a
    mapping given on the command line means that mapping."""
    out: list[str] = []
    for text in overrides:
        key, sep, value = text.partition("=")
        if sep and key in REPLACED and value.lstrip().startswith("{"):
            out.append(f"{key}=null")
        out.append(text)
    return out


OPEN_MAPPINGS = (
    "mode.compiler_options.",
    "workload.kwargs.",
    "workload.carry.",
)  # keys a user adds to; workload.params are declared by the workload


def with_plus(what: str, key: str, value: Any) -> str:
    """``a new entry needs a leading +: +key=value``: the override Hydra takes to add a key its config lacks."""
    return f"a new {what} needs a leading +: +{key}={'VALUE' if value is None else value}"


def new_param(error: ConfigError) -> ConfigError:
    """An unknown `workload.params.X=V` from the command line, saying the override that adds it: Hydra adds a
    key the workload's file does not declare (a setup function's own knob) only with a leading +."""
    add = with_plus("param", error.key, error.value)
    expected = f"{error.expected} ({add})" if error.expected.endswith("?") else f"{error.expected}; {add}"
    return ConfigError(error.key, error.value, expected, error.source)


def _explain(exc: Exception, parsed: list[Any], hydra: Any) -> ConfigError:
    """A Hydra/OmegaConf composition error as one ConfigError: key, value, what would be right."""
    if isinstance(exc, ConfigError):
        return exc
    for explained in (
        lambda: _missing_config(exc, hydra),
        lambda: _in_file(exc, hydra) or _not_yaml(exc),
        lambda: _node_mistake(exc, parsed),
        lambda: _deletion(str(exc), hydra),
        lambda: _override_mistake(str(exc), parsed, hydra),
    ):
        error = explained()
        if error is not None:
            return error
    return ConfigError("config", None, first_line(exc))


def _missing_config(exc: Exception, hydra: Any) -> ConfigError | None:
    """A group's option or a --config-dir that Hydra cannot find: the group's valid choices, or Hydra's line."""
    from hydra.errors import MissingConfigException, SearchPathException

    if isinstance(exc, MissingConfigException) and exc.missing_cfg_file:
        group, _, option = str(exc.missing_cfg_file).rpartition("/")
        options = exc.options or (hydra.config_loader.get_group_options(group) if group else [])
        if group and options:
            import difflib

            close = difflib.get_close_matches(option, options, n=1, cutoff=0.7)
            guess = f"did you mean {close[0]}? " if close else ""
            return ConfigError(group, option, guess + "valid choices: " + ", ".join(options))
        if group:
            return ConfigError(group, option, "the group has no options")
        return ConfigError("config", option, first_line(exc))
    if isinstance(exc, SearchPathException):
        return ConfigError("--config-dir", None, first_line(exc))
    return None


def _node_mistake(exc: Exception, parsed: list[Any]) -> ConfigError | None:
    """OmegaConf's error on one key of the config (the cause of Hydra's): an unknown key, a value of the wrong type,
    a key of the schema deleted."""
    cause = exc.__cause__
    if isinstance(cause, OmegaConfBaseException) and cause.full_key:
        key = cause.full_key
        value = override_value(parsed, key)
        if isinstance(cause, (ConfigAttributeError, ConfigKeyError)):
            parent = cause.parent_node
            if key.startswith(OPEN_MAPPINGS) and isinstance(parent, DictConfig) and not len(parent):
                # an open mapping: Hydra adds entries with a leading +
                return ConfigError(key, value, with_plus("entry", key, value))
            known = [str(k) for k in parent.keys() if k != "hydra"] if isinstance(parent, DictConfig) else []
            if key.startswith("workload.params."):
                return new_param(unknown_key(key, value, known))
            return unknown_key(key, value, known)
        if isinstance(cause, ValidationError) or first_line(cause).startswith("Cannot merge"):
            # a value of the wrong type, or a mapping where a list goes ("Cannot merge DictConfig with ListConfig")
            return ConfigError(key, value, expected_type(key))
        if "does not support deletion" in first_line(cause):  # ~KEY of a key every job has
            value = "package.module.function (every job measures a function)" if key == "workload.fn" else "VALUE"
            return ConfigError(
                f"~{key}", None, f"{key} is a key of jitexp's schema and cannot be deleted; set {key}={value}"
            )
        return ConfigError(key, value, first_line(cause))
    return None


def _deletion(message: str, hydra: Any) -> ConfigError | None:
    """`~KEY` of a key that holds nothing or of no key, `~GROUP` of a group every job selects."""
    nothing = re.match(r"Could not delete from config\. '([^']+)' does not exist", message)
    if nothing:  # `~KEY` of a key that is null unless set, or of no key at all
        key = nothing.group(1)
        if expected_type(key) == "has the wrong type":  # no key of the schema by that name (nor of the config)
            return ConfigError(f"~{key}", None, f"no such key, so nothing to delete; drop ~{key}")
        return ConfigError(
            f"~{key}", None, f"{key} holds nothing to delete (it is unset here); drop ~{key}, or set {key}=VALUE"
        )
    undeletable = re.match(r"Could not delete '([^']+)'\. No match in the defaults list", message)
    if undeletable:  # ~GROUP of a group whose default Hydra cannot drop (mode's list of options)
        group = undeletable.group(1)
        options = ", ".join(_group_options(hydra, group)) or "its options"
        return ConfigError(
            f"~{group}",
            None,
            f"every job selects a {group} and it cannot be deleted; choose with {group}=OPTION "
            f"(valid choices: {options})",
        )
    return None


def _override_mistake(message: str, parsed: list[Any], hydra: Any) -> ConfigError | None:
    """An override Hydra refuses as a whole: a group's option that interpolates, a list item of the wrong type, a
    sweep without -m."""
    interpolated = next(
        (o for o in parsed if "${" in o.input_line.partition("=")[2] and _group_options(hydra, o.key_or_group)), None
    )
    if message.startswith("Error resolving interpolation") and interpolated is not None:
        # a group's option in the defaults list: chosen before the config it could refer to exists
        group, value = interpolated.key_or_group, interpolated.input_line.partition("=")[2]
        return ConfigError(
            group,
            value,
            f"a group's option is chosen before the config exists, so it cannot refer to a key of it; name an option: "
            f"valid choices: {', '.join(_group_options(hydra, group))}",
        )
    if message.startswith("Error merging override "):  # e.g. a list item of the wrong type: no full key
        key, _, value = message.removeprefix("Error merging override ").partition("=")
        return ConfigError(key.lstrip("+~"), value, expected_type(key.lstrip("+~")))
    if message.startswith("Ambiguous value for argument"):
        override = next((o for o in parsed if o.is_sweep_override()), None)
        if override is not None:
            key = override.get_key_element().lstrip("+~")
            return ConfigError(
                key,
                override.input_line.partition("=")[2],
                f"a sweep needs -m (--multirun); a list is {key}=[a,b]; "
                f"a string with commas is quoted: {key}=\"'a,b'\"",
            )
    return None


def _group_options(hydra: Any, key: str) -> list[str]:
    try:
        return list(hydra.config_loader.get_group_options(key))
    except Exception:  # not a group
        return []
