"""Regenerate every sample of jitexp's own output in README.md and docs/ from the code (issue 56, item 3).

A sample is a block marked `<!-- output: NAME -->` (docs/development/docs.md); its text is what GENERATORS[NAME]
returns, made from the code under test: a saved job's rows rebuilt by today's analysis (tests/data/runs), the
preflight's messages for the error catalogue's command lines, each command's --help. Nothing runs a job.

    python scripts/docs_samples.py            rewrite every stale sample in place
    python scripts/docs_samples.py --check    list the stale samples and exit 1 if any (tests/inprocess/test_docs_samples.py)
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import math
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from docs_blocks import Block, page_blocks, pages  # noqa: E402
from saved_runs import analysed  # noqa: E402

RUNS = ROOT / "tests" / "data" / "runs"
# the folders the samples print, fixed: a run saved again changes the figures, not the folder's stamp
MAIN_FOLDER = "outputs/run/2026-12-06_14-45-25"
ERRORED_FOLDER = "outputs/run/2026-12-06_14-47-10"
COLUMNS = "100"  # the terminal width the --help samples are made for
FIX = "python scripts/docs_samples.py"


# --- the result block -------------------------------------------------------------------------------------------


# columns the analysis makes from more than the worker records the saved CSVs keep (the op counts and attribution
# behind `explanation`, the process's own wall time): the saved run's
SAVED = ("explanation", "explanation_detail", "measure_s")


def rebuilt(folder: Path) -> list[dict]:
    """analysed(folder), with the saved results.csv's value of each column the analysis cannot make from the worker
    records alone (SAVED, and the columns it leaves empty: the device time, the platform, the job's time split)."""
    import pandas as pd

    saved = pd.read_csv(folder / "results.csv").set_index("mode").to_dict("index")
    return [
        {**saved[row["mode"]], **{k: v for k, v in row.items() if k not in SAVED and not _missing(v)}}
        for row in analysed(folder)
    ]


def _missing(value: object) -> bool:
    return value is None or value == "" or (isinstance(value, float) and math.isnan(value))


def main_block() -> str:
    """The main job's block (`jitexp` with its default config), from tests/data/runs/main."""
    from jitexp.analysis.formatting.block import result_block

    return result_block(rebuilt(RUNS / "main"), MAIN_FOLDER)


def main_line() -> str:
    """The main job's one-line form (jitexp.log, repr of a Python result), from the same rows."""
    from jitexp.analysis.formatting.answer import job_summary

    return job_summary(rebuilt(RUNS / "main"))


def control_flow_lines() -> str:
    """The line each job of `jitexp experiment=seed_control_flow` prints as it ends (tests/data/runs/control_flow, its
    saved rows: two of its jit rows are trace errors), its progress as the command line words it, from the jobs'
    own times."""
    import pandas as pd

    from jitexp.analysis.formatting.block import sweep_line
    from jitexp.cli import _progress

    root = RUNS / "control_flow"
    jobs = sorted((p for p in root.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))
    lines, elapsed = [], 0.0
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "jobs.csv").write_text((root / "jobs.csv").read_text())
        for num, job in enumerate(jobs):
            rows = pd.read_csv(job / "results.csv").to_dict("records")
            elapsed += float(rows[0]["job_wall_s"])
            when = time.time() - elapsed - 0.001  # the sweep started `elapsed` ago
            os.utime(Path(tmp) / "jobs.csv", (when, when))
            lines.append(sweep_line(rows, _progress(Path(tmp), num)))
    return "\n".join(lines)


def sweep_line_sample() -> str:
    """The line job 2 of 2 of tests/data/runs/sweep (add_one, size 8) printed as it ended, from its saved rows (the
    sweep's jobs keep no config to rebuild them from), its progress fixed."""
    import pandas as pd

    from jitexp.analysis.formatting.block import sweep_line

    return sweep_line(pd.read_csv(RUNS / "sweep" / "1" / "results.csv").to_dict("records"), "[2/2 6 s] ")


def sweep_summary() -> str:
    """The summary a sweep prints when it ends, for the two-job sweep of tests/data/runs/sweep
    (`jitexp -m workload=matmul,add_one 'mode=[eager,jit]' size=8 timing=quick`)."""
    import shutil

    from jitexp.report.run.terminal import format_sweep_summary
    from jitexp.store.folders import gather_state

    with tempfile.TemporaryDirectory() as tmp, _columns():  # its caveats wrap to the terminal's width
        root = Path(shutil.copytree(RUNS / "sweep", Path(tmp) / "sweep"))
        frame, state = gather_state(root)
        return format_sweep_summary(frame, state)


def history_steps() -> str:
    """What `jitexp-history` prints for tests/data/histories/twelve_commits (a steady step at c7, compile at c10)."""
    from jitexp.report.history.cli import main

    runs = ROOT / "tests" / "data" / "histories" / "twelve_commits"
    with tempfile.TemporaryDirectory() as tmp, _in(Path(tmp)), contextlib.redirect_stdout(io.StringIO()) as out:
        assert main([f"{runs}/*"]) == 0
    return out.getvalue()


@contextlib.contextmanager
def _in(folder: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


# --- the error catalogue ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mistake:
    name: str  # the sample is `error-NAME`
    command: str  # what the user types after `jitexp`, quoted as a shell would take it
    kind: str  # the catalogue's section (docs/reference/errors.md)
    shows: tuple[str, ...] = ()  # the user's files (FILES) the sample prints first, with `$ cat`


MISTAKES = [
    # a name that is not there
    Mistake("unknown-option", "workload=matmull", "names"),
    Mistake("unknown-mode", "workload=add_one mode=jitt", "names"),
    Mistake("unknown-key", "+sise=64", "names"),
    Mistake("new-entry", "mode.compiler_options.xla_cpu_enable_fast_math=true", "names"),
    Mistake("sequence-key", "workload=apply_n_times 'sequence=[{m: 2}]'", "names"),
    Mistake("group-interpolation", "'mode=${size}'", "names"),
    # a value of the wrong type or out of range
    Mistake("wrong-type", "size=1k", "values"),
    Mistake("out-of-range", "workload=apply_n_times workload.params.n=-3", "values"),
    Mistake("fraction", "timing.target_rel_ci=3", "values"),
    Mistake("not-finite", "timing.job_time_s=inf", "values"),
    Mistake("negative-seed", "seed=-1", "values"),
    Mistake("variant-list", "workload=add_one 'variants={a:{},b:{size:[64,128]}}'", "values"),
    Mistake("static-argnums", "workload=apply_n_times mode.static_argnums=[5]", "values"),
    Mistake("donate-argnums", "workload=apply_n_times mode.donate_argnums=[1]", "values"),
    Mistake("donate-eager", "workload=add_one mode=eager mode.donate_argnums=[0]", "values"),
    Mistake("jit-fn", "workload=add_one mode.jit_fn=jax.checkpoint", "values"),
    Mistake("device-count", "workload=matmul device.count=4", "values"),
    # the command line's syntax and sweeps
    Mistake("malformed", "size=[64,", "syntax"),
    Mistake("list-without-m", "size=64,128", "syntax"),
    Mistake("sweep-point", "-m size=64,abc,96", "syntax"),
    Mistake("same-job", "-m size=64,64", "syntax"),
    Mistake("label-only", "-m workload=add_one workload.name=a,b", "syntax"),
    Mistake("same-statics", "-m workload=apply_n_times 'mode.static_argnums=[1],null'", "syntax"),
    Mistake("selects-nothing", "-m 'size=range(64,32)'", "syntax"),
    Mistake("mode-twice", "workload=add_one 'mode=[eager,jit,jit]'", "syntax"),
    Mistake("delete-group", "workload=add_one '~timing'", "syntax"),
    Mistake("delete-key", "workload=add_one '~seed'", "syntax"),
    Mistake("cfg-with-m", "-m --cfg job size=64,128", "syntax"),
    # your own function
    Mistake("fn-not-importable", "workload=custom workload.fn=nosuch.f 'workload.args=[{shape:[${size}]}]'", "fn"),
    Mistake("fn-missing", "workload=custom workload.fn=mine.g 'workload.args=[{shape:[${size}]}]'", "fn", ("mine.py",)),
    Mistake("no-args", "workload=custom workload.fn=mine.f", "fn"),
    Mistake("arity", "workload=custom workload.fn=mine.f 'workload.args=[{shape:[${size}]},{value:3}]'", "fn"),
    Mistake("size-unused", "workload=custom workload.fn=mine.f 'workload.args=[{shape:[128]}]' size=64", "fn"),
    Mistake(
        "dtype-unused",
        "workload=custom workload.fn=mine.f 'workload.args=[{shape:[${size}],dtype:float32}]' dtype=float64",
        "fn",
    ),
    Mistake("param-unused", "workload=apply_n_times +workload.params.m=3", "fn"),
    Mistake("param-deleted", "workload=apply_n_times '~workload.params.n'", "fn"),
    Mistake(
        "fn-generator", "workload=custom workload.fn=gens.g 'workload.args=[{shape:[${size}]}]'", "fn", ("gens.py",)
    ),
    Mistake(
        "fn-jitted", "workload=custom workload.fn=jitted.f 'workload.args=[{shape:[${size}]}]'", "fn", ("jitted.py",)
    ),
    Mistake("fn-deleted", "workload=add_one '~workload.fn'", "fn"),
    # folders and your own config files
    Mistake("unwritable", "hydra.run.dir=/proc/x/y", "files"),
    Mistake("empty-run-dir", "workload=add_one hydra.run.dir=", "files"),
    Mistake("run-dir-full", "workload=add_one hydra.run.dir=runs/a", "files"),
    Mistake("shadowed-file", "--config-dir conf workload=matmul", "files", ("conf/workload/matmul.yaml",)),
    Mistake("file-key", "--config-dir conf workload=typo", "files", ("conf/workload/typo.yaml",)),
    Mistake("file-yaml", "--config-dir conf workload=broken", "files", ("conf/workload/broken.yaml",)),
]

# the files the catalogue's commands find in the user's folder
FILES = {
    "mine.py": "import jax.numpy as jnp\n\n\ndef f(x):\n    return jnp.sum(jnp.tanh(x))\n",
    "gens.py": "def g(x):\n    for row in x:\n        yield row * 2\n",
    "jitted.py": "import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef f(x):\n    return jnp.sum(jnp.tanh(x))\n",
    "conf/workload/matmul.yaml": "fn: mine.f\nargs: [{shape: ['${size}']}]\n",
    "conf/workload/typo.yaml": "fn: mine.f\nargs: [{shape: ['${size}']}]\nstatc_argnums: []\n",
    "conf/workload/broken.yaml": "fn: mine.f\nargs: [{shape: [${size}]}\n",
    "runs/a/results.csv": "",  # an earlier run's results
    "runs/a/samples.csv": "",
}


@contextlib.contextmanager
def user_folder() -> Iterator[Path]:
    """A fresh folder holding FILES, as the current directory (importable, as `jitexp` makes it); restored after."""
    before, path_before = os.getcwd(), list(sys.path)
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in FILES.items():
            (Path(tmp) / name).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / name).write_text(text)
        os.chdir(tmp)
        sys.path.insert(0, tmp)
        try:
            yield Path(tmp)
        finally:
            os.chdir(before)
            sys.path[:] = path_before
            sys.modules.pop("mine", None)
            sys.modules.pop("gens", None)


@functools.cache
def catalogue() -> dict[str, str]:
    """Each mistake's sample: the command as typed, then the line `jitexp` prints for it (its preflight's
    ConfigError, in process: nothing runs)."""
    from jitexp.config.schema import register_configs
    from jitexp.engine import preflight
    from jitexp.engine.compose import replacing
    from jitexp.errors import ConfigError

    register_configs()
    out = {}
    with user_folder():
        for mistake in MISTAKES:
            try:
                preflight.check(replacing(shlex.split(mistake.command)))
            except ConfigError as error:
                shown = "".join(f"$ cat {name}\n{FILES[name]}" for name in mistake.shows)
                out[mistake.name] = f"{shown}$ jitexp {mistake.command}\njitexp: error: {error}"
            else:
                raise AssertionError(f"`jitexp {mistake.command}` passes the preflight: no mistake to show")
    return out


def runtime_error() -> str:
    """A job whose jit fails in trace (a Python `if` on a traced value: tests/data/runs/errored, its saved rows): its
    block, then the line each failed mode gets on stderr, with its hint."""
    import pandas as pd

    from jitexp.analysis.formatting.answer import failure_text
    from jitexp.analysis.formatting.block import result_block

    rows = pd.read_csv(RUNS / "errored" / "results.csv").to_dict("records")
    failed = [f"jitexp: error: {failure_text(row)}" for row in rows if row["status"] != "ok"]
    command = "$ jitexp workload=conditional 'mode=[eager,jit]' size=8 timing=quick"
    return "\n".join([command, result_block(rows, ERRORED_FOLDER), *failed])


# --- each command's --help --------------------------------------------------------------------------------------


def jitexp_help() -> str:
    from jitexp import helptext
    from jitexp.config.schema import register_configs

    register_configs()
    helptext.register_resolvers()
    with _columns():
        return helptext.help_page(["--help"])


def argparse_help(build_parser: Callable) -> str:
    with _columns():
        return build_parser().format_help()


def history_help() -> str:
    from jitexp.report.history.cli import build_parser

    return argparse_help(build_parser)


def bisect_help() -> str:
    from jitexp.bisection import build_parser

    return argparse_help(build_parser)


def report_help() -> str:
    from jitexp.report.run.build import build_parser

    return argparse_help(build_parser)


def compare_help() -> str:
    from jitexp.report.compare.cli import build_parser

    return argparse_help(build_parser)


@contextlib.contextmanager
def _columns() -> Iterator[None]:
    """argparse and the sweep's caveats wrap to $COLUMNS: fixed, so the text does not depend on the terminal it was made
    in."""
    before = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = COLUMNS
    try:
        yield
    finally:
        if before is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = before


# --- the samples ------------------------------------------------------------------------------------------------


def _error(name: str) -> Callable[[], str]:
    return lambda: catalogue()[name]


GENERATORS: dict[str, Callable[[], str]] = {
    "main-block": main_block,
    "main-line": main_line,
    "control-flow-lines": control_flow_lines,
    "sweep-summary": sweep_summary,
    "sweep-line": sweep_line_sample,
    "history-steps": history_steps,
    "error-tracer": runtime_error,
    **{f"error-{m.name}": _error(m.name) for m in MISTAKES},
    "help-jitexp": jitexp_help,
    "help-jitexp-report": report_help,
    "help-jitexp-compare": compare_help,
    "help-jitexp-history": history_help,
    "help-jitexp-history-bisect": bisect_help,
}


def generate(name: str) -> str:
    """GENERATORS[name]'s text as a block holds it: no trailing spaces, one newline at the end."""
    text = GENERATORS[name]()
    return "".join(line.rstrip() + "\n" for line in text.strip("\n").splitlines())


@dataclass
class Sample:
    block: Block
    name: str
    text: str | None  # None: no generator of that name (why)
    why: str = ""

    @property
    def stale(self) -> bool:
        return self.text is not None and self.text != self.block.text


def samples(root: Path = ROOT) -> list[Sample]:
    """Every output block of README.md and docs/ with the text its generator makes now."""
    made: dict[str, tuple[str | None, str]] = {}
    found = []
    for page in pages(root):
        for block in page_blocks(page, root):
            if block.kind != "output":
                continue
            name = block.arg
            if name not in made:
                if name not in GENERATORS:
                    made[name] = (None, f"no generator named {name!r} in scripts/docs_samples.py")
                else:
                    made[name] = (generate(name), "")
            found.append(Sample(block, name, *made[name]))
    return found


def rewrite(found: list[Sample], root: Path = ROOT) -> list[Sample]:
    """Write each stale sample's new text into its page, keeping the fence's indentation; return those written."""
    stale = [s for s in found if s.stale]
    for page in {s.block.page for s in stale}:
        lines = (root / page).read_text().splitlines(keepends=True)
        for s in sorted((s for s in stale if s.block.page == page), key=lambda s: -s.block.line):
            fence = lines[s.block.line - 1]
            indent = fence[: len(fence) - len(fence.lstrip())]
            body = [f"{indent}{line}".rstrip() + "\n" for line in s.text.splitlines()]
            lines[s.block.line : s.block.end - 1] = body
        (root / page).write_text("".join(lines))
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="list the stale samples and exit 1 if any; write nothing")
    args = parser.parse_args(argv)
    found = samples()
    for s in found:
        if s.text is None:
            print(f"{s.block.where}: output {s.name} left as it is: {s.why}", file=sys.stderr)
    stale = [s for s in found if s.stale]
    if args.check:
        for s in stale:
            print(f"{s.block.where}: output {s.name} is stale")
        if stale:
            print(f"{len(stale)} stale sample(s): run `{FIX}` to regenerate them")
        return 1 if stale or any(s.text is None for s in found) else 0
    for s in rewrite(found):
        print(f"{s.block.where}: output {s.name} regenerated")
    print(f"{len(found)} sample(s), {len(stale)} regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
