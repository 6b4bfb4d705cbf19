#!/bin/bash
# Byte-identical check of the report commands across a change (issue 60): every saved run's jitexp-report, eight
# jitexp-compare pairs and nine jitexp-history outputs, with the printed lines and exit codes, hashed.
#
#   benchmarks/report_identical.sh before        # on the tree before the change
#   benchmarks/report_identical.sh after         # on the tree after it
#   diff $DIR/before.sha $DIR/after.sha          # DIR: $REPORT_IDENTICAL_DIR, default /tmp/report_identical
#
# Inputs: tests/data/runs (7 saved runs), tests/data/histories (4), and two real small sweeps made once into
# $DIR/inputs (matmul and add_one at sizes 100 and 200, eager and jit, timing=quick) and reused by every later call.
# The generation time (YYYY-MM-DD HH:MM[:SS], ISO stamps) is masked in every file but the PNGs, hashed as written.
set -u
LABEL=$1
HERE=$(cd "$(dirname "$0")/.." && pwd)
DIR=${REPORT_IDENTICAL_DIR:-/tmp/report_identical}
W=$DIR/work; O=$DIR/cur; D=$HERE/tests/data
mkdir -p "$DIR/inputs"
for s in real1 real2; do
  [ -f "$DIR/inputs/$s/results.csv" ] || (cd "$DIR/inputs" && jitexp -m size=100,200 'mode=[eager,jit]' timing=quick \
    workload=matmul,add_one hydra.sweep.dir="$DIR/inputs/$s" > "$DIR/inputs/$s.log" 2>&1)
done
rm -rf "$W" "$O"; mkdir -p "$W" "$O"
for r in control_flow envs errored main old_schema sweep variants; do cp -r "$D/runs/$r" "$W/$r"; done
cp -r "$DIR/inputs/real1" "$W/real1"; cp -r "$DIR/inputs/real2" "$W/real2"
for h in twelve_commits unchanged slower_newest recovered; do cp -r "$D/histories/$h" "$W/h_$h"; done
cd "$W"
for r in control_flow envs errored main old_schema sweep variants real1 real2; do
  jitexp-report --out "$O/report_$r" "$W/$r" > "$O/report_$r.out" 2>&1; echo "rc=$?" >> "$O/report_$r.out"
done
cmp() { n=$1; shift; jitexp-compare "$@" --out "$O/compare_$n" > "$O/compare_$n.out" 2>&1; echo "rc=$?" >> "$O/compare_$n.out"; }
cmp aa_sweep "$W/sweep" "$W/sweep"
cmp old_new "$W/old_schema" "$W/sweep"
cmp real "$W/real1" "$W/real2"
cmp real_all "$W/real1" "$W/real2" --all --memory
cmp real_excuse "$W/real1" "$W/real2" --excuse-host-drift
cmp envs_variants "$W/envs" "$W/variants"
cmp cf "$W/control_flow" "$W/control_flow" --all
cmp errored "$W/errored" "$W/errored"
cmp real_allow "$W/real1" "$W/real2" --allow-undetectable --threshold 0.01
cmp sweep_allow "$W/sweep" "$W/old_schema" --allow-undetectable --all --memory
for h in twelve_commits unchanged slower_newest recovered; do
  (cd "$W/h_$h" && jitexp-history --out "$O/history_$h" '*' > "$O/history_$h.out" 2>&1; echo "rc=$?" >> "$O/history_$h.out")
  (cd "$W/h_$h" && jitexp-history --markdown --out "$O/historymd_$h" '*' > "$O/historymd_$h.out" 2>&1
   echo "rc=$?" >> "$O/historymd_$h.out")
done
jitexp-history --out "$O/history_real" "$W/real1" "$W/real2" > "$O/history_real.out" 2>&1; echo "rc=$?" >> "$O/history_real.out"
rm -rf "$DIR/$LABEL"; cp -r "$O" "$DIR/$LABEL"
cd "$DIR/$LABEL" && find . -type f | sort | while read -r f; do
  case "$f" in
    *.png) sha256sum "$f" ;;
    *) sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?( ?UTC|Z|[+-][0-9]{2}:?[0-9]{2})?/<TIME>/g' "$f" \
         | sha256sum | sed "s|-|$f|" ;;
  esac
done > "$DIR/$LABEL.sha"
echo "$(wc -l < "$DIR/$LABEL.sha") files hashed: $DIR/$LABEL.sha"
