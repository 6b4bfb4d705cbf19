"""The pytest plugin: a `jitexp_measure` fixture, saved baselines and regression checks (inert unless used).

`jitexp_measure(fn, *args, **options)` measures like `jitexp.measure` and records the result under
the test's id. `--jitexp-save=NAME` stores each test's job under `.jitexp/NAME/<test id>/` (so the
folder is a sweep for `jitexp-report`), `--jitexp-compare=NAME` compares each test with its stored job
using `jitexp-compare`'s statistics and fails the test on a significant slowdown, `--jitexp-disable`
calls each function once, untimed. Nothing heavier than pytest is imported until a test measures.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from .stats import CHANGE_METRICS, THRESHOLD

if TYPE_CHECKING:
    from .api import Measurement
    from .comparison import Side

_NAME = re.compile(r"^[\w.-]+$")


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
    entries: list[Entry] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)
    machines: set[str] = field(default_factory=set)

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
        measured = run_for_test(request, fn, args, options)
        if not measured.ok:
            self.entries.append(Entry(test, repr(measured)))
            pytest.fail(f"jitexp: {test}: " + "; ".join(measured.errors), pytrace=False)
        entry = Entry(test, repr(measured))
        self.entries.append(entry)
        base = None
        # read before saving: --jitexp-save=X --jitexp-compare=X must not compare a run with itself
        if stored is not None:
            from .comparison import load_side

            base = load_side(stored)
        saved = measured.save(self.root / self.save / folder) if self.save else None
        if base is not None:
            self.check(test, measured, base, saved, entry)
        return measured

    def folder(self, test: str) -> str:
        """The test's job folder name: its id made a file name, numbered from its second measurement on."""
        n = self.calls[test] = self.calls.get(test, 0) + 1
        name = re.sub(r"[^\w.-]+", "_", test).strip("_")
        return name if n == 1 else f"{name}-{n}"

    def check(self, test: str, measured: Measurement, base: Side, saved: Path | None, entry: Entry) -> None:
        """Compare with the stored job; fail on a significant slowdown (or on "cannot tell", unless allowed)."""
        from .comparison import across_machines, compare, failing, load_side

        with tempfile.TemporaryDirectory(prefix="jitexp-new-") as scratch:
            new = load_side(saved or measured.save(scratch))
        table = compare(base, new, threshold=self.threshold)
        entry.machine = "different machine" if across_machines(base, new) else "same machine"
        self.machines.add(entry.machine)
        if table.empty:
            entry.against = "no case in common"
            pytest.skip(f"jitexp: baseline {self.compare!r} of {test} measured another case (name, size or dtype)")
        judged = table[table["metric"].isin(self.fail_on)]
        if judged.empty:
            entry.against = f"nothing to judge in {', '.join(self.fail_on)}"
            return
        bad = failing(judged, self.fail_on, self.allow_undetectable)
        worst = (bad if len(bad) else judged).sort_values("ratio", ascending=False).iloc[0]
        entry.against = f"{worst['mode']} {worst['metric']} {worst['ratio']:.3g}x: {worst['verdict']}"
        if len(bad):
            pytest.fail("\n".join(self.failure(test, row) for _, row in bad.iterrows()), pytrace=False)

    def failure(self, test: str, row: Any) -> str:
        """One line: the test, the mode and metric, the ratio with its CI and p, and what to do."""
        ratio = (
            f"{row['ratio']:.3g}x the baseline {self.compare!r} "
            f"(95% CI {row['ratio_ci_low']:.3g}x-{row['ratio_ci_high']:.3g}x, p={row['p_value']:.3g}, "
            f"{row['n_base']} vs {row['n_new']} processes)"
        )
        if row["verdict"] == "slower":
            return f"jitexp: {test}: {row['mode']} {row['metric']} is {ratio}: slower beyond the {self.threshold:.0%} threshold"
        return (
            f"jitexp: {test}: {row['mode']} {row['metric']} is {ratio}: {row['verdict']}; time more processes "
            "(--jitexp-timing=default) or pass --jitexp-allow-undetectable"
        )

    def summary(self) -> list[str]:
        """The session's table: each test, its verdict line, and against the baseline when comparing."""
        if not self.entries:
            return []
        import pandas as pd

        from .formatting import text_table

        columns = {"test": [e.test for e in self.entries], "result": [e.line for e in self.entries]}
        if self.compare:
            columns[f"vs {self.compare}"] = [e.against or "-" for e in self.entries]
            columns["machine"] = [e.machine or "-" for e in self.entries]
        lines = [text_table(pd.DataFrame(columns), width=100)]
        if self.save:
            lines.append(f"saved: {self.root / self.save} (jitexp-report {self.root / self.save})")
        if "different machine" in self.machines:
            lines.append(f"compared with {self.compare!r} from a different machine: read the ratios with care")
        return lines


def call_once(fn: Callable, args: tuple, kwargs: dict) -> Any:
    """--jitexp-disable: the function called once, untimed, its output blocked on when JAX is in use."""
    import sys

    out = fn(*args, **kwargs)
    if "jax" in sys.modules:
        import jax

        jax.block_until_ready(out)
    return out


def run_for_test(request: pytest.FixtureRequest, fn: Callable, args: tuple, options: dict) -> Measurement:
    """jitexp.measure with the test's id as the rows' label; the test module's own functions travel by value."""
    import cloudpickle

    from .api import Measurement, prepare
    from .runner import run

    module = getattr(request, "module", None)
    by_value = module is not None and getattr(module, "__name__", "") not in ("", "__main__")
    if by_value:
        try:
            cloudpickle.register_pickle_by_value(module)  # the worker need not (and may not be able to) import it
        except ValueError:
            by_value = False
    try:
        cfg, payload = prepare(fn, *args, **options)
    finally:
        if by_value:
            cloudpickle.unregister_pickle_by_value(module)
    return Measurement(run(cfg, payload=payload, overrides=request.node.nodeid))


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jitexp", "jitexp: measure what jax.jit does to a function (the jitexp_measure fixture)")
    group.addoption("--jitexp-save", metavar="NAME", help="store each test's measurement under .jitexp/NAME/")
    group.addoption(
        "--jitexp-compare",
        metavar="NAME",
        help="compare each test with its stored measurement NAME; fail on a significant slowdown",
    )
    group.addoption(
        "--jitexp-fail-on",
        default=",".join(CHANGE_METRICS),
        metavar="METRICS",
        help=f"metrics whose slowdown fails a test (default {','.join(CHANGE_METRICS)})",
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
    group.addoption("--jitexp-disable", action="store_true", help="call each measured function once, untimed")
    group.addoption("--jitexp-timing", metavar="PRESET", help="the timing preset for every test (default, quick, ...)")
    group.addoption("--jitexp-dir", default=".jitexp", metavar="DIR", help="where saved measurements live (.jitexp)")


_STATE = pytest.StashKey[Session]()


def pytest_configure(config: pytest.Config) -> None:
    option = config.getoption
    fail_on = tuple(m.strip() for m in str(option("--jitexp-fail-on")).split(",") if m.strip())
    bad = [m for m in fail_on if m not in CHANGE_METRICS]
    if bad:
        raise pytest.UsageError(f"--jitexp-fail-on={bad[0]!r} is invalid; valid choices: {', '.join(CHANGE_METRICS)}")
    threshold = float(option("--jitexp-threshold"))
    if not 0 < threshold < 1:
        raise pytest.UsageError(f"--jitexp-threshold={threshold} is invalid; a fraction in (0, 1), e.g. 0.05")
    for flag in ("--jitexp-save", "--jitexp-compare"):
        name = option(flag)
        if name is not None and not _NAME.match(name):
            raise pytest.UsageError(f"{flag}={name!r} is invalid; a name of letters, digits, '.', '-' and '_'")
    timing = option("--jitexp-timing")
    if timing is not None:
        from .api import timing_presets

        if timing not in timing_presets():
            raise pytest.UsageError(
                f"--jitexp-timing={timing!r} is invalid; valid choices: {', '.join(timing_presets())}"
            )
    root = Path(option("--jitexp-dir"))
    config.stash[_STATE] = Session(
        root=root if root.is_absolute() else config.rootpath / root,
        save=option("--jitexp-save"),
        compare=option("--jitexp-compare"),
        fail_on=fail_on,
        threshold=threshold,
        allow_undetectable=bool(option("--jitexp-allow-undetectable")),
        disable=bool(option("--jitexp-disable")),
        timing=timing,
    )


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
