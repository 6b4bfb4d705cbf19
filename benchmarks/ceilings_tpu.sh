# Issue 50 on the TPU (through the device tool): the sweep, the main job, the mlp step (default and quick), a
# tpu_record subset and pytest -m tpu; the run folders come back in $OUT/runs.tgz for benchmarks/consistency_check.py.
set -u
R=/tmp/runs; mkdir -p $R; T0=$(date +%s)
run() { local name=$1; shift; echo "== $name: jitexp $*"; timeout ${LIMIT:-300} python3 -m jitexp "$@" progress=false > $R/$name.out 2>&1; echo "rc=$? $(( $(date +%s) - T0 )) s"; grep -v "^\[20" $R/$name.out | tail -12; }
LIMIT=290 run sweep -m workload=elementwise_chain,matmul,softmax size=64,256,1024 hydra.sweep.dir=$R/sweep
LIMIT=60 run main hydra.run.dir=$R/main
LIMIT=60 run mlp workload=mlp_train_step size=64 workload.params.features=256 workload.params.depth=1 mode=jit hydra.run.dir=$R/mlp
LIMIT=40 run mlp_quick workload=mlp_train_step size=64 workload.params.features=256 workload.params.depth=1 mode=jit timing=quick hydra.run.dir=$R/mlp_quick
echo "== tpu_record"; timeout 100 python3 benchmarks/tpu_record.py --cases seed_speedup,transformer_block,matmul_8192,size_scaling_1024 --csv $R/tpu_record.csv 2>&1 | tail -14; echo "$(( $(date +%s) - T0 )) s"
(cd $R && tar czf $OUT/runs.tgz --exclude='.inputs' .)
if [ $(( $(date +%s) - T0 )) -lt 420 ]; then echo "== pytest -m tpu"; timeout $(( 560 - ($(date +%s) - T0) )) python3 -m pytest -q -p no:cacheprovider -m tpu tests/e2e/test_tpu.py 2>&1 | tail -5; fi
echo "$(( $(date +%s) - T0 )) s"
