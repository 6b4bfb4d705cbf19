"""`jitexp-history bisect GOOD BAD -- jitexp ARGS...`: the first commit whose measure is slower than GOOD's.

asv find's idea with jitexp's pairing: `git bisect run` walks the user's commits in a worktree of its own (the
user's checkout and their own bisect are left alone), and each tested commit is measured in one `envs` job against
GOOD, processes alternating between GOOD's code and the commit's, so both sides share the host's state. A commit
that cannot be measured (its module fails to import, the job errors) is skipped, as `git bisect skip` does.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from jitexp.analysis.stats import ALPHA, CHANGE_METRICS, THRESHOLD
from jitexp.errors import ConfigError
from jitexp.report.history import cli as history_cli
from jitexp.store.csvio import writable, write_csv
from jitexp.store.folders import load_results
from jitexp.store.owned import NotOurs, record, refuse_foreign, written

GOOD_ENV, TEST_ENV = "good", "test"
EXIT_GOOD, EXIT_BAD, EXIT_SKIP, EXIT_ABORT = 0, 1, 125, 128  # what `git bisect run` reads from a step
MIN_PAIRS = 6  # the fewest process pairs whose signed-rank test can reach p < 0.05
BISECT_CSV = "bisect.csv"
STEPS_JSONL = "steps.jsonl"
STEP_LINE = re.compile(r"^  [0-9a-f]{8} ")  # a step's own line among git bisect run's output


@dataclass
class Plan:
    """What every step needs, handed to the step processes that `git bisect run` starts (as JSON)."""

    args: list[str]  # jitexp's arguments (overrides and flags), without the program
    subdir: str  # the user's working directory, relative to the repository's top
    worktree: str  # where `git bisect` checks out the commits under test
    good_python: str  # runs Python in GOOD's worktree
    test_python: str  # runs Python in the tested commit's worktree
    metric: str
    threshold: float
    out: str
    pythonpath: str = ""  # the user's PYTHONPATH, entries inside the repository moved into the tested worktree
    bad: dict[str, float] | None = None  # each slower mode's ratio at BAD, once BAD is measured


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jitexp-history bisect",
        usage="jitexp-history bisect [-h] [--metric M] [--threshold T] [--out OUT] GOOD BAD -- jitexp ARGS...",
        description="The first commit between GOOD and BAD whose measure is slower than GOOD's: git bisect run, "
        "each commit measured in one job interleaved with GOOD (envs).",
        epilog="Exit status: 0 when the first slower commit is found; 1 when BAD is not slower than GOOD; 2 on a "
        "usage mistake or when the command cannot run.",
    )
    parser.add_argument("good", metavar="GOOD", help="a commit whose measure is the reference")
    parser.add_argument("bad", metavar="BAD", help="a later commit that is slower")
    parser.add_argument(
        "--metric",
        default="steady",
        help=f"what is judged (default steady; one of {', '.join(CHANGE_METRICS)})",
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=THRESHOLD,
        help=f"smallest slowdown that makes a commit bad, as a fraction (default {THRESHOLD})",
    )
    parser.add_argument("--out", default="bisect", help="the folder for bisect.csv and each commit's run")
    return parser


def jitexp_args(command: Sequence[str]) -> list[str]:
    """jitexp's arguments from `jitexp ARGS` or `python -m jitexp ARGS`; ConfigError for any other command."""
    command = list(command)
    if command and Path(command[0]).name == "jitexp":
        return command[1:]
    if len(command) >= 3 and command[1:3] == ["-m", "jitexp"]:
        return command[3:]
    shown = shlex.join(command) if command else None
    raise ConfigError("command", shown, "give the job after --, as `-- jitexp ARGS...`")


def refuse(args: Sequence[str]) -> None:
    """ConfigError for what a bisect job cannot hold: a sweep, or its own envs / variants."""
    for arg in args:
        if arg in ("-m", "--multirun"):
            raise ConfigError("command", arg, "bisect measures one job per commit; drop -m and sweep values")
        key = arg.lstrip("+~").partition("=")[0]
        if key in ("envs", "variants") or key.startswith(("envs.", "variants.")):
            raise ConfigError("command", arg, "bisect sets envs itself (GOOD against each commit); drop it")


def pairs_overrides(args: Sequence[str]) -> list[str]:
    """timing.processes (and max_processes) raised to MIN_PAIRS where the job's timing has fewer: a commit's
    verdict needs that many process pairs. Raises ConfigError for a command jitexp would refuse."""
    from jitexp.engine.compose import parse_args
    from jitexp.engine.preflight import compose

    parsed = parse_args(args)
    if parsed is None:
        raise ConfigError("command", shlex.join(args), "jitexp cannot read these arguments (run it alone to see why)")
    timing = compose(parsed.overrides, parsed.config_dir).timing
    out = []
    if timing.processes < MIN_PAIRS:
        out.append(f"timing.processes={MIN_PAIRS}")
    if timing.max_processes < MIN_PAIRS:
        out.append(f"timing.max_processes={MIN_PAIRS}")
    return out


def verdict(
    rows: pd.DataFrame, metric: str, threshold: float, bad: Mapping[str, float] | None = None
) -> tuple[int, str, dict[str, float]]:
    """(exit code for git bisect run, what was seen, the slower modes' ratios) from one commit's job rows.

    Without `bad` (BAD against GOOD): bad when a mode is significantly slower than GOOD beyond the threshold.
    With `bad` (each stepped mode's ratio at BAD), as asv find judges: bad when the commit's level is nearer BAD's
    than GOOD's, its position log(ratio) / log(BAD's ratio) averaged over those modes above 1/2, so that noise
    around GOOD's level is not taken for the step. Skipped when the commit could not be measured (or the pairs
    cannot tell); aborted when GOOD's side failed (no later commit can be judged).
    """
    if rows.empty or "env" not in rows.columns:
        return EXIT_SKIP, "no rows: the job did not run", {}
    status = rows["status"].astype(str)
    env = rows["env"].astype(str)
    good_errors = rows[(env == GOOD_ENV) & (status != "ok")]
    if len(good_errors):
        return EXIT_ABORT, f"GOOD failed: {_error(good_errors.iloc[0])}", {}
    tested = rows[env == TEST_ENV]
    if tested.empty or (tested["status"].astype(str) != "ok").all():
        return EXIT_SKIP, f"cannot measure: {_error(tested.iloc[0]) if len(tested) else 'no rows'}", {}
    seen, slower, positions, unknown = [], {}, [], []
    for _, row in tested[tested["status"].astype(str) == "ok"].iterrows():
        mode = str(row["mode"])
        if bad is not None and mode not in bad:
            continue  # only the modes that stepped at BAD are judged
        ratio = float(pd.to_numeric(row.get(f"ab_{metric}_ratio"), errors="coerce"))
        p_value = float(pd.to_numeric(row.get(f"ab_{metric}_p_value"), errors="coerce"))
        said = str(row.get(f"ab_{metric}_verdict", ""))
        if math.isnan(ratio) or said.startswith("cannot tell"):
            unknown.append(f"{mode} {metric}: {said if said not in ('', 'nan') else 'no ratio'}")
            continue
        low = pd.to_numeric(row.get(f"ab_{metric}_ratio_ci_low"), errors="coerce")
        high = pd.to_numeric(row.get(f"ab_{metric}_ratio_ci_high"), errors="coerce")
        seen.append(f"{mode} {metric} {ratio:.3g}x [{low:.3g}, {high:.3g}] {said}")
        if p_value < ALPHA and ratio > 1 + threshold:  # significant and beyond --threshold (not the verdict's 5%)
            slower[mode] = ratio
        if bad is not None:
            positions.append(math.log(ratio) / math.log(bad[mode]))
    if unknown and (bad is not None or not seen):
        return EXIT_SKIP, "; ".join(unknown), {}
    if bad is None:
        return (EXIT_BAD if slower else EXIT_GOOD), "; ".join(seen), slower
    if not positions:
        return EXIT_SKIP, f"none of BAD's slower modes ({', '.join(bad)}) measured", {}
    position = sum(positions) / len(positions)
    seen.append(f"{position:.2f} of the way to BAD".replace("-0.00", "0.00"))
    return (EXIT_BAD if position > 0.5 else EXIT_GOOD), "; ".join(seen), slower


def _error(row: pd.Series) -> str:
    return f"{row.get('error_type', '')}: {str(row.get('error_message', ''))[:120]}".strip(": ")


LABELS = {EXIT_GOOD: "good", EXIT_BAD: "slower", EXIT_SKIP: "skipped", EXIT_ABORT: "abort"}


def measure(plan: Plan) -> tuple[int, dict[str, Any]]:
    """Run the job at the worktree's commit against GOOD and judge it: (exit code, the step's record)."""
    commit, subject = _git(plan.worktree, "log", "-1", "--format=%H%x00%s").split("\x00", 1)
    record = {"commit": commit, "subject": subject, "verdict": "", "seen": "", "run": "", "slower_modes": {}}
    try:
        code, seen, slower, folder = _run_and_judge(plan, commit)
    except Exception as exc:  # anything here is this commit's: skip it, never let git read a crash as "bad"
        code, seen, slower, folder = EXIT_SKIP, f"cannot measure: {type(exc).__name__}: {exc}", {}, Path()
    record.update(verdict=LABELS[code], seen=seen, run=str(folder) if folder.name else "", slower_modes=slower)
    return code, record


def _run_and_judge(plan: Plan, commit: str) -> tuple[int, str, dict[str, float], Path]:
    where = Path(plan.worktree) / plan.subdir
    if not where.is_dir():
        return EXIT_SKIP, f"cannot measure: this commit has no {plan.subdir}/", {}, Path()
    folder = Path(plan.out) / "runs" / commit[:12]
    shutil.rmtree(folder, ignore_errors=True)  # an earlier bisect's files are not this run's
    envs = f"envs={{{GOOD_ENV}:{_quoted(plan.good_python)},{TEST_ENV}:{_quoted(plan.test_python)}}}"
    done = subprocess.run(
        [sys.executable, "-m", "jitexp", *plan.args, envs, f"hydra.run.dir={_quoted(str(folder))}"],
        cwd=where,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        | ({"PYTHONPATH": plan.pythonpath} if plan.pythonpath else {}),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        rows = load_results(folder)
    except FileNotFoundError:
        rows = pd.DataFrame()
    if rows.empty:
        said = [line for line in done.stderr.splitlines() if line.strip()]
        return (
            EXIT_SKIP,
            f"cannot measure: {said[-1][:160] if said else f'jitexp exited {done.returncode}'}",
            {},
            folder,
        )
    measured = {str(c) for c in rows.get("code_commit", pd.Series(dtype=str)).dropna()}
    if measured and measured != {commit}:
        why = (
            f"the job measured code of commit {', '.join(sorted(c[:8] for c in measured))}, not {commit[:8]}: the "
            "workload's module is not imported from the checked-out commit (an installed or editable package?); "
            "put its folder on PYTHONPATH instead"
        )
        return EXIT_ABORT, why, {}, folder
    code, seen, slower = verdict(rows, plan.metric, plan.threshold, plan.bad)
    return code, seen, slower, folder


def _quoted(text: str) -> str:
    """A Hydra override value in single quotes (paths may hold brackets, commas or parentheses)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def step(plan_file: str) -> int:
    """One `git bisect run` step: measure the checked-out commit, print and keep its verdict, exit as git reads."""
    plan = Plan(**json.loads(Path(plan_file).read_text()))
    code, record = measure(plan)
    with open(Path(plan.out) / STEPS_JSONL, "a") as f:
        f.write(json.dumps(record) + "\n")
    print(f"  {record['commit'][:8]} {record['subject'][:50]!r}: {record['verdict']} ({record['seen']})", flush=True)
    return code


def _git(repo: str | Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if check and done.returncode:
        said = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise RuntimeError(f"git {' '.join(args)}: {said}")
    return done.stdout.strip()


def _commit(repo: Path, key: str, name: str) -> str:
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}")
    except RuntimeError:
        raise ConfigError(key, name, "not a commit of this repository") from None


def _wrapper(path: Path, worktree: Path, subdir: str, pythonpath: str) -> str:
    """A 'python' that runs this interpreter in worktree/subdir, with the worktree's code first on the path."""
    lines = ["#!/bin/sh", f"cd {shlex.quote(str(worktree / subdir))} || exit 1"]
    if pythonpath:
        lines.append(f'PYTHONPATH={shlex.quote(pythonpath)}"${{PYTHONPATH:+:$PYTHONPATH}}"; export PYTHONPATH')
    lines.append(f'exec {shlex.quote(sys.executable)} "$@"')
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o755)
    return str(path)


def _mapped_pythonpath(top: Path, worktree: Path) -> str:
    """The user's PYTHONPATH with each entry inside the repository moved to the same place in the worktree."""
    out = []
    for entry in filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)):
        real = Path(entry).resolve()  # relative entries are the user's cwd's; the jobs run in the worktree
        out.append(str(worktree / real.relative_to(top)) if real.is_relative_to(top) else str(real))
    return os.pathsep.join(out)


def bisect(
    good: str,
    bad: str,
    command: Sequence[str],
    *,
    metric: str = "steady",
    threshold: float = THRESHOLD,
    out: str | Path = "bisect",
    cwd: str | Path | None = None,
) -> tuple[pd.DataFrame, list[str]]:
    """Bisect GOOD..BAD in the repository holding cwd: the tested commits in test order (also out/bisect.csv) and
    the first slower commit (or the candidates git could not tell apart, when commits between were skipped).
    ConfigError for a usage mistake, NotSlower when BAD is not, RuntimeError when the bisect cannot run."""
    if metric not in CHANGE_METRICS:
        raise ConfigError("--metric", metric, CHANGE_METRICS)
    if not 0 <= threshold < 1:
        raise ConfigError("--threshold", threshold, "must lie in [0, 1)")
    args = jitexp_args(command)
    refuse(args)
    here = Path(cwd or os.getcwd()).resolve()
    try:
        top = Path(_git(here, "rev-parse", "--show-toplevel")).resolve()
    except RuntimeError:
        raise ConfigError("cwd", str(here), "run bisect inside the git repository of the code") from None
    good_sha, bad_sha = _commit(top, "GOOD", good), _commit(top, "BAD", bad)
    if subprocess.run(["git", "-C", str(top), "merge-base", "--is-ancestor", good_sha, bad_sha]).returncode:
        raise ConfigError("GOOD", good, f"not an ancestor of BAD ({bad}); give GOOD first, then BAD")
    args = args + pairs_overrides(args)
    out = (here / Path(out)).resolve()
    claim_out(out, default=out == here / "bisect")
    (out / STEPS_JSONL).unlink(missing_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="jitexp-bisect-"))
    good_tree, test_tree = tmp / "good", tmp / "test"
    subdir = str(here.relative_to(top))
    try:
        _git(top, "worktree", "add", "--detach", "--quiet", str(good_tree), good_sha)
        _git(top, "worktree", "add", "--detach", "--quiet", str(test_tree), bad_sha)
        plan = Plan(
            args=args,
            subdir=subdir,
            worktree=str(test_tree),
            good_python=_wrapper(tmp / "good-python", good_tree, subdir, _mapped_pythonpath(top, good_tree)),
            test_python=_wrapper(tmp / "test-python", test_tree, subdir, _mapped_pythonpath(top, test_tree)),
            metric=metric,
            threshold=threshold,
            out=str(out),
            pythonpath=_mapped_pythonpath(top, test_tree),
        )
        plan_file = tmp / "plan.json"
        plan_file.write_text(json.dumps(asdict(plan)))
        print(
            f"bisect {good_sha[:8]}..{bad_sha[:8]} on {metric}: each commit against GOOD in one job, slower when "
            f"nearer BAD's level than GOOD's: jitexp {shlex.join(args)}",
            flush=True,
        )
        print(f"BAD against GOOD (a mode significantly slower beyond {threshold:g} is the step to find):", flush=True)
        first = step(str(plan_file))
        if first != EXIT_BAD:
            raise NotSlower(first)
        plan.bad = json.loads((out / STEPS_JSONL).read_text().splitlines()[-1])["slower_modes"]
        plan_file.write_text(json.dumps(asdict(plan)))
        if _git(top, "rev-list", "--count", f"{good_sha}..{bad_sha}") == "1":
            raise FirstIsBad([bad_sha])  # BAD is GOOD's child: nothing between them to test
        _git(test_tree, "bisect", "start", bad_sha, good_sha)
        run = subprocess.Popen(
            [
                "git",
                "-C",
                str(test_tree),
                "bisect",
                "run",
                sys.executable,
                "-m",
                "jitexp.bisection",
                "--step",
                str(plan_file),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        said = []
        try:
            assert run.stdout is not None
            for line in run.stdout:
                said.append(line.rstrip("\n"))
                if line.startswith("Bisecting:") or STEP_LINE.match(line):
                    print(line, end="", flush=True)
            run.wait()
        finally:
            if run.poll() is None:  # interrupted here (a notebook's interrupt reaches only this process)
                run.kill()
                run.wait()
        first_bad = _first_bad(said)
    except FirstIsBad as known:
        first_bad = known.commits
    finally:
        for tree in (good_tree, test_tree):
            _git(top, "worktree", "remove", "--force", str(tree), check=False)
        _git(top, "worktree", "prune", check=False)
        shutil.rmtree(tmp, ignore_errors=True)
    table = _table(out, first_bad)
    write_csv(table, out / BISECT_CSV)
    return table, first_bad


COMMAND = "jitexp-history bisect"
OUT_FILES = (BISECT_CSV, STEPS_JSONL)
RUNS = "runs"  # one run folder a tested commit below it, each emptied before its run


def claim_out(out: Path, *, default: bool = False) -> None:
    """--out made and written to once, holding no bisect.csv, steps.jsonl or runs/ that bisect did not write (it
    replaces the files and empties runs/<commit>/); its names recorded as bisect's. NotOurs or a ConfigError
    naming --out, before anything runs. default: the default ./bisect, whose files before the list are bisect's."""
    try:
        writable(out)
    except OSError as exc:
        raise ConfigError("--out", str(out), f"cannot be written: {exc.strerror or exc}") from None
    refuse_foreign(out, OUT_FILES, COMMAND, default=default)
    ours = written(out)
    if (out / RUNS).is_dir() and RUNS not in (ours or set()) and not (ours is None and default):
        raise NotOurs(
            f"{out} holds {RUNS}/, which {COMMAND} did not write and whose folders it would empty; choose another "
            "--out, or move it away"
        )
    record(out, [*OUT_FILES, RUNS])


class FirstIsBad(Exception):
    """The answer is known without bisecting."""

    def __init__(self, commits: list[str]):
        self.commits = commits


class NotSlower(Exception):
    """BAD measured not slower than GOOD (or could not be measured): nothing to bisect."""

    def __init__(self, code: int):
        self.code = code


def _first_bad(said: Sequence[str]) -> list[str]:
    """The first bad commit git named, or the candidates it could not tell apart (skipped commits)."""
    for i, line in enumerate(said):
        if line.endswith(" is the first bad commit"):
            return [line.split()[0]]
        if line.startswith("The first bad commit could be any of:"):
            return [c.strip() for c in said[i + 1 :] if len(c.strip()) == 40]
    return []


def _table(out: Path, first_bad: Sequence[str]) -> pd.DataFrame:
    lines = (out / STEPS_JSONL).read_text().splitlines() if (out / STEPS_JSONL).exists() else []
    columns = ["commit", "subject", "verdict", "seen", "run"]
    table = pd.DataFrame([json.loads(line) for line in lines]).reindex(columns=columns)
    table["first_slower"] = table["commit"].isin(first_bad)
    return table


def main(argv: Sequence[str] | None = None) -> int:
    """`jitexp-history bisect ...` (argv after `bisect`)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    own, command = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    args = build_parser().parse_args(own)
    try:
        table, first_bad = bisect(
            args.good, args.bad, command, metric=args.metric, threshold=args.threshold, out=args.out
        )
    except (ConfigError, NotOurs) as error:
        print(f"jitexp-history bisect: error: {error}", file=sys.stderr)
        return 2
    except NotSlower as why:
        said = "could not be measured" if why.code != EXIT_GOOD else "is not slower than GOOD"
        print(f"jitexp-history bisect: BAD {said}; nothing to bisect ({Path(args.out) / STEPS_JSONL})", file=sys.stderr)
        return 1 if why.code == EXIT_GOOD else 2
    except RuntimeError as error:
        print(f"jitexp-history bisect: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            f"jitexp-history bisect: interrupted (Ctrl-C); its worktrees are removed, the commits measured so far are "
            f"in {Path(args.out) / STEPS_JSONL}",
            file=sys.stderr,
        )
        return 130
    found = table[table["first_slower"]]
    if len(first_bad) == 1 and len(found):
        row = found.iloc[0]
        print(f"first slower commit: {row['commit']} {row['subject']!r} ({row['seen']})")
    elif first_bad:
        print(f"first slower commit: one of {', '.join(c[:8] for c in first_bad)} (skipped commits between)")
    else:
        print("first slower commit: git bisect named none (see bisect.csv)")
        return 2
    print(f"every tested commit: {Path(args.out) / BISECT_CSV}")
    return 0


def history_main(argv: Sequence[str] | None = None) -> int:
    """The jitexp-history command: `bisect ...` here, a history of runs in report.history.cli."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["bisect"]:
        return main(argv[1:])
    return history_cli.main(argv)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--step"]:
        sys.exit(step(sys.argv[2]))
    sys.exit(main())
