# Issue 61 through the device tool (a quiet machine: the TPU host, 13 cores): benchmarks/user_pairs.py's pairs of a
# jitexp job and a plain process a user would start. Each mode stays under ~8 minutes (--budget-s per case) and
# prints each round as it ends; the lines go to $OUT/user_pairs_<mode>.txt and each round's values to
# $OUT/user_pairs_<mode>.csv as they come, so a mode cut short keeps what it measured.
#
#   bash .whl-tpu/install.sh && export PYTHONPATH=$PYTHONPATH:/tmp/site; bash benchmarks/user_pairs_device.sh cpu
# with carry [".whl-tpu"], the wheels built (bash ../shared/tpu/wheels.sh) after issue 61's commits: the jobs run the
# installed jitexp, and the script stops at once if it lacks the worker's switches.
#
# In order of what they settle (each is one device call of ~8 minutes):
# cpu:   benchmarks/settle_ab.py (the rounds' own cost in one process), x+1 on a scalar (with before_fix beside it: the rounds before issue 61's fix) and the chain on 1e5 floats
#        (>= 24 pairs each), compute_heavy at 1000 (as many as fit), JAX on the CPU pinned to 4 cores (CORES=0-3).
# tpu:   x+1 on the chip (~200 s), then the main job (`jitexp`: compute_heavy at 1000, eager and jit,
#        timing=default; its jit row) for as many pairs as the rest allows.
# arms:  the elimination for x+1 on the CPU: as_is beside each factor switched off, in the same rounds, and
#        before_fix (the rounds as before issue 61's fix: JITEXP_WORKER_OFF=settle,early_collect).
# arms2: the rest of the factors, likewise.
# arms3: the worker's process itself: the plain loop in a forkserver child (preloaded as jitexp's, and bare) beside as_is.
# tpu_main: more pairs of the main job on the chip.
# tpu_settle: x+1 on the chip, as_is beside no_short_settle (the one-call samples as before 2026-12-07), in the same rounds.
# tpu_eager: the main job as it is beside the same job with mode=jit, in the same rounds: does eager beside jit in a
#        process's rounds make the chip's jit calls read faster than the user's loop of jit calls alone?
# tpu_fs: the main job beside the user's loop run in a forkserver child preloaded as jitexp's workers are (plain_fs), in
#        the same rounds: is the chip's 2-3% gap (docs/benchmarks.md, round 4) the worker's process, not its rounds?
# tpu_kind: the user's loop alone (no jitexp job) in a fresh interpreter beside the same loop in a forkserver child
#        preloaded as jitexp's (plain_fs: 0.968 on 2026-12-07), in a bare forkserver child (plain_fs_bare) and in a
#        spawned child (plain_spawn; jitexp's workers spawned read 1.097): which kind of process moves the chip's
#        synced call, and which way (12:03 UTC: preloaded 0.969x bare, 0.961-0.992; spawned 1.001x bare).
# tpu_preload: the main job beside the same job whose forkserver preloads nothing (no_preload: 1.090, 12:12 UTC).
# tpu_import: no_preload beside no_preload_no_prepare (no next worker importing while one measures): is no_preload's
#        9% the neighbour's import during the rounds, or the worker's own import after the fork?
# tpu_stack: x + 1 on the chip, as_is beside deep_stack and user_timing: does the shallow thread move the chip's
#        one-call samples (x + 1 read 0.989 over 14 pairs before it, 1.026, 0.992-1.100, over 11 after), and how far
#        is the median of one-call samples (timing=quick) from the mean per call of the user's 10 ms batches?
# tpu_quick: x + 1 on the chip, as_is beside no_prepare (no next worker forked while the only one measures: a quick
#        job's one process prepares a neighbour it never uses) and user_timing (the user's 10 ms batches).
# tpu_prepare: x + 1 on the chip, as_is beside no_prepare alone (more pairs a call than tpu_quick).
# tpu_samples: x + 1 on the chip, as_is beside quick_many (30 one-call samples), quick_5ms (quick's sample floor at
#        5 ms, not 0.5: ~10 calls a sample) and user_timing: is quick's ~1-5% above the user's batches (round 9) the
#        few samples, early in the worker's life, or the one call a sample? (On the CPU a ~1 ms call reads likewise.)
# tpu_warm: x + 1 on the chip, as_is (quick as it is: 10 ms samples since 2026-12-08 00:40 UTC, a warm-up of 100 calls,
#        at most 0.1 s, since 2026-12-07 21:00 UTC) beside floor_05 (its 0.5 ms samples as before: 0.944x on the CPU
#        over 108 pairs) and warmup_1 (one warm-up call, as before). Expected near the main job's 0.983 or the worker's
#        kind of process (user_timing 0.957, plain_fs 0.954 in rounds 9-10), where 10 ms samples land on the chip.
#        tpu_settle, tpu_eager, tpu_fs, tpu_kind, tpu_preload, tpu_import, tpu_stack, tpu_quick, tpu_samples and tpu_warm take BUDGET=s TMO=s
#        (default 420, 540), the pairs' --budget-s and timeout, to leave room for another probe in the call.
# deep:  x+1 on the CPU, as_is beside deep_stack (the timed calls on the worker's main thread, ~15 frames deep, as before
#        2026-12-07): the stack's depth, which jaxlib walks at every call; also on this VM (OUT=/tmp/x bash ... deep).
set -u
OUT=${OUT:-/tmp/user_pairs_out}; mkdir -p "$OUT"
mode=${1:-cpu}
CORES=${CORES:-0-3}
export PYTHONUNBUFFERED=1
# SMOKE=1: 2 rounds a case (a check of the script itself, not a measurement)
[ "${SMOKE:-0}" = 1 ] && P="--pairs 2" || P=""
rm -f "$OUT/user_pairs_$mode.csv"
{ date -u; nproc; python3 -c "import jax; print(jax.__version__)"; } 2>&1 | tee "$OUT/user_pairs_$mode.txt"
# The jobs run the installed jitexp (the carried wheel): it must hold this checkout's worker (JITEXP_WORKER_OFF's
# names); an older wheel would measure old code under the new arms' names. Rebuild: bash ../shared/tpu/wheels.sh
if ! python3 -c "from jitexp.worker import factors; assert 'shallow_stack' in factors.FACTORS; print('jitexp from', factors.__file__)" \
    2>&1 | tee -a "$OUT/user_pairs_$mode.txt" | grep -q "jitexp from"; then
  echo "the installed jitexp predates benchmarks/user_pairs.py's worker switches: rebuild .whl-tpu (bash ../shared/tpu/wheels.sh)" \
    | tee -a "$OUT/user_pairs_$mode.txt"
  exit 3
fi
case "$mode" in
  cpu)
    export JAX_PLATFORMS=cpu
    t0=$(date +%s)
    # one call each, so a case that runs long cannot take the others' time: budgets add up to ~420 s (the install
    # takes some of the call's 600 s); x+1 with before_fix beside it: the fix's effect in the same rounds
    taskset -c "$CORES" true && PIN=(taskset -c "$CORES") || PIN=()
    # first, in one process (~15 s): the rounds before the fix, each half of it, both, samples back to back
    "${PIN[@]}" timeout 90 python3 benchmarks/settle_ab.py --runs 100 2>&1 | tee -a "$OUT/user_pairs_$mode.txt"
    "${PIN[@]}" timeout 300 python3 benchmarks/user_pairs.py --csv "$OUT/user_pairs_$mode.csv" \
      --cases add_one --arms as_is,before_fix --pairs 30 --budget-s 170 $P 2>&1 | tee -a "$OUT/user_pairs_$mode.txt"
    "${PIN[@]}" timeout 300 python3 benchmarks/user_pairs.py --csv "$OUT/user_pairs_$mode.csv" \
      --cases chain_1e5 --pairs 30 --budget-s 120 $P 2>&1 | tee -a "$OUT/user_pairs_$mode.txt"
    left=$(( 420 - ($(date +%s) - t0) )); [ "$left" -lt 40 ] && left=40
    "${PIN[@]}" timeout $(( left + 60 )) python3 benchmarks/user_pairs.py --csv "$OUT/user_pairs_$mode.csv" \
      --cases compute_heavy --pairs 40 --budget-s "$left" $P 2>&1 | tee -a "$OUT/user_pairs_$mode.txt"
    ;;
  arms|arms2|arms3)
    export JAX_PLATFORMS=cpu
    taskset -c "$CORES" true && PIN=(taskset -c "$CORES") || PIN=()
    case "$mode" in
      arms) ARMS=as_is,before_fix,user_timing,no_extras,all_off ;;
      arms2) ARMS=as_is,no_preload,no_freeze,gc_on,no_progress,no_cache ;;
      arms3) ARMS=as_is,plain_fs,plain_fs_bare ;;
    esac
    "${PIN[@]}" timeout 540 python3 benchmarks/user_pairs.py --csv "$OUT/user_pairs_$mode.csv" \
      --cases add_one --arms "$ARMS" --pairs 40 --budget-s 400 $P 2>&1 | tee -a "$OUT/user_pairs_$mode.txt"
    ;;
  tpu)
    python3 -c "import jax; print(jax.devices())" 2>&1 | tail -1 | tee -a "$OUT/user_pairs_$mode.txt"
    t0=$(date +%s)
    timeout 300 python3 benchmarks/user_pairs.py --csv "$OUT/user_pairs_$mode.csv" \
      --cases add_one --pairs 30 --budget-s 200 $P 2>&1 | tee -a "$OUT/user_pairs_$mode.txt"
    left=$(( 400 - ($(date +%s) - t0) )); [ "$left" -lt 40 ] && left=40
    timeout $(( left + 120 )) python3 benchmarks/user_pairs.py --csv "$OUT/user_pairs_$mode.csv" \
      --cases main_job --pairs 24 --budget-s "$left" $P 2>&1 | tee -a "$OUT/user_pairs_$mode.txt"
    ;;
  deep)  # x+1 on the CPU: as_is beside deep_stack (the timed calls ~15 frames deep, as before 2026-12-07)
    export JAX_PLATFORMS=cpu
    timeout 900 python3 benchmarks/user_pairs.py --csv "$OUT/user_pairs_$mode.csv" \
      --cases add_one --arms as_is,deep_stack --pairs 24 --budget-s 800 $P 2>&1 | tee -a "$OUT/user_pairs_$mode.txt"
    ;;
  tpu_eager|tpu_fs|tpu_settle|tpu_kind|tpu_preload|tpu_import|tpu_stack|tpu_quick|tpu_prepare|tpu_samples|tpu_warm)  # two to four arms of one case on the chip, in the same rounds (each mode's question above)
    case "$mode" in
      tpu_eager) CASE=main_job ARMS=as_is,jit_only ;;
      tpu_fs) CASE=main_job ARMS=as_is,plain_fs ;;
      tpu_kind) CASE=compute_heavy ARMS=plain_fs,plain_fs_bare,plain_spawn ;;
      tpu_settle) CASE=add_one ARMS=as_is,no_short_settle ;;
      tpu_preload) CASE=main_job ARMS=as_is,no_preload ;;
      tpu_import) CASE=main_job ARMS=no_preload,no_preload_no_prepare ;;
      tpu_stack) CASE=add_one ARMS=as_is,deep_stack,user_timing ;;
      tpu_quick) CASE=add_one ARMS=as_is,no_prepare,user_timing ;;
      tpu_prepare) CASE=add_one ARMS=as_is,no_prepare ;;
      tpu_samples) CASE=add_one ARMS=as_is,quick_many,quick_5ms,user_timing ;;
      tpu_warm) CASE=add_one ARMS=as_is,floor_05,warmup_1 ;;
    esac
    python3 -c "import jax; print(jax.devices())" 2>&1 | tail -1 | tee -a "$OUT/user_pairs_$mode.txt"
    timeout "${TMO:-540}" python3 benchmarks/user_pairs.py --csv "$OUT/user_pairs_$mode.csv" \
      --cases "$CASE" --arms "$ARMS" --pairs 24 --budget-s "${BUDGET:-420}" $P 2>&1 | tee -a "$OUT/user_pairs_$mode.txt"
    ;;
  tpu_main)  # a main job is 6-12 processes that each open the chip: as many pairs as ~7 minutes allow
    python3 -c "import jax; print(jax.devices())" 2>&1 | tail -1 | tee -a "$OUT/user_pairs_$mode.txt"
    timeout 540 python3 benchmarks/user_pairs.py --csv "$OUT/user_pairs_$mode.csv" \
      --cases main_job --pairs 24 --budget-s 360 $P 2>&1 | tee -a "$OUT/user_pairs_$mode.txt"
    ;;
  *) echo "usage: bash benchmarks/user_pairs_device.sh cpu|arms|arms2|arms3|deep|tpu|tpu_eager|tpu_fs|tpu_settle|tpu_kind|tpu_preload|tpu_import|tpu_stack|tpu_quick|tpu_prepare|tpu_samples|tpu_warm|tpu_main"; exit 2 ;;
esac
echo "== all rounds of this mode, from $OUT/user_pairs_$mode.csv" | tee -a "$OUT/user_pairs_$mode.txt"
python3 benchmarks/user_pairs.py --table-from "$OUT/user_pairs_$mode.csv" 2>&1 | tee -a "$OUT/user_pairs_$mode.txt"
date -u | tee -a "$OUT/user_pairs_$mode.txt"
