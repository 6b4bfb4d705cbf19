"""The runner through its Python API (no Hydra at run time), each job in this process (isolate=none): rows,
phases, errors, checks. What needs fresh worker processes is in tests/e2e/test_runner_processes.py."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from jitexp import ConfigError, compose, run
from jitexp.store.schema import COLLECTIVES, COLUMNS, DISK_CACHE, OUTCOME, PAIRED, PROFILE
from jitexp.worker.jaxinfo import jax_flag

QUICK = ["timing=quick", "isolate=none"]


def job(*overrides: str):
    return run(compose([*QUICK, *overrides]))


@pytest.mark.parametrize("mode", ["eager", "jit", "aot"])
def test_each_mode_measures_compute_heavy(mode):
    result = job(f"mode={mode}", "size=32", "calls=3")
    row = result.row
    assert row["status"] == "ok", row
    # absent on a lone CPU job: a paired baseline, a NumPy twin, a cache directory, donation, a GPU allocator
    alone = (
        set(OUTCOME)
        | set(PAIRED)
        | set(DISK_CACHE)
        | set(PROFILE)  # profile=true only
        | {
            "config_hash",
            "explanation",
            "explanation_detail",
            "donation",
            "device_peak_bytes",
            "setup_s",
            "attribution_error",
            "matches_numpy",
            "max_abs_err_vs_numpy",
            "max_rel_err_vs_numpy",
            "check_vs_numpy",
            "numpy_blas_threads",  # mode numpy only
            "numpy_one_thread_s",
            "check_vs_eager",  # empty when the outputs match
            "output_sharding",  # with a mesh only
            "tpu_premapped_buffer_bytes",  # on a TPU only
            "nominal_flops_per_s",  # a device kind with a known nominal peak only (a TPU's)
            "nominal_bytes_per_s",
        }
    )
    compiled_only = {
        "flops",
        "transcendentals",
        "bytes_accessed",
        "gflops_per_s",
        "gbytes_per_s",
        "argument_size_bytes",
        "output_size_bytes",
        "temp_size_bytes",
        "alias_size_bytes",
        "generated_code_size_bytes",
        "peak_memory_bytes",
        "xla_kernels",
        "xla_fusions",
        "arithmetic_intensity",
        "max_abs_err_vs_eager",
        "max_rel_err_vs_eager",
        "matches_eager",
        *COLLECTIVES,  # counted in the compiled HLO: 0 on one device
        # device time: process 0 traces the compiled modes' steady loops (device_time=true)
        "device_s",
        "host_overhead_s",
        "device_time_calls",
        "peak_flops_share",
        "peak_bytes_share",
        "device_peak_flops_share",
        "device_peak_bytes_share",
        "device_trace_wall_s",
        "flops_ceiling",
        "bytes_ceiling",
    }
    # empty when a process's rounds lasted under 10 jiffies (timing=quick), present when they lasted longer (a
    # loaded machine); kept_vs_all_processes only when a process was replaced under steal
    sometimes = {"steal_median", "steal_max", "run_queue_wait_median", "kept_vs_all_processes"}
    sometimes |= {"above_ceiling"}  # a share above its ceiling (a small CPU program's bytes in cache) only
    assert set(COLUMNS) - set(row) - sometimes == (alone - {"status"}) | (compiled_only if mode == "eager" else set())
    assert row["eager_ops"] == 6 and row["peak_rss_growth_bytes"] >= 0
    assert row["ci95_low_s"] <= row["median_s"] <= row["ci95_high_s"]
    assert row["n_samples"] == len(result.samples) >= 3
    assert row["compiles_during_timing"] == 0
    assert [c["call"] for c in result.calls] == [1, 2, 3]
    assert result.calls[0]["compiles"] >= 1 and result.calls[1]["compiles"] == 0
    assert row["platform"] == "cpu" and row["jax_version"] == jax.__version__
    assert row["finite_output"] is True and (row["n_processes"], row["ci_scope"]) == (1, "within_process")
    assert row["first_call_s"] == pytest.approx(
        row["trace_s"] + row["lower_s"] + row["compile_s"] + row["execute_s"], rel=1e-9
    )
    assert row["compile_s"] > 0 and row["execute_s"] > 0  # eager too: it compiles every primitive
    if mode != "eager":
        assert row["matches_eager"] is True
        assert row["flops"] >= 2 * 32**3  # the matmul alone
        assert min(row["trace_s"], row["lower_s"]) > 0
        assert row["first_call_s"] > row["median_s"]


def test_in_process_jobs_clear_caches_so_every_job_compiles_cold():
    first, second = (job("mode=jit", "isolate=none", "size=16", "calls=2", f"seed={s}") for s in (0, 1))
    for result in (first, second):
        assert result.calls[0]["compiles"] >= 1  # a warm cache would report 0 here
        assert result.row["isolate"] == "none" and result.row["ci_scope"] == "within_process"


def test_python_if_under_jit_is_an_error_row():
    row = job("workload=conditional", "size=3", "mode=jit").row
    assert row["status"] == "error"
    assert row["error_phase"] == "trace"
    assert row["error_type"] == "jax.errors.TracerBoolConversionError"
    assert "lax.cond" in row["hint"]
    assert row["param_threshold"] == 10.0


@pytest.mark.parametrize("threshold, expected", [(5.0, [28.0, 28.0, 28.0]), (10.0, [0.5, 1.0, 1.5])])
def test_lax_cond_takes_the_right_branch_under_jit(threshold, expected):
    from jitexp import workloads
    from jitexp.worker import workload

    cfg = compose([*QUICK, "workload=conditional_lax", "size=3", f"workload.params.threshold={threshold}"])
    args = workload.build_args(cfg, jax.devices("cpu")[0])
    assert jax.jit(workloads.conditional_lax)(*args).tolist() == expected
    row = run(cfg).by_mode("jit")
    assert row["status"] == "ok" and row["matches_eager"] is True


def test_traced_loop_count_fails_and_static_one_works():
    traced = job("mode=jit", "workload=apply_n_times", "size=8", "mode.static_argnums=[]").row
    assert traced["status"] == "error"
    assert traced["error_type"] == "jax.errors.TracerIntegerConversionError"
    assert "static" in traced["hint"]
    static = job("mode=jit", "workload=apply_n_times", "size=8", "workload.params.n=2").row
    assert static["status"] == "ok" and static["static_argnums"] == "[1]"


def test_fori_loop_needs_no_static_argument():
    row = job("workload=apply_n_times_fori", "size=8", "mode=aot").row
    assert row["status"] == "ok" and row["matches_eager"] is True


def test_float64_turns_on_x64_for_the_job_only():
    row = job("mode=jit", "workload=matmul", "size=8", "dtype=float64", "isolate=none").row
    assert row["status"] == "ok" and row["x64"] is True
    assert jax_flag("jax_enable_x64") is False
    assert job("mode=jit", "workload=matmul", "size=8").row["x64"] is False


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_low_precision_dtypes_run(dtype):
    row = job("mode=jit", "workload=elementwise_chain", "size=64", f"dtype={dtype}").row
    assert row["status"] == "ok" and row["matches_eager"] is True


def test_failure_in_execute_phase_is_a_row(tmp_path, monkeypatch):
    import sys

    module = tmp_path / "userfns.py"
    module.write_text("def boom(x):\n    raise RuntimeError('kaput\\nsecond line')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("userfns", None)
    row = job("workload=custom", "workload.fn=userfns.boom", "workload.args=[{shape:[4]}]", "mode=eager").row
    assert (row["status"], row["error_phase"], row["error_type"], row["error_message"]) == (
        "error",
        "execute",
        "RuntimeError",
        "kaput",
    )


def test_unhashable_static_argument_is_a_row():
    row = job(
        "mode=jit",
        "workload=custom",
        "workload.fn=jitexp.workloads.apply_n_times",
        "workload.args=[{shape:[4,4]},{value:{a:1}}]",
        "mode.static_argnums=[1]",
    ).row
    assert row["status"] == "error" and row["error_phase"] == "trace"
    assert row["error_type"] == "ValueError" and "hashable" in row["hint"]


@pytest.mark.parametrize(
    "overrides, key",
    [
        (["workload=custom", "workload.fn=no_such_pkg.fn", "workload.args=[]"], "workload.fn"),
        (["workload=custom", "workload.fn=jitexp.workloads.nope", "workload.args=[]"], "workload.fn"),
        (["device=gpu"], "device.platform"),
        (["device.index=7"], "device.index"),
    ],
)
def test_config_mistakes_found_at_run_time_raise(overrides, key):
    with pytest.raises(ConfigError) as info:
        job(*overrides)
    assert str(info.value).startswith(f"{key}=") and "\n" not in str(info.value)


def test_compare_treats_one_sided_nan_as_a_mismatch():

    from jitexp.worker.checks import output_error as compare

    assert compare(np.array([1.0, np.nan]), np.array([1.0, 2.0]), "float32")["matches_eager"] is False
    same_nan = compare(np.array([1.0, np.nan]), np.array([1.0, np.nan]), "float32")
    assert same_nan["matches_eager"] is True and same_nan["max_abs_err_vs_eager"] == 0.0
    assert compare(np.array([1j]), np.array([1.0 + 1j]), "float32")["max_abs_err_vs_eager"] == 1.0
    assert compare(np.array([1j]), np.array([-1j]), "float32")["matches_eager"] is False


def test_traced_literals_are_typed_device_scalars_and_statics_stay_python():
    from jitexp.worker import workload

    dev = jax.devices("cpu")[0]
    x, threshold = workload.build_args(compose(["workload=conditional_lax", "size=3"]), dev)
    assert isinstance(threshold, jax.Array) and threshold.dtype == jax.numpy.float32
    assert not threshold.weak_type and threshold.devices() == {dev}
    _, n = workload.build_args(compose(["workload=apply_n_times", "size=3"]), dev)
    assert n == 3 and type(n) is int  # static: hashable Python value
    _, n = workload.build_args(compose(["workload=apply_n_times_fori", "size=3"]), dev)
    assert n.dtype == jax.numpy.int32


def test_a_module_that_fails_to_import_is_a_config_error(tmp_path, monkeypatch):
    (tmp_path / "brokenmod.py").write_text("def f(:\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        ConfigError, match=r"^workload.fn='brokenmod.f' is invalid; importing 'brokenmod' failed: SyntaxError"
    ):
        job("workload=custom", "workload.fn=brokenmod.f", "workload.args=[]")
    with pytest.raises(ConfigError, match="import path"):
        job("workload=custom", "workload.fn=.matmul", "workload.args=[]")


def test_inputs_are_deterministic_in_the_seed():
    from jitexp.worker import workload

    dev = jax.devices("cpu")[0]
    a = workload.build_args(compose(["size=4", "seed=3"]), dev)
    b = workload.build_args(compose(["size=4", "seed=3"]), dev)
    c = workload.build_args(compose(["size=4", "seed=4"]), dev)
    assert (a[0] == b[0]).all() and not (a[0] == c[0]).all()
    assert not (a[0] == a[1]).all()  # each argument draws its own stream
    assert a[0].dtype == jax.numpy.float32 and a[0].devices() == {dev}


def test_numpy_mode_pairs_with_eager_and_jit_in_one_job():
    result = job("workload=matmul", "size=16", "mode=[eager,jit,numpy]", "workload.numpy_fn=numpy.matmul")
    eager, jit, numpy_row = (result.by_mode(m) for m in ("eager", "jit", "numpy"))
    assert {r["status"] for r in result.rows} == {"ok"}
    assert {s["mode"] for s in result.samples} == {"eager", "jit", "numpy"}
    assert numpy_row["compile_s"] == 0 and numpy_row["first_call_compiles"] == 0  # no device, no XLA
    assert numpy_row["matches_eager"] is True and jit["matches_numpy"] is True and eager["matches_numpy"] is True
    assert numpy_row["baseline_mode"] == "eager" and "speedup_vs_numpy" not in numpy_row
    for row in (eager, jit):
        assert row["speedup_vs_numpy"] == pytest.approx(numpy_row["median_s"] / row["median_s"])
        assert row["speedup_vs_numpy_ci_low"] <= row["speedup_vs_numpy"] <= row["speedup_vs_numpy_ci_high"]
        # a 16x16 matmul: NumPy's call takes ~1 us, JAX's dispatch alone tens: eager and jit are both slower than
        # the twin, ~40x on the 2-core VM (speedup_vs_numpy 0.02-0.03): a verdict noise cannot flip
        assert row["verdict_vs_numpy"] == "slower" and row["speedup_vs_numpy"] < 0.5, row


def test_numpy_mode_needs_a_twin_and_is_dropped_beside_other_modes():
    # every built-in has a twin (jitexp.workloads.twins): take compute_heavy's away
    with pytest.raises(ConfigError, match=r"^mode='numpy' is invalid; workload compute_heavy declares no numpy_fn"):
        job("size=16", "mode=numpy", "workload.numpy_fn=null")
    assert [r["mode"] for r in job("size=16", "mode=[jit,numpy]", "workload.numpy_fn=null").rows] == ["jit"]
    with pytest.raises(
        ConfigError, match=r"^workload.numpy_fn='numpy.nosuch' is invalid; module 'numpy' has no callable"
    ):
        job("workload=matmul", "size=16", "mode=numpy", "workload.numpy_fn=numpy.nosuch")


def test_compiled_rows_carry_attribution_and_an_explanation():
    result = job("workload=elementwise_chain", "size=1000")
    jit, eager = result.by_mode("jit"), result.by_mode("eager")
    assert (jit["eager_ops"], jit["xla_kernels"], jit["xla_fusions"]) == (49, 1, 1)
    assert jit["arithmetic_intensity"] == pytest.approx(jit["flops"] / jit["bytes_accessed"])
    assert eager["eager_ops"] == 49 and eager["op_dispatch_s"] > 0 and "xla_kernels" not in eager
    assert jit["explanation"] in ("dispatch-bound", "Python-bound", "fusion-bound", "mixed")
    assert "49 ops" in jit["explanation_detail"]


def _sequence(result, mode="jit"):
    return [c for c in result.calls if c["probe"] == "sequence" and c["mode"] == mode]


def test_sequence_probe_shows_compile_compile_hit_with_reasons():
    result = job("experiment=seed_static_args", "mode=[jit,aot]")
    jit = _sequence(result)
    assert [c["variant"] for c in jit] == ["n=2", "n=3", "n=2"]
    assert [c["compiled"] for c in jit] == [True, True, False]
    assert jit[0]["miss_reason"] == "first call"
    assert jit[1]["miss_reason"] == "different value of static argument n (3, before 2)"
    assert "miss_reason" not in jit[2] and jit[1]["compile_s"] > 0 and jit[2]["compile_s"] == 0
    aot = _sequence(result, "aot")  # a Compiled object cannot take a new static value
    assert [c["status"] for c in aot] == ["ok", "error", "ok"] and "fixed to the static arguments" in aot[1][
        "error_message"
    ]


def test_sequence_probe_names_a_weak_type_retrace_and_a_traced_loop_bound_fails_per_call():
    result = job("workload=conditional_lax", "size=8", "mode=jit", "sequence=[{},{python_scalars:[1]},{size:16}]")
    first, weak, bigger = _sequence(result)
    assert first["variant"] == "as configured" and first["compiled"] is True
    assert weak["compiled"] is True and "weak_type=True" in weak["miss_reason"] and "weakly typed" in weak["hint"]
    assert bigger["miss_reason"] == "different input types: at x, now f32[16] and before f32[8]"
    failed = _sequence(job("experiment=seed_static_args", "mode=jit", "mode.static_argnums=[]"))
    assert {c["error_type"] for c in failed} == {"jax.errors.TracerIntegerConversionError"} and failed[0]["hint"]


@pytest.mark.parametrize(
    "sequence, message",
    [
        ("[{m: 2}]", r"^sequence\[0\].m=2 is invalid; no such key; sequence\[0\] has dtype, n, python_scalars, size"),
        ("[{n: -1}]", r"^sequence\[0\].n=-1 is invalid; must be >= 0"),
        (
            "[{python_scalars: [0]}]",
            r"^sequence\[0\].python_scalars=\[0\] is invalid; a list of literal argument positions: \[1\]",
        ),
        ("[3]", r"^sequence='\[3\]' is invalid; must be a list of mappings"),
    ],
)
def test_sequence_mistakes_are_one_line(sequence, message):
    with pytest.raises(ConfigError, match=message):
        compose(["workload=apply_n_times", f"sequence={sequence}"])


def test_donation_feeds_outputs_back_and_says_so_and_unusable_donation_is_reported():
    result = job("workload=elementwise_chain", "size=64", "mode=[eager,jit,aot]", "mode.donate_argnums=[0]", "calls=3")
    for mode in ("jit", "aot"):
        row = result.by_mode(mode)
        assert row["status"] == "ok" and row["donate_argnums"] == "[0]"
        assert "previous call's output as its input" in row["donation"] and row["alias_size_bytes"] == 64 * 4
        assert row["matches_eager"] is True  # checked on the first call's output, before inputs evolve
    assert result.by_mode("eager")["status"] == "ok" and "donation" not in result.by_mode("eager")
    with pytest.warns(UserWarning, match=r"donated buffers were not usable: float32\[16,16\]"):  # JAX agrees
        unusable = job("size=16", "mode=jit", "mode.donate_argnums=[0]").row  # compute_heavy returns a scalar
    assert unusable["status"] == "ok" and "not donated: no output has the same shape" in unusable["donation"]
    with pytest.raises(
        ConfigError, match=r"^mode.donate_argnums=\[1\] is invalid; positions of traced array arguments: \[0\]"
    ):
        compose(["workload=apply_n_times", "mode.donate_argnums=[1]"])


def test_compiler_options_reach_the_compile_and_the_row():
    row = job(
        "workload=elementwise_chain", "size=16", "mode=jit", "+mode.compiler_options.xla_backend_optimization_level=0"
    ).row
    assert row["status"] == "ok" and row["compiler_options"] == "xla_backend_optimization_level=0"
    bad = job("workload=elementwise_chain", "size=16", "mode=jit", "+mode.compiler_options.xla_nonsense=1").row
    assert bad["status"] == "error" and "No such compile option: 'xla_nonsense'" in bad["error_message"]
    with pytest.raises(ConfigError, match=r"a new entry needs a leading \+: \+mode.compiler_options.xla_x=1"):
        compose(["mode.compiler_options.xla_x=1"])


def test_a_mode_failing_on_one_rank_of_a_distributed_job_ends_the_step_instead_of_being_dropped():
    from jitexp.config import ExperimentConfig
    from jitexp.config.schema import DistributedConfig
    from jitexp.errors import PhaseError
    from jitexp.worker.distributed import dropped

    exc = PhaseError("check", ValueError("only on this rank"))
    assert dropped(ExperimentConfig(), exc).error.line().endswith("only on this rank")  # one process: its error row
    with pytest.raises(PhaseError):  # checks, profiles and cold calls alike: the others would wait in its collectives
        dropped(ExperimentConfig(distributed=DistributedConfig(processes=2)), exc)


def test_the_cache_probes_cold_call_failing_on_a_rank_ends_the_step_and_in_one_process_is_its_error_row():
    """worker.measure.cache_calls (cache_probe=true) as the rounds: a mode failing on one rank of a distributed job is
    not dropped there alone (the other ranks would wait in its collectives until the timeout)."""
    from jitexp.config import ExperimentConfig
    from jitexp.config.schema import DistributedConfig
    from jitexp.errors import PhaseError
    from jitexp.records import Task
    from jitexp.worker import workload
    from jitexp.worker.inputs import Handed
    from jitexp.worker.measure import cache_calls

    def fails(x):
        raise ValueError("only on this rank")

    def probe(cfg):
        out = {}
        w = workload.Workload("fails", fails, (np.float32(1.0),), ())
        cache_calls(Task(cfg, modes=("jit",)), Handed(w), out, inputs=None)
        return out

    assert "only on this rank" in probe(ExperimentConfig())["jit"].error.line()  # one process: its error row
    with pytest.raises(PhaseError, match="only on this rank"):
        probe(ExperimentConfig(distributed=DistributedConfig(processes=2)))
