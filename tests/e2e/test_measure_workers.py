"""jitexp.measure on function objects sent to worker processes (a closure, a __main__ script and stdin), and its
Measurement saved then read by the report and compare. What runs in this process (equinox, optax, typed PRNG keys,
the cold call's phases, mistakes) is in tests/inprocess/test_measure_api.py."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jitexp
from helpers import read
from jitexp import compose, run
from jitexp.api import timing_presets
from jitexp.report.compare import cli as compare_cli
from jitexp.report.run import build

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
    # device time: a CPU program small enough to run inline on the calling thread has none (add_one at 64 elements;
    # the closure's program of two inputs runs on XLA's client thread): the CLI's row says why in `unavailable`
    device_time = {"device_s", "host_overhead_s", "device_peak_flops_share", "device_peak_bytes_share"}
    assert set(jit) - set(cli.by_mode("jit")) - short <= {"setup_s", *device_time}
    parts = measured.first_call("jit")
    assert set(parts) == {"first_call_s", "trace_s", "lower_s", "compile_s", "execute_s"}
    # each phase is a compile event's duration inside the cold call, the rest is execute_s: every one was seen,
    # none counted twice (execute_s > 0), and the cold call compiled jit's program once
    assert all(parts[k] > 0 for k in ("trace_s", "lower_s", "compile_s", "execute_s")), parts
    assert jit["first_call_compiles"] == 1 and measured.row("eager")["first_call_compiles"] > 1
    # one quick process's interval describes that process only, and contains its estimate
    assert jit["ci_scope"] == "within_process" and jit["n_processes"] == 1
    assert jit["speedup_ci_low"] <= measured.speedup("jit") <= jit["speedup_ci_high"], measured
    # Its verdict is a timing noise can flip (a 10x jit speedup measured 0.24x once on the loaded 2-core VM: jit's
    # calls wait on XLA's threads for a core). Two processes give the verdict known whatever the timings: no 95%
    # interval below six process pairs, so cannot tell, with the interval (0, inf)
    two = jitexp.measure(scaled(2.0), x, x, timing={**timing_presets()[QUICK], "processes": 2, "max_processes": 2})
    assert two.verdict("jit") == "cannot tell (fewer than 6 processes for a 95% interval)", two
    assert (two.row("jit")["speedup_ci_low"], two.row("jit")["speedup_ci_high"]) == (0, float("inf"))
    assert two.row("jit")["n_processes"] == 2 and two.row("jit")["ci_scope"] == "between_processes"
    assert repr(measured).startswith("scaled.<locals>.f f32[64] f32[64] float32 cpu: eager ")
    assert "<table>" in measured._repr_html_() and "jit" in measured._repr_html_()
    with pytest.raises(ValueError, match="eager has no speedup: it is the baseline mode"):
        measured.speedup("eager")


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
def test_save_then_report_and_compare_work_unchanged(tmp_path, capsys):
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
    # the report and compare commands' own entry points, in this process, on the saved folders
    assert build.main([str(tmp_path / "a")]) == 0
    printed = capsys.readouterr().out
    assert "step" in printed and "eager" in printed
    assert compare_cli.main([str(tmp_path / "a"), str(tmp_path / "b"), "--no-plot"]) == 1
    table = read(tmp_path / "b" / "compare" / "compare.csv").set_index(["mode", "metric"])
    assert set(table.index) == {(m, k) for m in ("eager", "jit") for k in ("steady", "first_call", "compile")}
    for mode in ("eager", "jit"):
        steady = table.loc[(mode, "steady")]
        assert steady["verdict"] == "slower" and steady["ratio"] > 3, table
        assert (steady["n_base"], steady["n_new"]) == (4, 4) and steady["p_value"] < 0.05
    assert "cannot tell" not in capsys.readouterr().out
    # the other way round it is faster, and a steady-state gate passes (eager's cold call compiles the same three
    # primitives in both runs: an A/A pair, whose cold figures are not asserted)
    assert compare_cli.main([str(tmp_path / "b"), str(tmp_path / "a"), "--no-plot", "--fail-on=steady"]) == 0
    table = read(tmp_path / "a" / "compare" / "compare.csv").set_index(["mode", "metric"])
    assert (table.loc[[("eager", "steady"), ("jit", "steady")], "verdict"] == "faster").all(), table
