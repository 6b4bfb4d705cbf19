"""jitexp.measure on function objects (closures, lambdas, __main__, equinox, optax), its Measurement, its mistakes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import jitexp
from helpers import read, run_cli
from jitexp import ConfigError, compose, run
from jitexp.analysis.stats import verdict
from jitexp.api import timing_presets
from jitexp.ipython import evaluate_call, split_line

QUICK = "quick"


def scaled(scale):
    def f(x, y):
        return jnp_sum(x * scale + y)

    return f


def jnp_sum(x):
    """48 elementwise ops and a sum: eager dispatches 49 ops where jit runs one fused kernel (certainly faster)."""
    import jax.numpy as jnp

    for _ in range(16):
        x = jnp.sin(x) * 0.5 + 0.25
    return jnp.sum(x)


def test_a_closure_gives_the_rows_a_cli_job_gives():
    x = np.linspace(0, 1, 64, dtype=np.float32)
    measured = jitexp.measure(scaled(2.0), x, x, timing=QUICK)
    cli = run(compose(["workload=add_one", "size=64", "timing=quick"]))
    assert measured.modes == ("eager", "jit") and measured.ok
    jit = measured.row("jit")
    assert jit["workload"] == "scaled.<locals>.f" and jit["size"] == 64 and jit["dtype"] == "float32"
    assert jit["matches_eager"] is True and jit["setup_s"] > 0 and jit["isolate"] == "process"
    # the same columns as the CLI's rows (the CLI adds config_hash when it writes; setup_s comes from a setup)
    short = {"steal_median", "steal_max", "run_queue_wait_median"}  # empty when too short to read (timing=quick)
    assert set(cli.by_mode("jit")) - set(jit) - short <= {"param_n"}
    assert set(jit) - set(cli.by_mode("jit")) - short <= {"setup_s"}
    parts = measured.first_call("jit")
    assert set(parts) == {"first_call_s", "trace_s", "lower_s", "compile_s", "execute_s"}
    # each phase is a compile event's duration inside the cold call, the rest is execute_s: every one was seen,
    # none counted twice (execute_s > 0), and the cold call compiled jit's program once
    assert all(parts[k] > 0 for k in ("trace_s", "lower_s", "compile_s", "execute_s")), parts
    assert jit["first_call_compiles"] == 1 and measured.row("eager")["first_call_compiles"] > 1
    # the verdict is the CI's (one quick process on a loaded CI machine may straddle 1: not asserted as "faster")
    assert jit["speedup_ci_low"] <= measured.speedup("jit") <= jit["speedup_ci_high"], measured
    assert measured.verdict("jit") == verdict(jit["speedup_ci_low"], jit["speedup_ci_high"]), measured
    assert repr(measured).startswith("scaled.<locals>.f f32[64] f32[64] float32 cpu: eager ")
    assert "<table>" in measured._repr_html_() and "jit" in measured._repr_html_()
    with pytest.raises(ValueError, match="eager has no speedup: it is the baseline mode"):
        measured.speedup("eager")


def test_the_cold_call_phases_are_the_compile_events_jax_fired_for_the_function():
    # In this process (isolate="none"), a listener of our own hears the same compile events as jitexp's:
    # the jit row's trace_s, lower_s and compile_s must be the durations JAX reported for this function's
    # trace, lowering and backend compile (each phase from its own event, not a wall-clock split).
    import jax
    import jax.monitoring

    name = "phases_probe_fn"
    heard: dict[str, list[float]] = {"trace": [], "lower": [], "compile": []}
    events = {
        "/jax/core/compile/jaxpr_trace_duration": ("trace", name),
        "/jax/core/compile/jaxpr_to_mlir_module_duration": ("lower", f"jit({name})"),
        "/jax/core/compile/backend_compile_duration": ("compile", f"jit({name})"),
    }

    def listen(event, duration, **kw):
        phase, fun = events.get(event, (None, None))
        if phase is not None and kw.get("fun_name") == fun:
            heard[phase].append(duration)

    jax.monitoring.register_event_duration_secs_listener(listen)  # JAX keeps it: it only hears this function

    def phases_probe_fn(x):
        return jax.numpy.sum(jax.numpy.tanh(x) * 2)

    assert phases_probe_fn.__name__ == name
    measured = jitexp.measure(phases_probe_fn, np.ones(64, np.float32), timing=QUICK, isolate="none", modes="jit")
    parts = measured.first_call("jit")
    assert all(heard.values()), heard
    for phase in ("trace", "lower", "compile"):
        assert parts[f"{phase}_s"] in heard[phase], (phase, parts, heard)
    assert parts["execute_s"] > 0 and measured.row("jit")["first_call_compiles"] == 1


def test_a_lambda_with_wrong_arguments_is_an_error_row_not_an_exception():
    x = np.ones(4, np.float32)
    measured = jitexp.measure(lambda a: a + 1, x, x, timing=QUICK, modes="jit")
    row = measured.row("jit")
    assert (row["status"], row["error_phase"], row["error_type"]) == ("error", "trace", "TypeError")
    assert "takes 1 positional argument but 2 were given" in row["error_message"]
    assert not measured.ok and measured.errors[0].startswith("jit failed in trace: TypeError:")
    with pytest.raises(ValueError, match="jit failed in trace"):
        measured.speedup("jit")


def test_an_equinox_module_with_filter_jit():
    eqx = pytest.importorskip("equinox")
    import jax
    import jax.numpy as jnp

    model = eqx.nn.MLP(8, 2, 16, 2, key=jax.random.key(0))
    measured = jitexp.measure(
        lambda m, x: jnp.sum(m(x) ** 2), model, jnp.ones(8), jit_fn=eqx.filter_jit, modes=["jit", "aot"], timing=QUICK
    )
    for row in measured.result.rows:
        assert row["status"] == "ok" and row["jit_fn"] == "equinox.filter_jit", row


def test_an_optax_train_step_with_carry_and_donation():
    optax = pytest.importorskip("optax")
    import jax
    import jax.numpy as jnp

    opt = optax.sgd(0.1)
    params = {"w": jnp.ones((8, 4)), "b": jnp.zeros(4)}

    def step(params, state, x):
        loss, grads = jax.value_and_grad(lambda p: jnp.sum(jnp.tanh(x @ p["w"] + p["b"])))(params)
        updates, state = opt.update(grads, state)
        return optax.apply_updates(params, updates), state, loss

    measured = jitexp.measure(
        step, params, opt.init(params), jnp.ones((2, 8)), carry={0: 0, 1: 1}, donate_argnums=[0, 1], timing=QUICK
    )
    jit = measured.row("jit")
    assert measured.ok and jit["matches_eager"] is True and jit["compiles_during_timing"] == 0
    assert jit["donation"].startswith("carried: output 0 -> argument 0, output 1 -> argument 1")
    assert jit["donate_argnums"] == "[0, 1]"


def test_a_typed_prng_key_argument_is_carried():
    import jax

    def split(key, x):
        key, sub = jax.random.split(key)
        return key, x * jax.random.bernoulli(sub, 0.5, x.shape)

    measured = jitexp.measure(split, jax.random.key(1), jax.numpy.ones(8), carry={0: 0}, modes="jit", timing=QUICK)
    assert measured.ok, measured.errors


@pytest.mark.slow
def test_main_scripts_and_stdin_measure_without_running_again_in_the_workers(tmp_path):
    # a script without a main guard, and the same from stdin: the workers must not re-run it
    script = textwrap.dedent("""
        import sys
        import numpy as np
        import jitexp

        print("module ran", flush=True)

        def loss(x, y):
            return ((x - y) ** 2).sum()

        m = jitexp.measure(loss, np.ones(16, np.float32), np.zeros(16, np.float32), timing="quick")
        assert m.ok, m.errors
        print("jax imported:", "jax" in sys.modules)
        print(m)
    """)
    (tmp_path / "script.py").write_text(script)
    for argv, stdin in (([sys.executable, "script.py"], None), ([sys.executable, "-"], script)):
        proc = subprocess.run(argv, input=stdin, cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.count("module ran") == 1, proc.stdout
        assert "jax imported: False" in proc.stdout and "loss f32[16] f32[16] float32 cpu: eager" in proc.stdout


def once(a):
    import jax.numpy as jnp

    return jnp.sum(jnp.tanh(a @ a))


def sixteen(a):
    import jax.numpy as jnp

    for _ in range(16):
        a = jnp.tanh(a @ a)
    return jnp.sum(a)


@pytest.mark.slow
def test_save_then_report_and_compare_work_unchanged(tmp_path):
    # four processes a side, the fewest at which the independent test can reach p < 0.05 (2 / C(8, 4)),
    # and sixteen times the work: the verdict is certain, each way
    timing = {**timing_presets()["quick"], "processes": 4, "max_processes": 4}
    x = np.ones((128, 128), np.float32)  # the matmuls, not the call overhead, set the time
    first = jitexp.measure(once, x, timing=timing, name="step")
    second = jitexp.measure(sixteen, x, timing=timing, name="step")
    for measured, folder in ((first, tmp_path / "a"), (second, tmp_path / "b")):
        measured.save(folder)
        assert {p.name for p in folder.iterdir()} >= {"results.csv", "samples.csv", "processes.csv"}
        assert (read(folder / "results.csv")["n_processes"] == 4).all()
    report = run_cli([str(tmp_path / "a")], cwd=tmp_path, name="jitexp-report")
    assert report.returncode == 0, report.stderr[-2000:]
    assert "step" in report.stdout and "eager" in report.stdout
    compared = run_cli([str(tmp_path / "a"), str(tmp_path / "b"), "--no-plot"], cwd=tmp_path, name="jitexp-compare")
    assert compared.returncode == 1, compared.stdout[-3000:] + compared.stderr[-2000:]
    table = read(tmp_path / "b" / "compare" / "compare.csv").set_index(["mode", "metric"])
    assert set(table.index) == {(m, k) for m in ("eager", "jit") for k in ("steady", "first_call", "compile")}
    for mode in ("eager", "jit"):
        steady = table.loc[(mode, "steady")]
        assert steady["verdict"] == "slower" and steady["ratio"] > 3, table
        assert (steady["n_base"], steady["n_new"]) == (4, 4) and steady["p_value"] < 0.05
    assert "cannot tell" not in compared.stdout
    # the other way round it is faster, and a steady-state gate passes (eager's cold call compiles the same three
    # primitives in both runs: an A/A pair, whose cold figures are not asserted)
    back = run_cli(
        [str(tmp_path / "b"), str(tmp_path / "a"), "--no-plot", "--fail-on=steady"], cwd=tmp_path, name="jitexp-compare"
    )
    assert back.returncode == 0, back.stdout[-3000:] + back.stderr[-2000:]
    table = read(tmp_path / "a" / "compare" / "compare.csv").set_index(["mode", "metric"])
    assert (table.loc[[("eager", "steady"), ("jit", "steady")], "verdict"] == "faster").all(), table


def test_isolate_none_measures_what_cannot_be_pickled():
    lock = threading.Lock()

    def locked(x):
        with lock:
            return x * 2

    with pytest.raises(TypeError, match=r"^fn cannot be pickled .*isolate=\"none\" measures it in this process"):
        jitexp.measure(locked, np.ones(4, np.float32), timing=QUICK)
    with pytest.raises(TypeError, match=r"^argument 1 cannot be pickled to reach a worker process \(TypeError: "):
        jitexp.measure(lambda x, _: x, np.ones(4, np.float32), threading.Lock(), timing=QUICK)
    measured = jitexp.measure(locked, np.ones(4, np.float32), timing=QUICK, isolate="none", modes="eager")
    assert measured.ok and measured.row("eager")["isolate"] == "none"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: jitexp.measure(3), "fn=3 is invalid; a callable"),
        (
            lambda: jitexp.measure(abs, 1, modes=("eager", "jot")),
            "modes='jot' is invalid; valid choices: eager, jit, aot",
        ),
        (
            lambda: jitexp.measure(abs, 1, timing="fast"),
            "timing='fast' is invalid; valid choices: default, quick, rigorous",
        ),
        (
            lambda: jitexp.measure(abs, 1, timing={"warmpu": 2}),
            "timing.warmpu=2 is invalid; no such timing key; valid keys: warmup,",
        ),
        (lambda: jitexp.measure(abs, 1, timing={"processes": 0}), "timing.processes=0 is invalid; must be > 0"),
        (lambda: jitexp.measure(abs, 1, isolate="thread"), "isolate='thread' is invalid; valid choices: process, none"),
        (lambda: jitexp.measure(abs, 1, device="gpu:x"), "device='gpu:x' is invalid"),
        (lambda: jitexp.measure(abs, 1, static_argnames=["1x"]), "static_argnames='1x' is invalid"),
    ],
)
def test_mistakes_are_one_line_value_errors_naming_the_choices(call, message):
    with pytest.raises(ValueError) as caught:
        call()
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_the_memory_guard_counts_the_argument_bytes(monkeypatch):
    monkeypatch.setattr("jitexp.config.sizing.available_memory", lambda: 10 * 2**20)  # 10 MiB
    with pytest.raises(
        ConfigError,
        match=r"args is invalid; the arguments' arrays \(0.0 GiB, 2 mode\(s\) and a check\) need about 0.0 GiB",
    ):
        jitexp.measure(np.sum, np.ones(2**20, np.float32), timing=QUICK)  # 4 MiB a set, 3 sets


def test_the_magic_reads_options_and_the_call_like_timeit():
    assert split_line("-m jit,aot -t quick f(x, y=2)") == ({"modes": "jit,aot", "timing": "quick"}, "f(x, y=2)")
    namespace = {"f": max, "x": 1, "rest": (2, 3), "kw": {"key": abs}}
    assert evaluate_call("f(x, *rest, **kw)", namespace) == (max, (1, 2, 3), {"key": abs})
    with pytest.raises(ValueError, match="is not a call"):
        evaluate_call("x + 1", namespace)
    with pytest.raises(ValueError, match="unknown or incomplete option '-q'") as bad:
        split_line("-q 3 f(x)")
    assert "\n" not in str(bad.value)  # one line
    with pytest.raises(ValueError, match="no call to measure"):
        split_line("-m jit")


def test_importing_jitexp_and_its_api_imports_no_jax():
    code = "import sys, jitexp, jitexp.api, jitexp.pytest_plugin, jitexp.ipython; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    assert callable(jitexp.load_ipython_extension) and jitexp.Measurement.__name__ == "Measurement"


def test_the_pytest_plugin_loads_without_pandas():
    # a pytest11 entry point loads in every pytest session on the machine: nothing heavier than pytest and NumPy
    code = "import sys, jitexp.pytest_plugin; print('pandas' in sys.modules, 'jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
