"""The pytest plugin: a `jitexp_measure` fixture, saved baselines and regression checks (inert unless used).

`jitexp_measure(fn, *args, **options)` measures like `jitexp.measure` and records the result under
the test's id. `--jitexp-save=NAME` stores each test's job under `.jitexp/NAME/<test id>/` (so the
folder is a sweep for `jitexp-report`) with the measured case's identity in `case.json`,
`--jitexp-compare=NAME` compares each test with its stored job using `jitexp-compare`'s statistics
and gate: a test fails on a significant slowdown, on a function that now raises, and on a case that
changed against the baseline (function, arguments' shapes and dtypes, size, modes, options: named in
the failure) unless `--jitexp-allow-changed`; the host's drift excuses a slowdown only with
`--jitexp-excuse-host-drift`. `--jitexp-disable` calls each function once, untimed. Nothing heavier
than pytest is imported until a test measures.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from jitexp.analysis.stats import CHANGE_METRICS, THRESHOLD
from jitexp.noise import PROBES

if TYPE_CHECKING:
    from jitexp.api import Measurement
    from jitexp.config import ExperimentConfig
    from jitexp.report.compare.runs import Side

_NAME = re.compile(r"^[\w.-]+$")
CASE_JSON = "case.json"  # beside a saved job's CSVs: what was measured, to tell a changed case from a slower one


@dataclass
class Entry:
    """One measurement of a test, for the session summary."""

    test: str
    line: str  # the one-line verdict, or why nothing was timed
    against: str = ""  # the worst metric against the baseline, or why none was compared
    machine: str = ""


@dataclass
class Session:
    """The plugin's options and what the session measured."""

    root: Path
    save: str | None
    compare: str | None
    fail_on: tuple[str, ...]
    threshold: float
    allow_undetectable: bool
    disable: bool
    timing: str | None
    allow_changed: bool = False
    excuse_host_drift: str | None = None  # "auto" (the matching probe) or a probe name
    memory_threshold: tuple[float, float] = (0.0, 0.0)  # an exact memory metric's allowed increase: bytes, fraction
    entries: list[Entry] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)
    machines: set[str] = field(default_factory=set)
    replaced: int = 0  # saved tests whose folder held an earlier save of the same name

    def measure(self, request: pytest.FixtureRequest, fn: Callable, args: tuple, options: dict) -> Measurement | None:
        """Measure (or call once, when disabled) for the requesting test; save, compare, fail or skip it."""
        test = request.node.nodeid
        if self.disable:
            call_once(fn, args, options.get("kwargs") or {})
            self.entries.append(Entry(test, "not timed (--jitexp-disable): called once"))
            return None
        worker = os.environ.get("PYTEST_XDIST_WORKER")
        if worker:
            line = (
                f"jitexp: not timing under pytest-xdist (worker {worker}): parallel tests disturb each other's timings; "
                "run these tests without -n (or -p no:xdist), or pass --jitexp-disable to call each function once"
            )
            self.entries.append(Entry(test, "refused under pytest-xdist"))
            if self.save or self.compare:
                pytest.fail(line, pytrace=False)
            pytest.skip(line)
        folder = self.folder(test)
        stored = self.root / self.compare / folder if self.compare else None
        if stored is not None and not (stored / "results.csv").is_file():
            self.entries.append(Entry(test, "not timed", "no baseline"))
            pytest.skip(f"jitexp: no baseline {self.compare!r} for {test} (no {stored}); save one with --jitexp-save")
        if self.timing:
            options = {**options, "timing": self.timing}
        from jitexp.errors import ConfigError

        try:
            cfg, payload = prepare_for_test(request, fn, args, options)
        except ConfigError as error:  # jitexp.measure's one line (a generator, a static jax.jit refuses), no traceback
            self.entries.append(Entry(test, "not timed", "refused"))
            pytest.fail(f"jitexp: {test}: {error}", pytrace=False)
        identity = case_identity(cfg, args, options.get("kwargs") or {})
        # read before saving: --jitexp-save=X --jitexp-compare=X must not compare a run with itself
        changed = identity_changes(read_identity(stored), identity) if stored is not None else []
        if changed and not self.allow_changed:
            self.entries.append(Entry(test, "not timed", "case changed"))
            pytest.fail(self.changed(test, changed), pytrace=False)
        measured = run_for_test(request, cfg, payload, fn, args, options)
        if not measured.ok:
            self.entries.append(Entry(test, repr(measured), "broken" if stored is not None else ""))
            pytest.fail(f"jitexp: {test}: " + "; ".join(measured.errors), pytrace=False)
        entry = Entry(test, repr(measured))
        self.entries.append(entry)
        base = None
        if stored is not None:
            from jitexp.report.compare.runs import load_side

            base = load_side(stored)
        saved = None
        if self.save:
            from jitexp.store.folders import held_results

            target = self.root / self.save / folder
            self.replaced += bool(held_results(target))  # the baseline of that name saved before: said in the summary
            saved = measured.save(target, overwrite=True)
            write_identity(saved, identity)
        if base is not None:
            self.check(test, measured, base, saved, entry, changed)
        return measured

    def folder(self, test: str) -> str:
        """The test's job folder name: its id made a file name, numbered from its second measurement on."""
        n = self.calls[test] = self.calls.get(test, 0) + 1
        name = re.sub(r"[^\w.-]+", "_", test).strip("_")
        return name if n == 1 else f"{name}-{n}"

    def check(
        self, test: str, measured: Measurement, base: Side, saved: Path | None, entry: Entry, changed: list[str]
    ) -> None:
        """Compare with the stored job through jitexp-compare's gate: fail on a significant slowdown (or on
        "cannot tell", unless allowed), on a case that broke, and on a case that changed (unless allowed)."""
        from jitexp.report.compare.gate import BROKEN, MISSING, compare, failing
        from jitexp.report.compare.runs import across_machines, load_side, row_changes
        from jitexp.report.shared.memory import DONATION_LOST, memory_of

        with tempfile.TemporaryDirectory(prefix="jitexp-new-") as scratch:
            new = load_side(saved or measured.save(scratch))
        table = compare(
            base,
            new,
            threshold=self.threshold,
            excuse_host_drift=self.excuse_host_drift,
            memory=memory_of(self.fail_on),
            memory_threshold=self.memory_threshold,
        )
        entry.machine = "different machine" if across_machines(base, new) else "same machine"
        self.machines.add(entry.machine)
        changed = changed or (row_changes(base, new) if table.empty or (table["verdict"] == MISSING).any() else [])
        if changed:
            if not self.allow_changed:
                entry.against = "case changed"
                pytest.fail(self.changed(test, changed), pytrace=False)
            entry.against = "case changed (allowed): " + "; ".join(changed)
        kept = (
            table["metric"].isin(self.fail_on) | table["verdict"].isin([BROKEN, DONATION_LOST]) if len(table) else None
        )
        judged = table[kept] if len(table) else table
        if judged.empty:
            entry.against = entry.against or f"nothing to judge in {', '.join(self.fail_on)}"
            return
        bad = failing(judged, self.fail_on, self.allow_undetectable, allow_missing=self.allow_changed)
        decided = "; ".join(self.against(row) for _, row in deciding(judged, bad).iterrows())
        if decided:
            entry.against = (entry.against + "; " if entry.against else "") + decided
        if len(bad):
            pytest.fail("\n".join(self.failure(test, row) for _, row in bad.iterrows()), pytrace=False)

    def against(self, row: Any) -> str:
        """One compared row in `change_phrase`'s words: ``jit steady 1.02x slower than base, within the 5%
        threshold (95% CI 1.01x-1.04x, p=0.031)``; a broken or missing case as ``jit broken``."""
        from jitexp.analysis.formatting.phrases import change_phrase

        if row["verdict"] in ("broken", "missing"):
            return f"{row['mode']} {row['verdict']}"
        if not pd_finite(row.get("base_s")) and pd_finite(row.get("base_bytes")):  # a memory metric: in bytes
            return f"{row['mode']} {row['metric']} {row['verdict']}" + (f" ({row['note']})" if _text(row) else "")
        return change_phrase(
            f"{row['mode']} {row['metric']}",
            str(self.compare),
            row["ratio"],
            row["ratio_ci_low"],
            row["ratio_ci_high"],
            row["verdict"],
            row["p_value"],
            threshold=self.threshold,
        )

    def changed(self, test: str, changes: list[str]) -> str:
        """One line: what changed against the baseline, and how to measure it anyway."""
        return (
            f"jitexp: {test}: the measured case changed against the baseline {self.compare!r}: "
            + "; ".join(changes)
            + " (a different case cannot be compared: pass --jitexp-allow-changed to measure it anyway, and "
            "--jitexp-save to make it the baseline)"
        )

    def failure(self, test: str, row: Any) -> str:
        """One line: the test, the mode and metric, its change in words with the CI that way round, p, and what
        to do: ``jit steady 3.1x slower than the baseline 'base' (95% CI 2.9x-3.3x, p=0.0022, 6 vs 6 processes)``."""
        from jitexp.analysis.formatting.phrases import compared, ratio_words
        from jitexp.analysis.formatting.values import p_text

        if row["verdict"] in ("broken", "missing"):
            return f"jitexp: {test}: {row['mode']} is {row['verdict']} against the baseline {self.compare!r}: {row['note']}"
        if row["verdict"] in ("more memory", "donation lost"):  # memory (issue 59): the before and after in bytes
            return (
                f"jitexp: {test}: {row['mode']} {row['metric']}: {row['verdict']} than the baseline {self.compare!r}: "
                f"{row['note']}"
                if row["verdict"] == "more memory"
                else f"jitexp: {test}: {row['mode']} {row['verdict']} against the baseline {self.compare!r}: {row['note']}"
            )
        if not pd_finite(row["ratio"]):
            return f"jitexp: {test}: {row['mode']} {row['metric']}: {row['verdict']}; pass --jitexp-allow-undetectable"
        figure, ci = ratio_words(row["ratio"], row["ratio_ci_low"], row["ratio_ci_high"])
        change = (
            compared(f"{row['mode']} {row['metric']}", figure, f"the baseline {self.compare!r}")
            + f" (95% CI {ci}, p={p_text(row['p_value'])}, {row['n_base']} vs {row['n_new']} processes)"
        )
        if row["verdict"] == "slower":
            host = f"; {row['note']}" if str(row.get("note") or "") else ""
            return f"jitexp: {test}: {change}: slower beyond the {self.threshold:.0%} threshold{host}"
        return (
            f"jitexp: {test}: {change}: {row['verdict']}; time more processes "
            "(--jitexp-timing=default) or pass --jitexp-allow-undetectable"
        )

    def summary(self) -> list[str]:
        """The session's results, nothing cut: per test ``<test id>: <its one-line verdict>``, and when comparing
        an indented ``vs NAME (same machine): <the metric that decided>`` line below it."""
        lines = []
        for e in self.entries:
            lines.append(f"{e.test}: {e.line}")
            if self.compare:
                machine = f" ({e.machine})" if e.machine else ""
                lines.append(f"  vs {self.compare}{machine}: {e.against or '-'}")
        if lines and self.save:
            again = f", replacing {self.replaced} saved there before" if self.replaced else ""
            lines.append(f"saved: {self.root / self.save}{again} (jitexp-report {self.root / self.save})")
        if lines and "different machine" in self.machines:
            lines.append(f"compared with {self.compare!r} from a different machine: read the ratios with care")
        return lines


def _text(row: Any) -> str:
    note = row.get("note")
    return "" if note is None or (isinstance(note, float) and note != note) else str(note)


def deciding(judged: Any, bad: Any) -> Any:
    """The rows that decided a test's outcome: the failing ones, else the steady state of each mode (else every
    row with a ratio, when the steady state is not judged), slowest first."""
    if len(bad):
        return bad.sort_values("ratio", ascending=False, na_position="first")
    steady = judged[judged["metric"] == "steady"]
    shown = steady if len(steady) else judged[judged["ratio"].notna()]
    return shown.sort_values("ratio", ascending=False)


def call_once(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """--jitexp-disable: the function called once, untimed, its output blocked on when JAX is in use."""
    import sys

    out = fn(*args, **kwargs)
    if "jax" in sys.modules:
        import jax

        jax.block_until_ready(out)
    return out


def prepare_for_test(
    request: pytest.FixtureRequest, fn: Callable, args: tuple, options: dict
) -> tuple[ExperimentConfig, Any]:
    """jitexp.measure's config and payload; the test module's own functions travel by value."""
    import cloudpickle

    from jitexp.api import prepare

    module = getattr(request, "module", None)
    by_value = module is not None and getattr(module, "__name__", "") not in ("", "__main__")
    if by_value:
        try:
            cloudpickle.register_pickle_by_value(module)  # the worker need not (and may not be able to) import it
        except ValueError:
            by_value = False
    try:
        return prepare(fn, *args, **options)
    finally:
        if by_value:
            cloudpickle.unregister_pickle_by_value(module)


def run_for_test(
    request: pytest.FixtureRequest, cfg: ExperimentConfig, payload: Any, fn: Callable, args: tuple, options: dict
) -> Measurement:
    """The prepared measurement run, with the test's id in the rows' overrides, labelled as jitexp.measure's."""
    from jitexp.api import Measurement, labelled
    from jitexp.engine.runner import run

    result = run(cfg, payload=payload, overrides=request.node.nodeid)
    return Measurement(labelled(result, fn, args, options.get("kwargs") or {}, options.get("size")))


# ---- the measured case's identity -------------------------------------------------------------------


def case_identity(cfg: ExperimentConfig, args: tuple, kwargs: dict) -> dict[str, str]:
    """What a test measured, as text: the function, each argument's dtype and shape (or type and value), the
    size, dtype, modes, device and jit's options. Timing is not identity: a preset changes how, not what."""
    out = {
        "function": str(cfg.workload.fn),
        "name": str(cfg.workload_name),
        "size": str(cfg.size),
        "dtype": str(cfg.dtype),
        "modes": ",".join(cfg.mode.names),
        "device": f"{cfg.device.platform}:{cfg.device.index}",
        "static_argnums": str(list(cfg.static_argnums)),
        "static_argnames": str(list(cfg.static_argnames or [])),
        "donate_argnums": str(list(cfg.donate_argnums or [])),
        "jit_fn": str(cfg.jit_fn),
        "carry": str(dict(cfg.workload.carry or {})),
    }
    for prefix, tree in (("args", list(args)), ("kwargs", dict(kwargs))):
        for path, leaf in _leaves(tree):
            out[prefix + path] = _describe(leaf)  # args[0], kwargs['lr'], args[1]['w'] ...
    return out


def _leaves(tree: Any, path: str = "") -> list[tuple[str, Any]]:
    """(path, leaf) of a pytree: JAX's flattening when JAX is in use (modules, states), else lists, tuples, dicts."""
    if "jax" in sys.modules:
        import jax

        flat, _ = jax.tree_util.tree_flatten_with_path(tree)
        return [(jax.tree_util.keystr(p), leaf) for p, leaf in flat]
    if isinstance(tree, dict):
        return [item for k in tree for item in _leaves(tree[k], f"{path}[{k!r}]")]
    if isinstance(tree, (list, tuple)):
        return [item for i, v in enumerate(tree) for item in _leaves(v, f"{path}[{i}]")]
    return [(path, tree)]


def _describe(leaf: Any) -> str:
    """`float32[128,128]` for an array, `int 3` for a Python value (a static argument's value is identity)."""
    shape, dtype = getattr(leaf, "shape", None), getattr(leaf, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{dtype}[{','.join(str(n) for n in shape)}]"
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", repr(leaf))  # an object's address is no part of what it is
    return f"{type(leaf).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def read_identity(folder: Path | None) -> dict[str, str] | None:
    """A saved job's case.json (None when the baseline predates it: its rows are compared instead)."""
    path = folder / CASE_JSON if folder is not None else None
    if path is None or not path.is_file():
        return None
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else None


def write_identity(folder: Path, identity: dict[str, str]) -> None:
    from jitexp.store.csvio import write_atomic

    write_atomic(folder / CASE_JSON, (json.dumps(identity, indent=1) + "\n").encode())


def identity_changes(stored: dict[str, str] | None, now: dict[str, str]) -> list[str]:
    """`size: 16384 -> 65536` for each identity key that differs. An argument on one side only shows `-` on the
    other; another key on one side only (a case.json from an older jitexp) is not a change."""
    if stored is None:
        return []
    argument = lambda key: key.startswith(("args", "kwargs"))  # noqa: E731
    return [
        f"{key}: {stored.get(key, '-')} -> {now.get(key, '-')}"
        for key in dict.fromkeys([*stored, *now])
        if stored.get(key) != now.get(key) and (argument(key) or (key in stored and key in now))
    ]


def pd_finite(value: Any) -> bool:
    try:
        return value is not None and float(value) == float(value) and abs(float(value)) != float("inf")
    except (TypeError, ValueError):
        return False


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jitexp", "jitexp: measure what jax.jit does to a function (the jitexp_measure fixture)")
    group.addoption("--jitexp-save", metavar="NAME", help="store each test's measurement under .jitexp/NAME/")
    group.addoption(
        "--jitexp-compare",
        metavar="NAME",
        help="compare each test with its stored measurement NAME; fail on a significant slowdown, a function "
        "that now raises, or a changed case",
    )
    group.addoption(
        "--jitexp-fail-on",
        default=",".join(CHANGE_METRICS),
        metavar="METRICS",
        help=f"metrics whose slowdown fails a test (default {','.join(CHANGE_METRICS)}); memory metrics too "
        "(temp_bytes, peak_memory_bytes, ..., device_peak_bytes, peak_rss_growth_bytes: jitexp-compare's)",
    )
    group.addoption(
        "--jitexp-memory-threshold",
        default="0",
        metavar="BYTES_OR_PERCENT",
        help="the largest increase of XLA's memory analysis that passes: bytes (4096, 1MiB) or a percentage (2%%); "
        "default 0",
    )
    group.addoption(
        "--jitexp-threshold",
        type=float,
        default=THRESHOLD,
        help=f"smallest slowdown that counts, as a fraction (default {THRESHOLD})",
    )
    group.addoption(
        "--jitexp-allow-undetectable",
        action="store_true",
        help="pass a comparison that cannot tell (too few processes on a side) instead of failing it",
    )
    group.addoption(
        "--jitexp-allow-changed",
        action="store_true",
        help="measure a test whose case changed against the baseline (function, argument shapes or dtypes, "
        "size, modes, options) instead of failing it; what is still alike is compared",
    )
    group.addoption(
        "--jitexp-excuse-host-drift",
        nargs="?",
        const="auto",
        default=None,
        metavar="PROBE",
        help="do not fail a steady-state slowdown no larger (beyond the threshold) than the host probe doing the "
        f"test's kind of work (auto, or PROBE: {', '.join(PROBES)}) moved, when that probe's CI over processes "
        "excludes 1; off by default: a slowdown fails whatever the host did",
    )
    group.addoption("--jitexp-disable", action="store_true", help="call each measured function once, untimed")
    group.addoption("--jitexp-timing", metavar="PRESET", help="the timing preset for every test (default, quick, ...)")
    group.addoption("--jitexp-dir", default=".jitexp", metavar="DIR", help="where saved measurements live (.jitexp)")


_STATE = pytest.StashKey[Session]()


def pytest_configure(config: pytest.Config) -> None:
    option = config.getoption
    from jitexp.report.shared.memory import MEMORY_METRICS, metric_names, parse_threshold

    fail_on = tuple(metric_names(str(option("--jitexp-fail-on"))))
    valid = (*CHANGE_METRICS, *MEMORY_METRICS)
    bad = [m for m in fail_on if m not in valid]
    if bad:
        raise pytest.UsageError(f"--jitexp-fail-on={bad[0]!r} is invalid; valid choices: {', '.join(valid)}")
    try:
        memory_threshold = parse_threshold(str(option("--jitexp-memory-threshold")))
    except ValueError as exc:
        raise pytest.UsageError(f"--jitexp-memory-threshold={exc}") from None
    threshold = float(option("--jitexp-threshold"))
    if not 0 < threshold < 1:
        raise pytest.UsageError(f"--jitexp-threshold={threshold} is invalid; a fraction in (0, 1), e.g. 0.05")
    for flag in ("--jitexp-save", "--jitexp-compare"):
        name = option(flag)
        if name is not None and not _NAME.match(name):
            raise pytest.UsageError(f"{flag}={name!r} is invalid; a name of letters, digits, '.', '-' and '_'")
    timing = option("--jitexp-timing")
    if timing is not None:
        from jitexp.api import timing_presets

        if timing not in timing_presets():
            raise pytest.UsageError(
                f"--jitexp-timing={timing!r} is invalid; valid choices: {', '.join(timing_presets())}"
            )
    excuse = option("--jitexp-excuse-host-drift")
    if excuse is not None and excuse not in ("auto", *PROBES):
        raise pytest.UsageError(
            f"--jitexp-excuse-host-drift={excuse!r} is invalid; valid choices: auto, {', '.join(PROBES)}"
        )
    root = Path(option("--jitexp-dir"))
    if option("--jitexp-save") is not None:  # else each test failed with NotADirectoryError, and the summary said saved
        unwritable = _unwritable(root if root.is_absolute() else config.rootpath / root)
        if unwritable is not None:
            raise pytest.UsageError(
                f"--jitexp-dir={str(option('--jitexp-dir'))!r} is invalid; {unwritable}, so --jitexp-save cannot store "
                "its baselines there; name a folder"
            )
    config.stash[_STATE] = Session(
        root=root if root.is_absolute() else config.rootpath / root,
        save=option("--jitexp-save"),
        compare=option("--jitexp-compare"),
        fail_on=fail_on,
        threshold=threshold,
        allow_undetectable=bool(option("--jitexp-allow-undetectable")),
        disable=bool(option("--jitexp-disable")),
        timing=timing,
        allow_changed=bool(option("--jitexp-allow-changed")),
        excuse_host_drift=excuse,
        memory_threshold=memory_threshold,
    )


def _unwritable(folder: Path) -> str | None:
    """Why folder cannot be made or written (its nearest existing part is a file, or read-only); None when it can."""
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is a file, not a folder"
    if not os.access(probe, os.W_OK):
        return f"{probe} cannot be written"
    return None


@pytest.fixture
def jitexp_measure(request: pytest.FixtureRequest) -> Callable[..., Measurement | None]:
    """`jitexp_measure(fn, *args, **options)`: jitexp.measure for this test (None under --jitexp-disable)."""
    session = request.config.stash[_STATE]

    def measure(fn: Callable, *args: Any, **options: Any) -> Measurement | None:
        return session.measure(request, fn, args, options)

    return measure


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    session = config.stash.get(_STATE, None)
    lines = session.summary() if session is not None else []
    if lines:
        terminalreporter.write_sep("=", "jitexp")
        for line in lines:
            terminalreporter.write_line(line)
