"""The user's functions: imported by path only to check what a config names (arity, jit options)."""

from __future__ import annotations

import importlib
import inspect
import logging
import re
from typing import Any, Callable, Iterable

from jitexp.config.schema import ExperimentConfig
from jitexp.errors import ConfigError, first_line, qualified_name

log = logging.getLogger("jitexp")

EXTRA_PACKAGES = {"flax", "optax", "equinox"}  # what `pip install "jitexp[models]"` brings
# the built-ins' import paths before the workloads became a package: a saved config naming one still runs
MOVED = {f"jitexp.{name}.": f"jitexp.workloads.{name}." for name in ("library", "twins", "models")}


def current_path(path: str) -> str:
    """A function's import path as it is today (a built-in's old path mapped to its new one)."""
    for old, new in MOVED.items():
        if path.startswith(old):
            return new + path[len(old) :]
    return path


def import_fn(path: str, key: str = "workload.fn") -> Callable:
    """The callable at `package.module.attr`, or a ConfigError on `key` saying why it cannot be had."""
    module_name, _, attr = current_path(path).rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # ImportError, or the module's own code failing as it loads
        missing = getattr(exc, "name", None) or ""
        extra = (
            '; it needs the models extra: pip install "jitexp[models]"'
            if isinstance(exc, ModuleNotFoundError) and missing.split(".")[0] in EXTRA_PACKAGES
            else ""
        )
        raise ConfigError(
            key, path, f"importing {module_name!r} failed: {qualified_name(type(exc))}: {first_line(exc)}{extra}"
        ) from None
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ConfigError(key, path, f"module {module_name!r} has no callable {attr!r}")
    return fn


def jit_options_in_force(cfg: ExperimentConfig) -> dict[str, Any]:
    """The jit options the job sets (empty ones left out): what jit_fn is called with."""
    values = {
        "static_argnums": list(cfg.static_argnums),
        "static_argnames": list(cfg.static_argnames),
        "donate_argnums": list(cfg.donate_argnums),
        "donate_argnames": list(cfg.mode.donate_argnames),
        "compiler_options": dict(cfg.mode.compiler_options),
    }
    return {k: v for k, v in values.items() if v}


def refused_options(jit_fn: Callable, options: Iterable[str]) -> list[str]:
    """The options a jit transformation's signature does not take (a **kwargs wrapper takes compiler_options only)."""
    try:
        params = inspect.signature(jit_fn).parameters
    except (TypeError, ValueError):
        return []
    var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return [o for o in options if o not in params and not (var_kw and o == "compiler_options")]


def check_arity(cfg: ExperimentConfig) -> None:
    """Import every function the workload names and check it can be called as configured, when inspectable.

    fn (and numpy_fn) take the listed arguments and keywords; setup takes size, dtype, seed and
    the params as keywords; keyword names are fn's; jit_fn takes the jit options the job sets.
    """
    w = cfg.workload
    fn = _check_call(cfg, "workload.fn", w.fn)
    if w.numpy_fn is not None:
        _check_call(cfg, "workload.numpy_fn", w.numpy_fn)
    if w.setup is not None:
        setup = import_fn(w.setup, "workload.setup")
        names = ["size", "dtype", "seed", *w.params]
        signature = _signature(setup)
        if signature is not None:
            try:
                signature.bind(**dict.fromkeys(names))
            except TypeError as exc:
                raise ConfigError(
                    "workload.setup",
                    w.setup,
                    f"{w.setup}{signature} cannot be called with size, dtype, seed and the params "
                    f"({', '.join(names[3:]) or 'none'}) as keywords ({exc}); name each param in its signature",
                ) from None
            swallowed = [
                name
                for name in w.params
                if name not in signature.parameters
                and any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())
            ]
            if swallowed:  # a **kw setup would take a misspelt param without a word
                raise ConfigError(
                    f"workload.params.{swallowed[0]}",
                    w.params[swallowed[0]],
                    f"{w.setup}{signature} does not name it, so its **{_var_keyword(signature)} would take it "
                    f"unread; name {swallowed[0]} in the setup's signature, or drop the param",
                )
    signature = _signature(fn)
    if signature is not None and not any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()
    ):
        for key, names in (
            ("static_argnames", list(cfg.static_argnames)),
            ("mode.donate_argnames", cfg.mode.donate_argnames),
        ):
            unknown = [n for n in names if n not in signature.parameters]
            if unknown:
                which = (
                    key
                    if key.startswith("mode.")
                    else (
                        "mode.static_argnames" if cfg.mode.static_argnames is not None else "workload.static_argnames"
                    )
                )
                raise ConfigError(which, list(names), f"{unknown[0]!r} is not a parameter of {w.fn}{signature}")
    jit_key = "mode.jit_fn" if cfg.mode.jit_fn else "workload.jit_fn"
    jit_fn = import_fn(cfg.jit_fn, jit_key)
    refused = refused_options(jit_fn, jit_options_in_force(cfg))
    if refused and (cfg.mode.jit or cfg.mode.aot):
        raise ConfigError(jit_key, cfg.jit_fn, f"it takes no {refused[0]} (set by the job); drop it for this jit_fn")


def arity_mistake(cfg: ExperimentConfig) -> tuple[str, object, str, str | None] | None:
    """check_arity's verdict as plain values, for a check run in another process: None, or the ConfigError's
    (key, value, expected, source)."""
    try:
        check_arity(cfg)
    except ConfigError as error:
        return error.key, error.value, error.expected, error.source
    return None


def _var_keyword(signature: inspect.Signature) -> str:
    return next(p.name for p in signature.parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD)


def _signature(fn: Callable) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):  # builtins and some C extensions hide their signature
        return None


def _check_call(cfg: ExperimentConfig, key: str, path: str) -> Callable:
    fn = import_fn(path, key)
    signature = _signature(fn)
    if signature is None or cfg.workload.args is None:
        return fn  # setup's arguments are known only when it has run
    n_args = len(cfg.workload.args)
    try:
        signature.bind(*range(n_args), **dict.fromkeys(cfg.workload.kwargs))
    except TypeError as exc:
        unexpected = re.search(r"unexpected keyword argument '(\w+)'", str(exc))
        if unexpected and unexpected.group(1) in cfg.workload.kwargs:  # the positions fit; the keyword does not
            name = unexpected.group(1)
            raise ConfigError(
                f"workload.kwargs.{name}",
                cfg.workload.kwargs[name],
                f"{path}{signature} takes no keyword argument {name!r}; drop it, or name one of its parameters",
            ) from None
        keywords = f" and keyword(s) {', '.join(cfg.workload.kwargs)}" if cfg.workload.kwargs else ""
        missing = str(exc).startswith("missing a required")  # what the call lacks, not what it has too many of
        name = str(exc).rpartition(" ")[2].strip("'")
        param = signature.parameters.get(name)
        keyword_only = param is not None and param.kind is inspect.Parameter.KEYWORD_ONLY
        raise ConfigError(
            "workload.args",
            None,
            f"it lists {n_args} argument(s){keywords}, but {path}{signature} "
            + (
                f"also needs the keyword-only argument {name!r}: give it in workload.kwargs, e.g. "
                f"+workload.kwargs.{name}=VALUE"
                if missing and keyword_only
                else f"needs more: {exc}"
                if missing
                else f"does not take {n_args} positional argument(s){keywords}"
            ),
        ) from None
    return fn
