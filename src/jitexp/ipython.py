"""`%load_ext jitexp` gives `%jitexp [options] f(x, y)`: jitexp.measure on a call written as in the notebook.

Like `%timeit`, the call's function and arguments are evaluated in the user's namespace (the call
itself is not made there). The magic returns the Measurement and prints nothing, so a bare
`%jitexp ...` shows the result once (its table in a notebook, its line in a terminal) and
`x = %jitexp ...` keeps it, shown by `x`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any, NamedTuple


class Option(NamedTuple):
    """One of the magic's options: its short and long flag (the long one is jitexp.measure's keyword)."""

    short: str
    long: str
    kind: str  # how its value is read: names, positions, carry, expr, timing, text, int


OPTIONS = (
    Option("m", "modes", "names"),
    Option("t", "timing", "timing"),
    Option("s", "static_argnums", "positions"),
    Option("k", "static_argnames", "names"),
    Option("d", "donate_argnums", "positions"),
    Option("c", "carry", "carry"),
    Option("K", "kwargs", "expr"),
    Option("j", "jit_fn", "expr"),
    Option("i", "isolate", "text"),
    Option("D", "device", "text"),
    Option("n", "name", "text"),
    Option("z", "size", "int"),
)


def find_option(flag: str) -> Option | None:
    """The option of `-m`, `--modes`, `--static-argnums` or `--static_argnums`; None for an unknown flag."""
    if flag.startswith("--"):
        return next((o for o in OPTIONS if o.long == flag[2:].replace("-", "_")), None)
    return next((o for o in OPTIONS if f"-{o.short}" == flag), None)


USAGE = """%jitexp [options] f(x, y, key=value)

Measure the call on jitexp's engine (fresh worker processes, paired modes) and return the
jitexp.Measurement: a bare %jitexp shows it once (a table in a notebook, the verdict line in a
terminal); x = %jitexp ... keeps it without showing it. The options are jitexp.measure's keywords,
each as a short or a long flag (--static-argnums or --static_argnums; --modes=jit,aot or --modes jit,aot).
A value holding spaces goes in quotes or brackets: -c "{0: 0}", -K dict(lr=0.1, n=3).
  -m, --modes MODES              comma-separated, of eager, jit, aot (default eager,jit)
  -t, --timing TIMING            a preset (default, quick, rigorous) or a mapping, e.g. -t "{'processes': 8}"
  -s, --static_argnums POSITIONS comma-separated argument positions, e.g. -s 1,2
  -k, --static_argnames NAMES    comma-separated keyword names
  -d, --donate_argnums POSITIONS comma-separated argument positions
  -c, --carry OUT:ARG[,OUT:ARG]  each timed call takes the previous call's output OUT as argument ARG
                                 (a training step: -c 0:0 feeds the new state back); or a mapping {0: 0}
  -K, --kwargs MAPPING           more keyword arguments of the function, e.g. -K "{'lr': 0.1}"
  -j, --jit_fn EXPR              the jit transformation, e.g. eqx.filter_jit (default jax.jit)
  -i, --isolate ISOLATE          process (default) or none (in this process: not final numbers)
  -D, --device DEVICE            cpu, gpu, tpu, auto, or e.g. gpu:1 (default: where the arrays are)
  -n, --name NAME                the workload name in the rows (default: the function's name)
  -z, --size SIZE                the size in the rows (default: the largest array's element count)
Expressions (-c as a mapping, -K, -j, -t as a mapping) are evaluated in the notebook's namespace.
"""


def load_ipython_extension(ipython: Any) -> None:
    """IPython's hook for `%load_ext jitexp`: registers the %jitexp line magic."""
    ipython.register_magic_function(_magic(ipython), magic_kind="line", magic_name="jitexp")


def _magic(ipython: Any) -> Any:
    from IPython.core.magic import no_var_expand

    def jitexp(line: str) -> Any:
        return run_magic(ipython, line)

    jitexp.__doc__ = USAGE
    return no_var_expand(jitexp)  # like %timeit: `{0: 0}` and `$x` are Python, not IPython's interpolation


def run_magic(ipython: Any, line: str) -> Any:
    """Parse `[options] CALL`, evaluate the call's parts in the user namespace, measure and return the result."""
    from jitexp.api import measure

    options, call = split_line(line)
    fn, args, kwargs = evaluate_call(call, ipython.user_ns)
    keywords = measure_keywords(options, ipython.user_ns)
    keywords["kwargs"] = merged_kwargs(kwargs, keywords.get("kwargs"))
    return measure(fn, *args, **keywords)


def split_line(line: str) -> tuple[dict[str, str], str]:
    """`-m jit,aot --timing quick f(x)` -> ({"modes": "jit,aot", "timing": "quick"}, "f(x)"): long names."""
    options: dict[str, str] = {}
    rest = line.strip()
    while rest.startswith("-"):
        flag, _, after = _split_flag(rest)
        option = find_option(flag)
        value, rest = _take_value(after)
        if option is None or not value:
            raise ValueError(
                f"%jitexp: unknown or incomplete option {flag!r}; options: "
                + " ".join(f"-{o.short}/--{o.long}" for o in OPTIONS)
                + ", each with a value (%jitexp? shows them)"
            )
        options[option.long] = value
        rest = rest.strip()
    if not rest:
        raise ValueError("%jitexp: no call to measure; write one, e.g. %jitexp -m jit,aot f(x, y)")
    return options, rest


def measure_keywords(options: Mapping[str, str], namespace: dict[str, Any]) -> dict[str, Any]:
    """jitexp.measure's keywords from the options' texts (long names), expressions evaluated in namespace."""
    kinds = {o.long: o.kind for o in OPTIONS}
    return {name: _value(kinds[name], name, text, namespace) for name, text in options.items()}


def merged_kwargs(call: Mapping[str, Any], extra: Any) -> dict[str, Any]:
    """The call's own keyword arguments and those of --kwargs; a name given in both is a mistake, not an override."""
    if extra is None:
        return dict(call)
    if not isinstance(extra, Mapping):
        raise ValueError(
            f"%jitexp: --kwargs takes a mapping of keyword arguments, e.g. -K \"{{'lr': 0.1}}\"; got {extra!r}"
        )
    both = sorted(set(call) & set(extra))
    if both:
        raise ValueError(f"%jitexp: keyword argument(s) {', '.join(both)} given both in the call and in --kwargs")
    return {**call, **extra}


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


def parse_carry(text: str, namespace: dict[str, Any]) -> dict[int, int]:
    """`0:0,1:2` -> {0: 0, 1: 2}; anything else is an expression (`{0: 0}`, a name) giving a mapping."""
    if re.fullmatch(r"\s*\d+\s*:\s*\d+(\s*,\s*\d+\s*:\s*\d+)*\s*", text):
        return {int(out): int(arg) for out, arg in (pair.split(":") for pair in text.split(","))}
    value = _evaluate(text, namespace, "--carry")
    if not isinstance(value, Mapping):
        raise ValueError(f"%jitexp: --carry takes OUT:ARG pairs (-c 0:0) or a mapping {{0: 0}}; got {value!r}")
    return dict(value)


def _value(kind: str, name: str, text: str, namespace: dict[str, Any]) -> Any:
    """One option's value from its text, read as its kind says."""
    flag = f"--{name}"
    if kind == "names":
        return _names(text)
    if kind == "positions":
        return _positions(text, flag)
    if kind == "carry":
        return parse_carry(text, namespace)
    if kind == "timing":
        return text if text.isidentifier() else _evaluate(text, namespace, flag)  # a preset's name, else a mapping
    if kind == "expr":
        return _evaluate(text, namespace, flag)
    if kind == "int":
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"%jitexp: {flag} takes a whole number, e.g. {flag} 4096; got {text!r}") from None
    return text


def _evaluate(text: str, namespace: dict[str, Any], flag: str) -> Any:
    try:
        return eval(text, namespace)  # an expression of the user's, like the call
    except SyntaxError as exc:
        raise ValueError(f"%jitexp: {flag} {text!r} is not a Python expression ({exc.msg})") from None


def _split_flag(text: str) -> tuple[str, str, str]:
    """`--modes=jit f(x)` -> ("--modes", "=", "jit f(x)"); `-m jit f(x)` -> ("-m", " ", "jit f(x)")."""
    match = re.match(r"(-{1,2}[^\s=]*)(=?)(.*)", text, re.S)
    assert match is not None  # text starts with "-"
    return match[1], match[2], match[3]


def _take_value(text: str) -> tuple[str, str]:
    """An option's value and the rest: up to the first space outside brackets and quotes (quotes removed
    around a value that is quoted as a whole)."""
    text = text.lstrip()
    if text[:1] in ("'", '"'):
        end = text.find(text[0], 1)
        if end > 0:
            return text[1:end], text[end + 1 :]
    depth, quote = 0, ""
    for i, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char.isspace() and depth <= 0:
            return text[:i], text[i:]
    return text, ""


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _positions(text: str, flag: str) -> list[int]:
    try:
        return [int(part) for part in _names(text)]
    except ValueError:
        raise ValueError(f"%jitexp: {flag} takes comma-separated argument positions, e.g. {flag} 0,2") from None
