#!/usr/bin/env bash
# Mutation testing of jitexp's pure layers (mutmut 3, configured in pyproject.toml's [tool.mutmut]) against the
# unit tests, one module at a time, and the score of each:
#
#   scripts/mutation.sh analysis/stats.py report/history/steps.py report/compare/gate.py   # modules under src/jitexp
#   scripts/mutation.sh analysis                                              # a whole package
#   scripts/mutation.sh --survivors analysis/stats.py    # re-test its survivors and untested ones (after new tests)
#   scripts/mutation.sh --all analysis/stats.py          # re-test every mutant, whatever it was before
#   scripts/mutation.sh --timeouts analysis/rows.py      # re-test those a timeout killed (on a quiet machine: a loaded
#                                                        # one can push a correct but slow run past its CPU limit)
#   scripts/mutation.sh --score analysis/stats.py        # print the score of what has run, run nothing
#
# It runs in a copy of the working tree (tracked and untracked files git does not ignore) under $MUTATION_DIR
# (default: /tmp/jitexp-mutation), so the checkout gets no mutants/ folder and edits made meanwhile do not reach
# the run. The copy keeps mutmut's results: by default a module's mutants not yet tested are tested (all of them
# the first time; the rest after an interrupted run), and mutmut makes new mutants of a function whose code changed.
# MUTATION_JOBS (default 1) forked test processes at a time. Not in CI's test command: a module takes minutes to
# tens of minutes on 2 cores (docs/benchmarks.md, "Mutation testing", has the table and each module's time).
#
# Per module it prints: mutants, killed (a timeout counts: the mutant made a test loop or hang), survived, other
# (no tests / suspicious / not checked), the equivalent mutants listed in scripts/mutation_equivalent/ (one file a
# module: analysis.stats.txt, ...; one mutmut name a line; the names are numbered within their function, so after
# an edit to a function its entries there must be checked again), and the score = killed / (mutants - equivalent).
# The other survivors' names follow; `cd $MUTATION_DIR && mutmut show NAME` prints one's diff.
set -euo pipefail
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
work=${MUTATION_DIR:-/tmp/jitexp-mutation}
jobs=${MUTATION_JOBS:-1}
score_only=0
which=unchecked
case ${1:-} in
    --score) score_only=1; shift ;;
    --survivors) which=survived; shift ;;
    --all) which=all; shift ;;
    --timeouts) which=timeout; shift ;;
esac
if [[ $# -eq 0 ]]; then
    echo "usage: $0 [--score] MODULE...   (paths under src/jitexp, e.g. analysis/stats.py, report/history/steps.py, store)" >&2
    exit 2
fi
command -v mutmut >/dev/null || { echo "mutmut is not installed: pip install -e '.[mutation]'" >&2; exit 2; }

if [[ $score_only == 0 ]]; then
    mkdir -p "$work"
    # the working tree's files, mtimes kept (mutmut regenerates the mutants of a file whose mtime changed)
    (cd "$repo" && git ls-files -z --cached --others --exclude-standard \
        | while IFS= read -r -d '' f; do [[ -e $f && $f != mutants/* ]] && printf '%s\0' "$f"; done \
        | tar --null -T - -cf -) | tar -xpf - -C "$work"
fi

cd "$work"
# mutmut's map of which tests run each function: rebuilt from the whole unit suite on every call (a minute or two).
# Its incremental update keeps only the tests new since the last map, and a map saved by an interrupted run is
# partial: mutants tested against either would survive for want of the tests that kill them.
[[ $score_only == 0 ]] && rm -f mutants/mutmut-stats.json
for module in "$@"; do
    module=${module%/}
    name=jitexp.${module%.py}
    name=${name//\//.}
    if [[ $score_only == 0 ]]; then
        start=$(date +%s)
        # a module's mutants by name: jitexp.analysis.stats.x_break_even__mutmut_3, ...xǁClassǁmethod__mutmut_1.
        # mutmut re-tests every mutant it is given by name, whatever it found before: name only those to test.
        mapfile -t names < <(python - "$module" "$name" "$which" <<'PY'
import json
import sys
from pathlib import Path

from mutmut.stats import status_by_exit_code

module, name, which = sys.argv[1:]
root = Path("mutants/src/jitexp") / module
metas = [Path(str(root) + ".meta")] if module.endswith(".py") else sorted(root.rglob("*.py.meta"))
metas = [m for m in metas if m.is_file()]
if which == "all" or not metas:  # every mutant (none made yet: the first run makes them)
    print(f"{name}.*")
for meta in metas if which != "all" else []:
    for key, code in json.loads(meta.read_text())["exit_code_by_key"].items():
        status = status_by_exit_code[code]
        if (
            (which == "unchecked" and code is None)
            or (which == "survived" and (code is None or status in ("survived", "no tests")))
            or (which == "timeout" and status == "timeout")
        ):
            print(key)
PY
        )
        [[ ${#names[@]} -eq 0 ]] && echo "$module: no $which mutants to test"
        if [[ ${#names[@]} -gt 0 ]]; then
            if ! mutmut run --max-children "$jobs" "${names[@]}" >"$work/mutmut-${name}.log" 2>&1; then
                echo "mutmut run failed for $module (log: $work/mutmut-${name}.log):" >&2
                tail -c 3000 "$work/mutmut-${name}.log" | tr '\r' '\n' | tail -20 >&2
                exit 1
            fi
            echo "$module: ran in $(($(date +%s) - start)) s"
        fi
    fi
    python - "$module" "$repo/scripts/mutation_equivalent" <<'PY'
import json
import sys
from pathlib import Path

from mutmut.stats import status_by_exit_code

module, equivalent_dir = sys.argv[1], Path(sys.argv[2])
equivalent = set()
for equivalent_file in sorted(equivalent_dir.glob("*.txt")):
    for line in equivalent_file.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            equivalent.add(line)
root = Path("mutants/src/jitexp") / module
metas = [Path(str(root) + ".meta")] if module.endswith(".py") else sorted(root.rglob("*.py.meta"))
status = {}
for meta in metas:
    if meta.is_file():
        status.update(json.loads(meta.read_text())["exit_code_by_key"])
if not status:
    sys.exit(f"{module}: no mutation results (run it first, without --score)")
by = {}
for key, code in status.items():
    by.setdefault(status_by_exit_code[code], []).append(key)
timeouts = len(by.get("timeout", []))
killed = len(by.get("killed", [])) + timeouts  # a test run past its time limit: detected (as Stryker counts it)
survived = sorted(by.get("survived", []))
equiv = sorted(set(survived) & equivalent)
other = len(status) - killed - len(survived)
scored = len(status) - len(equiv)
score = killed / scored if scored else float("nan")
print(
    f"{module}: {len(status)} mutants, {killed} killed, {len(survived) - len(equiv)} survived, "
    f"{len(equiv)} equivalent, {other} other, score {score:.1%} (killed / non-equivalent; {timeouts} killed by timeout)"
)
for key in survived:
    if key not in equivalent:
        print(f"  survived: {key}")
for kind, keys in sorted(by.items()):
    if kind not in ("killed", "survived", "timeout"):
        print(f"  {kind}: {', '.join(sorted(keys)[:20])}{' ...' if len(keys) > 20 else ''}")
PY
done
