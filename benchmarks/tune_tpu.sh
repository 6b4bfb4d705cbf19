# Issue 58 on the TPU v5e (through the device tool): one shipped study, `jitexp experiment=tune_matmul_tpu` (a 4096
# matmul's dtype x mode.compiler_options.xla_tpu_scoped_vmem_limit_kib, 6 trials, timing=quick, the best confirmed
# against float32 without the option in 6 paired fresh processes). What it printed (trial lines, the best, the
# confirmation line, the wall time) comes back as $OUT/tune_matmul.txt, trials.csv as $OUT/tune_matmul_trials.csv, the
# sweep folder as $OUT/tune_matmul.tgz. The study is cut at TUNE_LIMIT seconds (default 360) so that a call ends
# within 7 minutes; a study cut short resumes with the same command and resume=true.
#
# Before (here, on the development machine, from the project root):
#   bash ../shared/tpu/wheels.sh                     # .whl-tpu/: hydra & co and a wheel of this checkout
#   python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.11 --implementation cp \
#     --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl-tune \
#     optuna==5.1.0 alembic==1.20.1 sqlalchemy==2.1.9 mako==1.4.3 markupsafe colorlog==6.12.0 typing-extensions
#   (the tune extra: the TPU machine's own index is not known to hold optuna; add /.whl-tune/ to .git/info/exclude)
# Then call the device tool with carry [".whl-tpu", ".whl-tune"] and the command
#   bash .whl-tpu/install.sh && export PYTHONPATH=$PYTHONPATH:/tmp/site PYTHONUNBUFFERED=1; bash benchmarks/tune_tpu.sh
# (`bash benchmarks/tune_tpu.sh test` runs tests/e2e/test_tune_tpu.py instead, the `tpu`-marked test: 3 trials at
# size 1024, ~1-2 minutes; `bash benchmarks/tune_tpu.sh mlp` runs experiment=tune_mlp on the chip instead, donation x
# remat at width 4096 and batch 4096, where the memory objective is the allocator's peak: not run yet.)
set -u
R=/tmp/tune_runs; mkdir -p "$R"; OUT=${OUT:-/tmp/tune_out}; mkdir -p "$OUT"
if ! python3 -c "import optuna" 2>/dev/null; then
  PIP_CONFIG_FILE=/dev/null python3 -m pip install --isolated -q --no-index --no-deps --no-compile --no-cache-dir \
    --target /tmp/site .whl-tune/*.whl 2>&1 | grep -v notice
fi
python3 -c "import optuna, jax; print('optuna', optuna.__version__, 'jax', jax.__version__, jax.devices())" 2>&1 | tail -1
if [ "${1:-study}" = "test" ]; then
  # the tests start the console scripts, which the install put in /tmp/site/bin; no xdist/hypothesis there: no addopts
  PATH=/tmp/site/bin:$PATH timeout 500 python3 -m pytest -q -o addopts="" -p no:cacheprovider -m tpu tests/e2e/test_tune_tpu.py 2>&1 | tail -15 | tee "$OUT/tune_test.txt"
  exit 0
fi
name=matmul; ARGS="experiment=tune_matmul_tpu"
if [ "${1:-study}" = "mlp" ]; then name=mlp; ARGS="experiment=tune_mlp size=4096 workload.params.batch=4096"; fi
t0=$(date +%s)
echo "== jitexp $ARGS progress=false (limit ${TUNE_LIMIT:-360} s)" | tee "$OUT/tune_$name.txt"
# shellcheck disable=SC2086
timeout "${TUNE_LIMIT:-360}" python3 -m jitexp $ARGS progress=false hydra.sweep.dir="$R/$name" > "$R/$name.out" 2>&1
rc=$?
grep -v "^\[20\|^jitexp: process " "$R/$name.out" | tail -60 | tee -a "$OUT/tune_$name.txt"
echo "rc=$rc wall $(( $(date +%s) - t0 )) s" | tee -a "$OUT/tune_$name.txt"
[ -f "$R/$name/trials.csv" ] && cp "$R/$name/trials.csv" "$OUT/tune_${name}_trials.csv"
[ -d "$R/$name" ] && (cd "$R" && tar czf "$OUT/tune_$name.tgz" --exclude='.inputs' "$name" "$name.out")
true
