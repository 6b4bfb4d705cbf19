"""Issue 57's hunt, repeated: each input run in a fresh temporary folder with a new HOME, classified by exit code,
stderr (a traceback? one error line?), the rows kept and the longest silence.

    python benchmarks/hunt57.py                 # every case; the table and the cases not good at the end
    python benchmarks/hunt57.py --only sweep    # the cases whose family or name holds 'sweep'
    python benchmarks/hunt57.py --list          # the cases, not run

A case is a few shell steps: all but the last set the folder up (each must exit 0, or as its `setup_rc` says); the
last is judged. `expect` is what a good tool does with that input: `refuse` (a non-zero exit, one line naming the
mistake, no traceback), `run` (exit 0), `fail` (exit 1, said in a line: a job that failed as it should). `check`
reads the folder after and names a lost result or a false line. A step `SIG <NAME> <seconds|text> -- CMD` sends the
signal to CMD's process group after the seconds, or once the text appears on its stderr. `PY` steps run a Python
file of the case under a wrapper that prints an escaping exception as `ERROR <Type>: <message>` (a Python caller's
traceback is expected; what is judged is the exception's type and its one line).
"""

from __future__ import annotations

import argparse
import collections
import csv
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

Q = "timing=quick size=8 workload=add_one"  # the smallest real job: ~3 s on a shared 2-core VM
SLOW_S = 20.0  # a silence this long with no line is 'slow with no sign of life' (the quiet rule is 10 s)
OUTCOMES = (
    "refused in one line",
    "ran correctly",
    "lost results",
    "printed something false",
    "accepted silently",
    "traceback",
    "slow, no sign of life",
    "other",
)
PY_WRAPPER = (
    "import runpy, sys\n"
    "try:\n"
    "    runpy.run_path(sys.argv[1], run_name='__main__')\n"
    "except SystemExit:\n"
    "    raise\n"
    "except BaseException as e:\n"
    "    print(f'ERROR {type(e).__name__}: {e}', file=sys.stderr)\n"
    "    sys.exit(3)\n"
)


@dataclass
class Case:
    family: str
    name: str
    steps: list[str]
    expect: str = "run"  # refuse | run | fail
    files: dict[str, str] = field(default_factory=dict)
    check: Callable[[Path, str], str | None] | None = None  # (folder, output) -> what was lost or false, or None
    py_ok: tuple[str, ...] = ("ConfigError",)  # exception types a Python caller may get as its one line
    timeout: float = 180.0


# ---- what the folder holds after ------------------------------------------------------------------------------------


def rows(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def keeps(relative: str, n: int, what: str = "lost results") -> Callable[[Path, str], str | None]:
    """At least n rows in the folder's results.csv at `relative`."""

    def check(folder: Path, _: str) -> str | None:
        got = len(rows(folder / relative))
        return None if got >= n else f"{what}: {relative} has {got} rows, {n} expected"

    return check


def holds(relative: str, text: str, what: str = "lost results") -> Callable[[Path, str], str | None]:
    def check(folder: Path, _: str) -> str | None:
        path = folder / relative
        return None if path.is_file() and text in path.read_text() else f"{what}: {relative} lost {text!r}"

    return check


def said(pattern: str, what: str = "printed something false") -> Callable[[Path, str], str | None]:
    def check(_: Path, output: str) -> str | None:
        return None if re.search(pattern, output) else f"{what}: no {pattern!r} in the output"

    return check


def not_said(pattern: str, what: str = "printed something false") -> Callable[[Path, str], str | None]:
    def check(_: Path, output: str) -> str | None:
        return f"{what}: {pattern!r} in the output" if re.search(pattern, output) else None

    return check


def both(*checks: Callable[[Path, str], str | None]) -> Callable[[Path, str], str | None]:
    def check(folder: Path, output: str) -> str | None:
        return next((m for c in checks if (m := c(folder, output))), None)

    return check


def column(relative: str, name: str, value: str, what: str = "printed something false") -> Callable:
    def check(folder: Path, _: str) -> str | None:
        got = [r.get(name) for r in rows(folder / relative)]
        return None if got and all(g == value for g in got) else f"{what}: {relative} {name}={got}, {value!r} expected"

    return check


# ---- the inputs -----------------------------------------------------------------------------------------------------

USER = """
import jax
import jax.numpy as jnp


def f(x):
    return jnp.sin(x) * 2


def two(x, n):
    return x * n


@jax.jit
def jitted(x):
    return x + 1


def gen(x):
    yield x


def raises(x):
    raise ValueError("mine")


def returns_none(x):
    x + 1


def prints(x):
    print("hello from f")
    return x + 1
"""

RESULTS_HEAD = "workload,mode,status,median_s,mean_s,speedup,speedup_ci_low,baseline_mode,job_num\n"
RESULTS_OK = (
    RESULTS_HEAD + '"add_one","eager","ok",0.002,0.002,,,"",0\n"add_one","jit","ok",0.001,0.001,2.0,1.9,"eager",0\n'
)
BAD_CSVS = {
    "crlf": RESULTS_OK.replace("\n", "\r\n"),
    "bom": "\ufeff" + RESULTS_OK,
    "dup_header": RESULTS_HEAD.replace("job_num", "median_s") + '"a","jit","ok",0.001,0.001,,,"",0.002\n',
    "inf_median": RESULTS_OK.replace("0.001,0.001,2.0", "inf,0.001,2.0"),
    "nan_median": RESULTS_OK.replace("0.001,0.001,2.0", "nan,0.001,2.0"),
    "neg_speedup": RESULTS_OK.replace(",2.0,1.9,", ",-2.0,1.9,"),
    "header_only": RESULTS_HEAD,
    "latin1": RESULTS_OK.replace('"add_one","eager"', '"caf\xe9","eager"'),
    "extra_field": RESULTS_OK + '"x","jit","ok",0.001,0.001,,,"",0,EXTRA\n',
    "no_mode": RESULTS_OK.replace("workload,mode,", "workload,mod,"),
    "binary": "\x00\x01\x02PK\x03\x04",
    "mode_empty": RESULTS_OK.replace('"add_one","jit"', '"add_one",""'),
}


def jx(args: str) -> str:
    return f"jitexp {args}"


def cases() -> list[Case]:
    out: list[Case] = []
    add = out.append
    # ---- CLI overrides: a single job ----
    for over in [
        "size=0",
        "size=-5",
        "size=1.5",
        "size=abc",
        "size=1e3",
        "size=",
        "seed=1.5",
        "seed=18446744073709551616",
        "dtype=float128",
        "dtype=int4",
        "mode=nosuch",
        "mode=[]",
        "timing=nosuch",
        "timing.processes=0",
        "timing.processes=-1",
        "timing.job_time_s=0",
        "timing.job_time_s=-inf",
        "timing.processes=1.5",
        "workload=nosuch",
        "device=nosuch",
        "+foo=1",
        "foo=1",
        "check=maybe",
        "isolate=nosuch",
        "profile=maybe",
        "cpu_affinity=[999]",
        "hydra.run.dir=/proc/nope",
        "'size=${oops}'",
        "mode.jit_fn=nosuch.thing",
        "'envs={a:/nonexistent/python}'",
        "'+variants={a:{size:8},b:{nosuch:1}}'",
        "sequence=[{nosuch:1}]",
        "cpu_async_dispatch=maybe",
        "workload=matmul size=400000",
        "timing.max_processes=0",
        "mode.static_argnums=[0]",
        "mode.donate_argnums=[7]",
        "'~mode'",
        "workload.params.n=3",
        "timing.processes=3 timing.max_processes=2",
        "--cfg nosuch",
        "hydra.job.chdir=maybe",
    ]:
        add(Case("cli override", over, [jx(f"{Q} {over}")], "refuse"))
    add(Case("cli override", "hydra.run.dir is a file", ["touch afile", jx(f"{Q} hydra.run.dir=afile")], "refuse"))
    add(Case("cli override", "workload=custom without fn", [jx("timing=quick workload=custom")], "refuse"))
    add(
        Case(
            "cli override",
            "custom fn that raises",
            [jx("timing=quick workload=custom workload.fn=mine.raises 'workload.args=[{shape:[4]}]' hydra.run.dir=r")],
            "fail",
            {"mine.py": USER},
            check=both(keeps("r/results.csv", 1), column("r/results.csv", "status", "error")),
        )
    )
    add(
        Case(
            "cli override",
            "custom fn returning None",
            [
                jx(
                    "timing=quick workload=custom workload.fn=mine.returns_none "
                    "'workload.args=[{shape:[4]}]' hydra.run.dir=r"
                )
            ],
            "run",
            {"mine.py": USER},
            check=keeps("r/results.csv", 2),
        )
    )
    add(
        Case(
            "cli override",
            "custom fn that prints",
            [jx("timing=quick workload=custom workload.fn=mine.prints 'workload.args=[{shape:[4]}]' hydra.run.dir=r")],
            "run",
            {"mine.py": USER},
            check=keeps("r/results.csv", 2),
        )
    )
    add(
        Case(
            "cli override",
            "two-arg fn given one arg",
            [jx("timing=quick workload=custom workload.fn=mine.two 'workload.args=[{shape:[4]}]'")],
            "refuse",
            {"mine.py": USER},
        )
    )
    add(
        Case(
            "cli override",
            "shape with a negative dim",
            [jx("timing=quick workload=custom workload.fn=mine.f 'workload.args=[{shape:[-1]}]'")],
            "refuse",
            {"mine.py": USER},
        )
    )
    add(
        Case(
            "cli override",
            "dtype=bfloat16 runs, rows say it",
            [jx(f"{Q} dtype=bfloat16 hydra.run.dir=r")],
            "run",
            check=column("r/results.csv", "dtype", "bfloat16"),
        )
    )
    add(
        Case(
            "cli override",
            "dtype=float64 runs, rows say it",
            [jx(f"{Q} dtype=float64 hydra.run.dir=r")],
            "run",
            check=column("r/results.csv", "dtype", "float64"),
        )
    )
    add(
        Case(
            "cli override",
            "a param value with quotes",
            [
                jx(
                    "timing=quick workload=custom workload.fn=mine.two "
                    "'workload.args=[{shape:[4]},{value:${workload.params.n}}]' '+workload.params.n=3' "
                    "'+workload.params.tag=\"a,b\"' hydra.run.dir=r"
                )
            ],
            "refuse",
            {"mine.py": USER},
        )
    )
    add(
        Case(
            "cli override",
            "mode=[jit] alone",
            [jx(f"{Q} mode=[jit] hydra.run.dir=r")],
            "run",
            check=keeps("r/results.csv", 1),
        )
    )
    # ---- sweeps ----
    S = "hydra.sweep.dir=S"
    add(
        Case("sweep", "two sizes keep both jobs", [jx(f"-m {Q} size=8,16 {S}")], "run", check=keeps("S/results.csv", 4))
    )
    add(Case("sweep", "one fixed subdir for every job", [jx(f"-m {Q} size=8,16 {S} hydra.sweep.subdir=x")], "refuse"))
    add(Case("sweep", "subdir from size", [jx(f"-m {Q} size=8,16 {S} 'hydra.sweep.subdir=${{size}}'")], "refuse"))
    add(
        Case(
            "sweep",
            "subdir with a prefix",
            [jx(f"-m {Q} size=8,16 {S} 'hydra.sweep.subdir=s${{size}}'")],
            "run",
            check=keeps("S/results.csv", 4),
        )
    )
    add(Case("sweep", "size=8,8", [jx(f"-m {Q} size=8,8 {S}")], "refuse"))
    add(Case("sweep", "size=8,abc", [jx(f"-m {Q} size=8,abc {S}")], "refuse"))
    add(Case("sweep", "choice(8,16)", [jx(f"-m {Q} 'size=choice(8,16)' {S}")], "run", check=keeps("S/results.csv", 4)))
    add(Case("sweep", "interval(1,2)", [jx(f"-m {Q} 'size=interval(1,2)' {S}")], "refuse"))
    add(Case("sweep", "range(8,8)", [jx(f"-m {Q} 'size=range(8,8)' {S}")], "refuse"))
    add(Case("sweep", "timing=quick,quick", [jx(f"-m {Q} timing=quick,quick {S}")], "refuse"))
    add(
        Case(
            "sweep",
            "seed=0,1 said pooled",
            [jx(f"-m {Q} seed=0,1 {S}")],
            "run",
            check=both(keeps("S/results.csv", 4), said("seed")),
        )
    )
    add(Case("sweep", "hydra.run.dir with -m", [jx(f"-m {Q} size=8,16 hydra.run.dir=R")], "refuse"))
    add(Case("sweep", "hydra.sweep.dir without -m", [jx(f"{Q} hydra.sweep.dir=S")], "refuse"))
    add(
        Case(
            "sweep",
            "one failing point, the other kept",
            [jx("-m timing=quick workload=custom workload.fn=mine.f,mine.raises 'workload.args=[{shape:[4]}]' " + S)],
            "run",
            {"mine.py": USER},
            check=both(keeps("S/results.csv", 3), said("error")),
        )
    )  # exit 0: fail_on_error=true makes it 1
    add(
        Case(
            "sweep",
            "glob(add_*)",
            [jx(f"-m timing=quick size=8 'workload=glob(add_*)' {S}")],
            "run",
            check=keeps("S/results.csv", 2),
        )
    )
    add(
        Case(
            "sweep",
            "mode=jit,eager as a sweep",
            [jx(f"-m {Q} mode=jit,eager {S}")],
            "run",
            check=keeps("S/results.csv", 2),
        )
    )
    add(Case("sweep", "an empty sweep value size=", [jx(f"-m {Q} size= {S}")], "refuse"))
    add(Case("sweep", "--info with -m before override", [jx("-m --info size=8,16")], "refuse"))
    # ---- resume / overwrite ----
    R = "hydra.run.dir=D"
    add(
        Case(
            "resume/overwrite",
            "same folder twice",
            [jx(f"{Q} {R}"), jx(f"{Q} {R}")],
            "refuse",
            check=keeps("D/results.csv", 2),
        )
    )
    add(
        Case(
            "resume/overwrite",
            "resume, same config",
            [jx(f"{Q} {R}"), jx(f"{Q} {R} resume=true")],
            "run",
            check=both(keeps("D/results.csv", 2), said("already complete")),
        )
    )
    add(
        Case(
            "resume/overwrite",
            "resume, size changed",
            [jx(f"{Q} {R}"), jx(f"{Q} {R} resume=true size=16")],
            "refuse",
            check=keeps("D/results.csv", 2),
        )
    )
    add(
        Case(
            "resume/overwrite",
            "overwrite keeps a user's file",
            ["mkdir D", "echo mine > D/notes.txt", jx(f"{Q} {R}"), jx(f"{Q} {R} overwrite=true")],
            "run",
            check=holds("D/notes.txt", "mine"),
        )
    )
    add(
        Case(
            "resume/overwrite",
            "resume and overwrite together",
            [jx(f"{Q} {R}"), jx(f"{Q} {R} resume=true overwrite=true")],
            "refuse",
            check=keeps("D/results.csv", 2),
        )
    )
    add(
        Case(
            "resume/overwrite",
            "resume into a new folder",
            [jx(f"{Q} {R} resume=true")],
            "run",
            check=keeps("D/results.csv", 2),
        )
    )
    add(
        Case(
            "resume/overwrite",
            "sweep extended with resume",
            [jx(f"-m {Q} size=8,16 {S}"), jx(f"-m {Q} size=8,16,32 {S} resume=true")],
            "run",
            check=keeps("S/results.csv", 6),
        )
    )
    add(
        Case(
            "resume/overwrite",
            "sweep shrunk with resume",
            [jx(f"-m {Q} size=8,16 {S}"), jx(f"-m {Q} size=8 {S} resume=true")],
            "refuse",
            check=keeps("S/results.csv", 4),
        )
    )
    add(
        Case(
            "resume/overwrite",
            "single run into a sweep folder",
            [jx(f"-m {Q} size=8,16 {S}"), jx(f"{Q} hydra.run.dir=S")],
            "refuse",
            check=keeps("S/results.csv", 4),
        )
    )
    add(
        Case(
            "resume/overwrite",
            "sweep into a single run's folder",
            [jx(f"{Q} {R}"), jx(f"-m {Q} size=8,16 hydra.sweep.dir=D")],
            "refuse",
            check=keeps("D/results.csv", 2),
        )
    )
    add(
        Case(
            "resume/overwrite",
            "resume over a truncated results.csv",
            [jx(f"{Q} {R}"), "head -c 200 D/results.csv > t && mv t D/results.csv", jx(f"{Q} {R} resume=true")],
            "refuse",
        )
    )
    add(
        Case(
            "resume/overwrite",
            "sweep overwrite 2 -> 1 jobs",
            [jx(f"-m {Q} size=8,16 {S}"), jx(f"-m {Q} size=8 {S} overwrite=true")],
            "run",
            check=lambda d, _: "lost results: S/1 results stale" if (d / "S/1/results.csv").exists() else None,
        )
    )
    add(
        Case(
            "resume/overwrite",
            "two runs at once, default folder",
            [
                f"({jx(Q)} & {jx(Q)} & wait)",
                "python -c \"import glob,sys; n=len(glob.glob('outputs/run/*/results.csv')); sys.exit(n != 2)\"",
            ],
            "run",
        )
    )
    # ---- Python API ----
    for name, body, expect, ok in [
        (
            "measure a lambda",
            "print(jitexp.measure(lambda x: x * 2, np.ones(4, np.float32), timing='quick'))",
            "run",
            (),
        ),
        ("measure modes=nosuch", "jitexp.measure(mine.f, np.ones(4), modes='nosuch', timing='quick')", "refuse", ()),
        ("measure no args", "jitexp.measure(mine.two, timing='quick')", "refuse", ()),
        (
            "measure unknown option",
            "jitexp.measure(mine.f, np.ones(4), nosuch=1)",
            "refuse",
            ("ConfigError", "TypeError"),
        ),
        ("measure timing dict bad", "jitexp.measure(mine.f, np.ones(4), timing={'processes': 0})", "refuse", ()),
        ("measure timing=nosuch", "jitexp.measure(mine.f, np.ones(4), timing='nosuch')", "refuse", ()),
        ("measure a pre-jitted eager", "jitexp.measure(mine.jitted, np.ones(4), timing='quick')", "refuse", ()),
        ("measure a generator", "jitexp.measure(mine.gen, np.ones(4), timing='quick')", "refuse", ()),
        ("measure a raising fn", "r = jitexp.measure(mine.raises, np.ones(4), timing='quick'); print(r)", "run", ()),
        (
            "measure not callable",
            "jitexp.measure(3, np.ones(4), timing='quick')",
            "refuse",
            ("ConfigError", "TypeError"),
        ),
        (
            "measure size= labels given inputs",
            "r = jitexp.measure(mine.f, np.ones(4), size=8, timing='quick'); "
            "assert r.row('jit')['size'] == 8, r.row('jit')['size']",
            "run",
            (),
        ),
        (
            "save twice",
            "r = jitexp.measure(mine.f, np.ones(4), timing='quick'); r.save('o'); r.save('o')",
            "refuse",
            (),
        ),
        (
            "save into a file",
            "open('afile','w').close(); r = jitexp.measure(mine.f, np.ones(4), timing='quick'); r.save('afile')",
            "refuse",
            ("ConfigError", "NotADirectoryError", "FileExistsError"),
        ),
        ("compose size=abc", "jitexp.compose(['size=abc'])", "refuse", ()),
        ("compose hydra key", "jitexp.compose(['hydra.run.dir=x'])", "refuse", ()),
        ("compose a sweep", "jitexp.compose(['size=8,16'])", "refuse", ()),
        ("compose a string", "jitexp.compose('size=8')", "refuse", ("ConfigError", "TypeError")),
        (
            "run a composed job",
            "print(jitexp.run(jitexp.compose(['timing=quick', 'size=8', 'workload=add_one'])))",
            "run",
            (),
        ),
        ("load_results of nothing", "jitexp.load_results('nowhere')", "refuse", ("FileNotFoundError", "ConfigError")),
        ("make_report of nothing", "jitexp.make_report('nowhere')", "refuse", ("FileNotFoundError", "ConfigError")),
        ("compare of nothing", "jitexp.compare('nowhere', 'nowhere2')", "refuse", ("FileNotFoundError", "ConfigError")),
        (
            "measure with a dict arg",
            "print(jitexp.measure(lambda d: d['a'] * 2, {'a': np.ones(4)}, timing='quick'))",
            "run",
            (),
        ),
    ]:
        add(
            Case(
                "python api",
                name,
                ["PY s.py"],
                expect,
                {"mine.py": USER, "s.py": ("import numpy as np\nimport jitexp\nimport mine\n" + body + "\n")},
                py_ok=ok or ("ConfigError",),
            )
        )
    # ---- pytest plugin ----
    TEST = (
        "import numpy as np\nimport mine\n\n\ndef test_f(jitexp_measure):\n"
        "    jitexp_measure(mine.f, np.ones(4, np.float32))\n"
    )
    P = "python -m pytest -q -p no:cacheprovider test_perf.py --jitexp-timing=quick"
    files = {"mine.py": USER, "test_perf.py": TEST}
    for name, steps, expect in [
        ("save then compare", [f"{P} --jitexp-save=b", f"{P} --jitexp-compare=b --jitexp-allow-undetectable"], "run"),
        ("compare to a missing baseline", [f"{P} --jitexp-compare=nosuch"], "run"),
        (
            "--jitexp-fail-on=nosuch",
            [f"{P} --jitexp-save=b", f"{P} --jitexp-compare=b --jitexp-fail-on=nosuch"],
            "refuse",
        ),
        ("--jitexp-threshold=abc", [f"{P} --jitexp-compare=b --jitexp-threshold=abc"], "refuse"),
        ("--jitexp-threshold=-1", [f"{P} --jitexp-compare=b --jitexp-threshold=-1"], "refuse"),
        ("--jitexp-timing=nosuch", [f"{P} --jitexp-timing=nosuch"], "refuse"),
        ("--jitexp-save and --jitexp-compare", [f"{P} --jitexp-save=b --jitexp-compare=b"], "run"),  # reads, then saves
        ("--jitexp-dir is a file", ["touch f", f"{P} --jitexp-save=b --jitexp-dir=f"], "refuse"),
        ("--jitexp-save=../escape", [f"{P} --jitexp-save=../escape"], "refuse"),
        ("--jitexp-memory-threshold=lots", [f"{P} --jitexp-compare=b --jitexp-memory-threshold=lots"], "refuse"),
    ]:
        add(Case("pytest plugin", name, steps, expect, dict(files)))
    # ---- jitexp-report / -compare / -history / bisect ----
    RUN = jx(f"{Q} hydra.run.dir=A")
    for name, steps, expect in [
        ("report of nothing", ["jitexp-report nowhere"], "refuse"),
        ("report of an empty folder", ["mkdir e", "jitexp-report e"], "refuse"),
        ("report --out is a file", [RUN, "touch f", "jitexp-report A --out f"], "refuse"),
        ("report --nosuch", [RUN, "jitexp-report A --nosuch"], "refuse"),
        ("report twice", [RUN, "jitexp-report A -q", "jitexp-report A -q"], "run"),
        ("compare A A (1 process: cannot tell)", [RUN, "jitexp-compare A A --no-plot"], "fail"),
        ("compare --threshold=abc", [RUN, "jitexp-compare A A --threshold=abc"], "refuse"),
        ("compare --threshold=-1", [RUN, "jitexp-compare A A --threshold=-1"], "refuse"),
        ("compare --alpha=2", [RUN, "jitexp-compare A A --alpha=2"], "refuse"),
        ("compare --fail-on=nosuch", [RUN, "jitexp-compare A A --fail-on=nosuch"], "refuse"),
        ("compare --memory-threshold=lots", [RUN, "jitexp-compare A A --memory-threshold=lots"], "refuse"),
        ("compare with nothing", ["mkdir e", "jitexp-compare e e"], "refuse"),
        ("compare one side missing", [RUN, "jitexp-compare A nowhere"], "refuse"),
        ("history of one run", [RUN, "jitexp-history A"], "run"),
        ("history --metric nosuch", [RUN, "jitexp-history A --fail-on=nosuch"], "refuse"),
        ("history --threshold=5", [RUN, "jitexp-history A --threshold=5"], "refuse"),
        ("history of nothing", ["jitexp-history nowhere"], "refuse"),
        ("bisect outside a repository", ["jitexp-history bisect HEAD~1 HEAD -- jitexp size=8"], "refuse"),
        (
            "bisect without --",
            [
                "git init -q . && git -c user.name=t -c user.email=t@t commit -q --allow-empty -m a && "
                "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m b",
                "jitexp-history bisect HEAD~1 HEAD",
            ],
            "refuse",
        ),
        ("bisect --threshold=2", ["jitexp-history bisect --threshold=2 HEAD~1 HEAD -- jitexp size=8"], "refuse"),
    ]:
        add(Case("report/compare/history", name, steps, expect))
    for name, _text in BAD_CSVS.items():
        expect = "run" if name in ("crlf", "bom") else "refuse"
        for command in ("jitexp-report B -q --no-plots", "jitexp-compare B B --no-plot"):
            add(
                Case(
                    "hand-edited csv",
                    f"{name}: {command.split()[0]}",
                    ["mkdir B", f"PUT B/results.csv {name}", command],
                    "refuse" if "compare" in command else expect,  # no processes.csv: nothing to compare
                )
            )
    add(
        Case(
            "hand-edited csv",
            "history over a latin-1 run",
            [RUN, "mkdir B", "PUT B/results.csv latin1", "jitexp-history A B"],
            "refuse",
        )
    )
    # ---- signals ----
    SLOWFN = USER + "\n\ndef slow(x):\n    import time\n    time.sleep(1.0)\n    return jnp.sin(x)\n"
    SL = "timing=quick workload=custom workload.fn=mine.slow 'workload.args=[{shape:[${size}]}]' mode=jit"
    for name, sig, when, cmd, expect, check in [
        (
            "SIGTERM in a single job",
            "TERM",
            "done",
            jx(f"{SL} timing.processes=3 timing.max_processes=3 hydra.run.dir=D"),
            "fail",
            None,
        ),
        ("SIGTERM before any job", "TERM", "0.6", jx(f"{SL} hydra.run.dir=D"), "fail", None),
        (
            "SIGTERM in a sweep's 2nd job",
            "TERM",
            "[1/",
            jx(f"-m {SL} size=4,8 {S}"),
            "fail",
            keeps("S/0/results.csv", 1),
        ),  # killed: the gather is jitexp-report's, job 0's rows in its folder
        ("SIGINT in a sweep's 2nd job", "INT", "[1/", jx(f"-m {SL} size=4,8 {S}"), "fail", keeps("S/results.csv", 1)),
        ("SIGHUP in a single job", "HUP", "1.5", jx(f"{SL} hydra.run.dir=D"), "fail", None),
        ("SIGINT in jitexp-report", "INT", "0.3", "jitexp-report A", "fail", None),
        ("SIGINT in jitexp-compare", "INT", "0.3", "jitexp-compare A A", "fail", None),
        ("SIGINT in jitexp-history", "INT", "0.3", "jitexp-history A", "fail", None),
        ("SIGINT in the pytest plugin", "INT", "1.5", P + " --jitexp-save=b", "fail", None),
        ("SIGINT in jitexp.measure", "INT", "1.5", "PY s.py", "fail", None),
    ]:
        setup = [RUN] if "jitexp-" in cmd and not cmd.startswith("jitexp ") else []
        add(
            Case(
                "signals",
                name,
                [*setup, f"SIG {sig} {when} -- {cmd}"],
                expect,
                {
                    "mine.py": SLOWFN,
                    "test_perf.py": TEST.replace("mine.f", "mine.slow"),
                    "s.py": "import numpy as np\nimport jitexp, mine\njitexp.measure(mine.slow, np.ones(4), "
                    "timing='quick')\n",
                },
                check=check,
            )
        )
    return out


# ---- running one -----------------------------------------------------------------------------------------------------


@dataclass
class Ran:
    rc: int
    out: str
    err: str
    silence: float
    seconds: float


def run_step(step: str, folder: Path, env: dict, timeout: float) -> Ran:
    sig, when = None, None
    if step.startswith("SIG "):
        _, sig, when, _, step = step.split(" ", 4)
    if step.startswith("PUT "):
        _, path, name = step.split()
        (folder / path).write_bytes(BAD_CSVS[name].encode("latin-1" if name == "latin1" else "utf-8"))
        return Ran(0, "", "", 0.0, 0.0)
    if step.startswith("PY "):
        argv = [sys.executable, "-c", PY_WRAPPER, step.split()[1]]
    else:
        argv = ["bash", "-c", step]
    start = time.monotonic()
    proc = subprocess.Popen(
        argv,
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    stamps = [start]
    out: list[str] = []
    err: list[str] = []

    def read(stream, into):
        for line in iter(stream.readline, ""):
            stamps.append(time.monotonic())
            into.append(line)

    readers = [
        threading.Thread(target=read, args=(proc.stdout, out)),
        threading.Thread(target=read, args=(proc.stderr, err)),
    ]
    for r in readers:
        r.start()
    if sig is not None:
        deadline = start + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if re.fullmatch(r"[\d.]+", when or ""):
                if time.monotonic() - start >= float(when):
                    break
            elif any(when in line for line in err + out):
                time.sleep(0.3)
                break
            time.sleep(0.02)
        if proc.poll() is None:
            os.killpg(proc.pid, getattr(signal, f"SIG{sig}"))
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    for r in readers:
        r.join(timeout=10)
    end = time.monotonic()
    stamps.append(end)
    silence = max(b - a for a, b in zip(sorted(stamps), sorted(stamps)[1:]))
    return Ran(proc.returncode, "".join(out), "".join(err), silence, end - start)


def judge(case: Case, ran: Ran, folder: Path) -> tuple[str, str]:
    text = ran.out + ran.err
    errors = [line for line in ran.err.splitlines() if re.search(r"(^|: )error\b|^ERROR ", line, re.I)]
    errors += [line for line in ran.err.splitlines() if line.startswith("jitexp-compare: nothing to compare")]
    if any("error: argument" in line for line in errors):  # argparse's usage, then its one error line
        errors = [line for line in errors if "error: argument" in line]
    if "Traceback (most recent call last)" in text and not case.steps[-1].startswith("PY "):
        at = text.index("Traceback (most recent call last)")
        tail = [line for line in text[at:].splitlines() if line.strip() and not line.startswith(" ")]
        return "traceback", " / ".join(tail[1:3])[:200]
    if case.steps[-1].startswith("PY "):
        raised = re.search(r"^ERROR (\w+): (.*)$", ran.err, re.M)
        if raised and raised.group(1) not in case.py_ok and case.expect == "refuse":
            return "traceback", f"{raised.group(1)}: {raised.group(2)[:120]}"
        if raised and case.expect == "run":
            return "traceback", f"{raised.group(1)}: {raised.group(2)[:120]}"
    if ran.silence > SLOW_S:
        return "slow, no sign of life", f"{ran.silence:.0f} s without a line"
    if case.check is not None:
        lost = case.check(folder, text)
        if lost:
            kind, _, what = lost.partition(": ")
            return kind, what
    if case.expect == "refuse":
        if ran.rc == 0:
            return "accepted silently", f"exit 0: {ran.err.strip().splitlines()[-1][:120] if ran.err.strip() else ''}"
        if len(errors) == 1 or (case.steps[-1].startswith("PY ") and ran.rc == 3):
            return "refused in one line", errors[0][:150] if errors else ""
        return "other", f"exit {ran.rc}, {len(errors)} error lines: {ran.err.strip()[-150:]}"
    if case.expect == "run":
        return ("ran correctly", "") if ran.rc == 0 else ("other", f"exit {ran.rc}: {ran.err.strip()[-150:]}")
    # fail: a non-zero exit said in a line, no traceback
    if ran.rc == 0 and not case.steps[-1].startswith("SIG"):
        return "accepted silently", "exit 0"
    return "ran correctly", f"exit {ran.rc}: {(ran.err.strip().splitlines() or [''])[-1][:120]}"


def left_running(folder: Path) -> list[int]:
    """Processes still running in the case's folder (a driver's workers or forkserver left behind)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(Path(os.readlink(entry / "cwd"))).startswith(str(folder)):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def run_case(case: Case) -> tuple[str, str, float]:
    with tempfile.TemporaryDirectory(prefix="hunt57-") as tmp:
        folder = Path(tmp) / "w"
        home = Path(tmp) / "home"
        folder.mkdir()
        home.mkdir()
        for name, text in case.files.items():
            (folder / name).write_text(text)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HYDRA_FULL_ERROR")}
        env.update(HOME=str(home), PYTHONPATH=str(folder), NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1")
        total = 0.0
        for i, step in enumerate(case.steps):
            ran = run_step(step, folder, env, case.timeout)
            total += ran.seconds
            if i < len(case.steps) - 1 and ran.rc != 0 and not step.startswith("PY "):
                if case.family == "pytest plugin" and ran.rc in (1, 5):
                    continue  # a plugin setup run may fail its own test; the judged step says the rest
                return "other", f"setup step {i} exited {ran.rc}: {ran.err.strip()[-150:]}", total
        outcome, detail = judge(case, ran, folder)
        time.sleep(1.0)
        orphans = left_running(folder)
        if orphans:
            for pid in orphans:  # the hunt's own children: ended by id
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            return "other", f"left {len(orphans)} processes running", total
        return outcome, detail, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the cases whose family or name holds this text")
    parser.add_argument("--list", action="store_true")
    args = parser.parse_args()
    chosen = [c for c in cases() if args.only in c.family or args.only in c.name]
    if args.list:
        for c in chosen:
            print(f"{c.family:24} {c.name:40} {c.expect:7} {' ; '.join(c.steps)[:150]}")
        print(f"{len(chosen)} cases")
        return 0
    table: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    bad = []
    for i, case in enumerate(chosen, 1):
        outcome, detail, seconds = run_case(case)
        table[case.family][outcome] += 1
        print(f"[{i}/{len(chosen)} {seconds:5.1f} s] {case.family} | {case.name} | {outcome} | {detail}", flush=True)
        if outcome not in ("refused in one line", "ran correctly"):
            bad.append((case, outcome, detail))
    print("\n| family | inputs | " + " | ".join(OUTCOMES) + " |")
    print("| --- | --- |" + " --- |" * len(OUTCOMES))
    total: collections.Counter = collections.Counter()
    for family, counts in table.items():
        total.update(counts)
        print(f"| {family} | {sum(counts.values())} | " + " | ".join(str(counts[o]) for o in OUTCOMES) + " |")
    print(f"| all | {sum(total.values())} | " + " | ".join(str(total[o]) for o in OUTCOMES) + " |")
    for case, outcome, detail in bad:
        print(f"- {case.family}: `{shlex.join(case.steps[-1:])[:120]}`: {outcome}: {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
