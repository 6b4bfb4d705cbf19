"""`%load_ext jitexp` gives `%jitexp [options] f(x, y)`: jitexp.measure on a call written as in the notebook.

Like `%timeit`, the call's function and arguments are evaluated in the user's namespace (the call
itself is not made there); the magic prints the one-line verdict and returns the Measurement.
"""

from __future__ import annotations

import ast
from typing import Any

USAGE = """%jitexp [-m MODES] [-t TIMING] [-s STATIC_ARGNUMS] [-k STATIC_ARGNAMES] [-d DONATE_ARGNUMS]
        [-j JIT_FN] [-i ISOLATE] [-n NAME] f(x, y, key=value)

Measure the call on jitexp's engine (fresh worker processes, paired modes), print the verdict line
and return the jitexp.Measurement. Options:
  -m MODES            comma-separated, of eager, jit, aot (default eager,jit)
  -t TIMING           a timing preset: default, quick, rigorous
  -s STATIC_ARGNUMS   comma-separated positions; -k STATIC_ARGNAMES comma-separated names
  -d DONATE_ARGNUMS   comma-separated positions
  -j JIT_FN           an expression for the jit transformation, e.g. eqx.filter_jit
  -i ISOLATE          process (default) or none (in this process: not final numbers)
  -n NAME             the workload name in the rows (default: the function's name)
"""


def load_ipython_extension(ipython: Any) -> None:
    """IPython's hook for `%load_ext jitexp`: registers the %jitexp line magic."""
    ipython.register_magic_function(_magic(ipython), magic_kind="line", magic_name="jitexp")


def _magic(ipython: Any) -> Any:
    def jitexp(line: str) -> Any:
        return run_magic(ipython, line)

    jitexp.__doc__ = USAGE
    return jitexp


def run_magic(ipython: Any, line: str) -> Any:
    """Parse `[options] CALL`, evaluate the call's parts in the user namespace, measure, print and return."""
    from .api import measure

    options, call = split_line(line)
    fn, args, kwargs = evaluate_call(call, ipython.user_ns)
    extra: dict[str, Any] = {}
    if "m" in options:
        extra["modes"] = _names(options["m"])
    if "t" in options:
        extra["timing"] = options["t"]
    if "s" in options:
        extra["static_argnums"] = _positions(options["s"], "-s")
    if "k" in options:
        extra["static_argnames"] = _names(options["k"])
    if "d" in options:
        extra["donate_argnums"] = _positions(options["d"], "-d")
    if "j" in options:
        extra["jit_fn"] = eval(options["j"], ipython.user_ns)  # an expression of the user's, like the call
    if "i" in options:
        extra["isolate"] = options["i"]
    if "n" in options:
        extra["name"] = options["n"]
    result = measure(fn, *args, kwargs=kwargs, **extra)
    print(repr(result))
    return result


def split_line(line: str) -> tuple[dict[str, str], str]:
    """`-m jit,aot -t quick f(x)` -> ({"m": "jit,aot", "t": "quick"}, "f(x)")."""
    options: dict[str, str] = {}
    rest = line.strip()
    while rest.startswith("-"):
        flag, _, rest = rest.partition(" ")
        value, _, rest = rest.strip().partition(" ")
        name = flag.lstrip("-")
        if name not in tuple("mtskdjin") or not value:
            raise ValueError(
                f"%jitexp: unknown or incomplete option {flag!r}; options: -m -t -s -k -d -j -i -n, each with a value "
                "(%jitexp? shows them)"
            )
        options[name] = value
        rest = rest.strip()
    if not rest:
        raise ValueError("%jitexp: no call to measure; write one, e.g. %jitexp -m jit,aot f(x, y)")
    return options, rest


def evaluate_call(source: str, namespace: dict[str, Any]) -> tuple[Any, tuple, dict[str, Any]]:
    """The function, positional and keyword arguments of a call expression, evaluated in namespace (not called)."""
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"%jitexp: {source!r} is not a Python expression ({exc.msg})") from None
    call = tree.body
    if not isinstance(call, ast.Call):
        raise ValueError(f"%jitexp: {source!r} is not a call; write the call to measure, e.g. %jitexp f(x, y)")
    fn = eval(compile(ast.Expression(call.func), "<jitexp>", "eval"), namespace)
    capture = ast.Call(func=ast.Name("__jitexp_capture__", ast.Load()), args=call.args, keywords=call.keywords)
    code = compile(ast.fix_missing_locations(ast.Expression(capture)), "<jitexp>", "eval")
    args, kwargs = eval(code, namespace, {"__jitexp_capture__": lambda *a, **k: (a, k)})
    return fn, args, kwargs


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _positions(text: str, flag: str) -> list[int]:
    try:
        return [int(part) for part in _names(text)]
    except ValueError:
        raise ValueError(f"%jitexp: {flag} takes comma-separated argument positions, e.g. {flag} 0,2") from None
