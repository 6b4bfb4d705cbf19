"""The user's functions: imported by path only to check what a config names (arity, jit options)."""

from __future__ import annotations

import importlib
import inspect
import logging
import os
import re
import sys
from typing import Any, Callable, Iterable

from jitexp.config.schema import ExperimentConfig
from jitexp.errors import ConfigError, first_line, qualified_name
from jitexp.labels import prejitted_refusal

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
    """The callable at `package.module.attr` (or `module.Class.method`: the longest prefix that is a module, then
    attributes), or a ConfigError on `key` saying why it cannot be had."""
    parts = current_path(path).split(".")
    module, cut = None, 0
    for cut in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            module = importlib.import_module(module_name)
            break
        except ModuleNotFoundError as exc:
            if cut > 1 and exc.name == module_name:  # not a module: perhaps an attribute of a shorter one
                continue
            _import_failed(key, path, module_name, exc)
        except Exception as exc:  # the module's own code failing as it loads
            _import_failed(key, path, module_name, exc)
    if module is None:
        raise ConfigError(key, path, "needs an import path like package.module.function")
    fn: Any = module
    for i, attr in enumerate(parts[cut:]):
        fn = getattr(fn, attr, None)
        if fn is None:
            owner = ".".join(parts[: cut + i])
            if i == 0:
                raise ConfigError(key, path, f"module {owner!r} has no callable {attr!r}")
            raise ConfigError(key, path, f"{owner} (module {module.__name__!r}, then attributes) has no {attr!r}")
    if not callable(fn):
        raise ConfigError(key, path, f"module {module.__name__!r} has no callable {'.'.join(parts[cut:])!r}")
    return fn


def _import_failed(key: str, path: str, module_name: str, exc: Exception) -> None:
    missing = getattr(exc, "name", None) or ""
    extra = (
        '; it needs the models extra: pip install "jitexp[models]"'
        if isinstance(exc, ModuleNotFoundError) and missing.split(".")[0] in EXTRA_PACKAGES
        else ""
    )
    raise ConfigError(
        key, path, f"importing {module_name!r} failed: {qualified_name(type(exc))}: {first_line(exc)}{extra}"
    ) from None


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
    mistake = jit_refusal(fn, jit_fn if cfg.mode.jit or cfg.mode.aot else None, jit_options_in_force(cfg))
    if mistake is not None:
        key, expected = mistake
        raise ConfigError(
            OPTION_KEYS.get(key, "workload.fn"),
            w.fn if key == "fn" else list(jit_options_in_force(cfg)[key]),
            expected,
        )
    how = (
        f"name the function it wraps (jitexp applies {cfg.jit_fn} itself; keep the jit decorator off it), or time "
        "the compiled call alone: mode=jit"
    )
    prejitted = prejitted_refusal(fn, cfg.mode.names, how)
    if prejitted is not None:  # issue 57: `jit 1.13x faster than eager` compared a program with itself
        raise ConfigError("workload.fn", w.fn, prejitted)


# the config key of each jit option jit_refusal may blame
OPTION_KEYS = {
    "static_argnums": "mode.static_argnums",
    "static_argnames": "mode.static_argnames",
    "donate_argnums": "mode.donate_argnums",
    "donate_argnames": "mode.donate_argnames",
    "compiler_options": "mode.compiler_options",
}


def jit_refusal(fn: Callable, jit_fn: Callable | None, options: dict[str, Any]) -> tuple[str, str] | None:
    """Why the function cannot be measured as given, found before anything runs: (the option to blame, or "fn"; what
    to do), or None. A generator function (eager would time making a generator, and jax.jit refuses it); jit_fn
    (None: no compiled mode) raising as it wraps the function with the job's options (a static position out of
    range, a donated static argument)."""
    target = inspect.unwrap(fn) if callable(fn) else fn
    if inspect.isgeneratorfunction(target) or inspect.isasyncgenfunction(target):
        return (
            "fn",
            "is a generator function (it yields): jax.jit refuses it, and eager would time making a generator; "
            "return the arrays instead",
        )
    if inspect.iscoroutinefunction(target):
        return "fn", "is a coroutine function (async def): jax.jit refuses it; make it a plain def"
    if jit_fn is None:
        return None
    try:
        jit_fn(fn, **options)
    except Exception as exc:
        message = first_line(exc)
        named = [k for k in options if k in message] or [k for k in options if k.split("_")[0] + "_arg" in message]
        blamed = named[-1] if named else "fn"  # of a static and a donated one, the donation
        return blamed, f"{public_jit_name(jit_fn)} refuses it: {qualified_name(type(exc))}: {message}"
    return None


def public_jit_name(jit_fn: Callable) -> str:
    module = getattr(jit_fn, "__module__", "") or ""
    name = getattr(jit_fn, "__qualname__", None) or getattr(jit_fn, "__name__", "jit_fn")
    return "jax.jit" if module.startswith("jax") and name == "jit" else f"{module.split('.')[0]}.{name}".strip(".")


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


# standard modules that no library imports: a user's test.py is theirs
UNSHADOWED = frozenset({"test", "this", "antigravity", "idlelib", "turtledemo", "__hello__", "__phello__"})


def shadowing_files(folder: str) -> list[str]:
    """The files and packages in `folder` (the current one, first on the path of jitexp and of its workers) named like
    a standard module: Python imports them instead of it, in jitexp, JAX and the user's own imports alike (a json.py
    broke the workers' channel; a profile.py broke cProfile, so that importing flax failed)."""
    found = []
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return []
    for entry in entries:
        path = os.path.join(folder, entry)
        stem = entry[:-3] if entry.endswith(".py") and os.path.isfile(path) else entry
        if stem == entry and not os.path.isfile(os.path.join(path, "__init__.py")):
            continue
        if stem in sys.stdlib_module_names and stem not in UNSHADOWED:
            found.append(entry)
    return found


def check_shadowing(folder: str) -> None:
    """shadowing_files as one line (ConfigError) naming the first file and the standard module it hides."""
    found = shadowing_files(folder)
    if found:
        name = found[0].removesuffix(".py")
        more = f" (and {', '.join(found[1:])})" if len(found) > 1 else ""
        raise ConfigError(
            f"./{found[0]}",
            None,
            f"its name hides Python's standard module {name}{more}: the folder jitexp runs in comes first on the "
            f"import path, so Python, JAX and jitexp would import it instead; rename it (e.g. my_{found[0]})",
        )
