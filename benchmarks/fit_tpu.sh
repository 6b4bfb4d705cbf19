# Issue 59, item 2 on the TPU v5e (through the device tool): `jitexp experiment=fit` for the MLP training step's
# batch and for the bf16 matmul's size from 8192, with the chip's own memory as the limit (the allocator's
# bytes_limit). Each search's run folder (fit.csv, and the timed job's CSVs at the largest value) comes back as
# $OUT/fit_<name>.tgz, its printed lines as $OUT/fit_<name>.txt.
#
# Run from the project root through the device tool (docs/benchmarks.md; /work/shared/TPU.md), after
# `bash ../shared/tpu/wheels.sh` here, with carry [".whl-tpu"]:
#   bash .whl-tpu/install.sh && export PYTHONPATH=$PYTHONPATH:/tmp/site PYTHONUNBUFFERED=1; bash benchmarks/fit_tpu.sh mlp
#   bash .whl-tpu/install.sh && export PYTHONPATH=$PYTHONPATH:/tmp/site PYTHONUNBUFFERED=1; bash benchmarks/fit_tpu.sh matmul
# (one search a call: each may take up to ~5 minutes, a call at most 10; `all` runs both, for a longer limit;
# `test` runs tests/e2e/test_fit_tpu.py, the `tpu`-marked test). The searches start where the first session's
# doubling reached (MLP_START, MATMUL_START; 1024 and 8192 for the whole doubling) to fit one device call.
#
# The matmul's inputs are ones (`init: ones`): the values do not change the memory, and a host draws 2 x 49152^2
# normals in over a minute. The timed job at the largest value leaves out the eager check, the device-time trace and
# the roofline probes: each would need memory beside the job's own (the eager check a second product) and so could
# fail at a value that fits alone.
set -u
R=/tmp/fit_runs; mkdir -p "$R"; OUT=${OUT:-/tmp/fit_out}; mkdir -p "$OUT"
LEAN="timing=quick timing.timeout_s=240 check=false device_time=false roofline=false progress=false"
search() {
  local name=$1 limit=$2; shift 2
  local t0; t0=$(date +%s)
  echo "== $name: jitexp experiment=fit $* $LEAN"
  # shellcheck disable=SC2086
  timeout "$limit" python3 -m jitexp experiment=fit "$@" $LEAN hydra.run.dir="$R/$name" > "$R/$name.out" 2>&1
  echo "rc=$? wall $(( $(date +%s) - t0 )) s"
  grep -v "^\[20" "$R/$name.out" | tail -40 | tee "$OUT/fit_$name.txt"
  echo "wall $(( $(date +%s) - t0 )) s" >> "$OUT/fit_$name.txt"
  [ -d "$R/$name" ] && (cd "$R" && tar czf "$OUT/fit_$name.tgz" --exclude='.inputs' "$name" "$name.out")
}
python3 -c "import jax; print(jax.devices())" 2>&1 | tail -1
case "${1:-all}" in
  mlp|all)
    # width 4096 (two hidden layers), 256 features: params and Adam's state ~215 MB, activations grow with the batch
    search mlp ${MLP_LIMIT:-540} workload=mlp_train_step size=4096 workload.params.features=256 workload.params.batch=1024 \
      fit.key=workload.params.batch fit.step=1024 fit.start=${MLP_START:-262144} fit.max=${MLP_MAX:-1048576} ;;&
  matmul|all)
    search matmul ${MATMUL_LIMIT:-540} workload=matmul dtype=bfloat16 size=8192 fit.step=2048 fit.start=${MATMUL_START:-32768} fit.max=${MATMUL_MAX:-1048576} \
      'workload.args=[{shape:[${size},${size}],dtype:${dtype},init:ones},{shape:[${size},${size}],dtype:${dtype},init:ones}]' ;;
esac
if [ "${1:-all}" = "test" ]; then  # the tpu-marked test alone (3 probes up to 32768, ~1-2 minutes)
  # the tests start the console scripts, which the install put in /tmp/site/bin; no xdist/hypothesis there: no addopts
  PATH=/tmp/site/bin:$PATH timeout 500 python3 -m pytest -q -o addopts="" -p no:cacheprovider -m tpu tests/e2e/test_fit_tpu.py 2>&1 | tail -5
fi
