"""Issue 51 through the preflight, the command lines tests/unit/test_inputs_used.py leaves to this layer for their
cost (a Hydra compose each, a sweep's several): the one line of each interpolation mistake, the sweep folder that
holds results, sweep points that are one job, every key a job would not use (a table) and those it uses, the rows'
dtype label. No JAX: the preflight imports no function here (no_arity). The rules behind them, without Hydra:
tests/unit/test_usage.py and test_convert.py; one command line per rule family: tests/unit/test_inputs_used.py."""

from __future__ import annotations

import pytest

from jitexp.engine import preflight
from unit.test_inputs_used import CUSTOM, ONE_ARG, refusal


@pytest.fixture
def no_arity(monkeypatch):
    """The preflight without importing the function (and JAX, for jit_fn): these checks need neither."""
    monkeypatch.setattr(preflight, "check_arity", lambda exp: None)


# ---- item 5: an omegaconf error on a user's input is one line, never a traceback ----------------------------------


def test_an_interpolation_to_a_missing_key_on_the_command_line_names_the_key_and_the_close_one():
    assert refusal(
        [
            "workload=custom",
            "workload.fn=mine.f",
            "+workload.params.scale=2.0",
            "workload.args=[{value: '${workload.params.scael}'}]",
        ]
    ) == (
        "workload.args[0].value='${workload.params.scael}' is invalid; refers to workload.params.scael, "
        "which does not exist; did you mean workload.params.scale?"
    )


def test_an_interpolation_to_a_key_an_override_deleted_names_the_override():
    assert refusal(["workload=apply_n_times", "~workload.params.n"]) == (
        "workload.args[1].value='${workload.params.n}' is invalid; refers to workload.params.n, which "
        "~workload.params.n deleted; keep workload.params.n, or set workload.args[1].value too"
    )


def test_a_resolver_that_fails_is_one_line_naming_the_key():
    message = refusal(["workload=custom", "workload.fn=mine.f", "workload.args=[{value: '${oc.env:JITEXP_NO_SUCH}'}]"])
    assert message.startswith("workload.args[0].value='${oc.env:JITEXP_NO_SUCH}' is invalid; cannot be resolved: ")
    assert "JITEXP_NO_SUCH" in message.partition("cannot be resolved")[2]


# ---- item 3: nothing overwritten, nothing merged -----------------------------------------------------------------


def test_a_sweep_into_a_folder_that_holds_results_is_refused_unless_resume_or_overwrite(tmp_path, no_arity):
    out = tmp_path / "sweep"
    for job in ("0", "1", "2", "3"):
        (out / job).mkdir(parents=True)
        (out / job / "results.csv").write_text("workload\nf\n")
    (out / "jobs.csv").write_text("job_num,overrides\n")
    argv = ["-m", *CUSTOM, "size=4,8", f"hydra.sweep.dir={out}"]
    assert refusal(argv) == (
        f"hydra.sweep.dir='{out}' is invalid; already holds the results of an earlier run (jobs.csv, 0/results.csv, "
        "1/results.csv, ... (2 more)); write resume=true to keep its jobs complete for this config, overwrite=true "
        "to replace them, or another hydra.sweep.dir"
    )
    # resume=true would measure job #0 again over rows it cannot tell are of its config (issue 57: nothing lost)
    assert refusal([*argv, "resume=true"]).startswith(
        f"hydra.sweep.dir='{out}' is invalid; resume=true, but its job #0 is another config (no overrides, with no "
        "config_hash to compare, where this sweep's #0 has "
    )
    assert len(preflight.check([*argv, "overwrite=true"])) == 2


@pytest.mark.parametrize(
    ("sweep", "key", "value", "points"),
    [
        (["size=64,8,64"], "size", "64,8,64", "#0 (size=64 ) and #2 (size=64 )"),
        (
            ["mode=[eager,jit],[jit,eager]"],
            "mode",
            "[eager,jit],[jit,eager]",
            "#0 (mode=[eager,jit] ) and #1 (mode=[jit,eager] )",
        ),
    ],
)
def test_sweep_points_that_are_the_same_job_are_refused_before_the_sweep(sweep, key, value, points, no_arity):
    message = refusal(["-m", *CUSTOM[:3], *sweep])
    expected_points = points.replace(" )", ")")
    assert message == (
        f"{key}={value!r} is invalid; sweep points {expected_points} are the same job; give each point once (to "
        "measure it again, run it again, or raise timing.processes)"
    )


def test_sweep_points_that_differ_are_kept(no_arity):
    assert len(preflight.check(["-m", *CUSTOM, "size=64,65", "seed=0,1"])) == 4


# ---- item 4: the user's configs win, or the clash is one line ----------------------------------------------------


def test_a_users_file_with_a_built_in_s_name_that_the_job_does_not_use_is_fine(tmp_path, monkeypatch, no_arity):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "conf" / "workload").mkdir(parents=True)
    (tmp_path / "conf" / "workload" / "matmul.yaml").write_text("fn: mine.f\nargs: [{shape: [4]}]\n")
    (tmp_path / "conf" / "workload" / "mine.yaml").write_text("fn: mine.f\nargs: [{shape: [4]}]\n")
    [job] = preflight.check(["--config-dir", "conf", "workload=mine", "timing=quick"])
    assert job.workload.fn == "mine.f"


# ---- item 1: every key the user set is used or refused -----------------------------------------------------------

# (command line, the one line); each key set to a value the chosen workload and mode cannot use
UNUSED = [
    (
        ["workload=apply_n_times", "+workload.params.m=3"],
        "workload.params.m=3 is invalid; no argument of jitexp.workloads.apply_n_times refers to it "
        "(${workload.params.m}), so it would only label the rows; drop it, or use it in workload.args or "
        "workload.kwargs",
    ),
    (
        [
            *ONE_ARG,
            "+workload.params.features=256",
            "+workload.params.feature=128",
            "workload.args=[{shape:[${workload.params.features}]}]",
        ],
        "workload.params.feature=128 is invalid; did you mean workload.params.features? no argument of mine.f refers "
        "to it (${workload.params.feature}), so it would only label the rows; drop it, or use it in workload.args or "
        "workload.kwargs",
    ),
    (
        [*ONE_ARG, "workload.args=[{shape:[128]}]", "size=64"],
        "size=64 is invalid; no argument of mine.f refers to ${size} (their shapes are fixed), so it would only label "
        "the rows; drop it, or write the shapes in terms of it, e.g. workload.args=[{shape:[${size}]}]",
    ),
    (
        [*ONE_ARG, "mode.jit_fn=jax.checkpoint", "workload.args=[{shape:[${size}]}]"],
        "mode.jit_fn='jax.checkpoint' is invalid; is not a jit transformation: the jit and aot rows would time "
        "jax.checkpoint(fn), uncompiled; write jax.jit, equinox.filter_jit or flax.nnx.jit, and apply other "
        "transformations inside workload.fn",
    ),
    (
        ["workload=add_one", "mode=eager", "mode.donate_argnums=[0]"],
        "mode.donate_argnums=[0] is invalid; applies to the compiled modes (jit, aot) and mode=eager has none; "
        "measure a compiled mode beside it (mode=[eager,jit]) or drop it",
    ),
    (
        ["workload=add_one", "mode=eager", "+mode.compiler_options.xla_bogus_flag=1"],
        "mode.compiler_options={'xla_bogus_flag': 1} is invalid; applies to the compiled modes (jit, aot) and "
        "mode=eager has none; measure a compiled mode beside it (mode=[eager,jit]) or drop it",
    ),
    (
        ["workload=add_one", "mode=eager", "profile=true"],
        "profile=True is invalid; profiles the compiled modes (jit, aot) and mode=eager has none; measure a compiled "
        "mode beside it (mode=[eager,jit]) or drop it",
    ),
    (
        [*ONE_ARG, "workload.args=[{shape:[${size}],init:arange}]", "seed=3"],
        "seed=3 is invalid; no input is random (every array argument's init is zeros, ones or arange), so the seed "
        "changes nothing; drop it, or give an argument init: normal",
    ),
    (
        [*ONE_ARG, "workload.args=[{shape:[${size}],start:2}]"],
        "workload.args[0].start=2 is invalid; init normal does not read start (only arange does); drop it, or set "
        "workload.args[0].init to one that does",
    ),
    (
        [*ONE_ARG, "workload.args=[{shape:[${size}],init:zeros,scale:3}]"],
        "workload.args[0].scale=3 is invalid; init zeros does not read scale (only normal, uniform, ones, arange "
        "do); drop it, or set workload.args[0].init to one that does",
    ),
    (
        ["workload=apply_n_times", "sequence=[{python_scalars:[1]}]"],
        "sequence[0].python_scalars=[1] is invalid; argument 1 is static already (static_argnums=[1]), so passing "
        "it as a Python scalar changes nothing; name a traced literal argument, or drop it",
    ),
    (
        ["workload=add_one", "cpu_affinity=[0,0]"],
        "cpu_affinity=[0, 0] is invalid; names core 0 twice, and the workers would run on 1 core(s) with 2 BLAS "
        "threads; name each core once: [0]",
    ),
]


@pytest.mark.parametrize(("argv", "expected"), UNUSED, ids=[" ".join(a[-1:]) for a, _ in UNUSED])
def test_a_key_the_job_would_not_use_is_refused(argv, expected, no_arity):
    assert refusal([*argv, "timing=quick"]) == expected


@pytest.mark.parametrize(
    "argv",
    [
        ["workload=add_one", "size=64", "seed=3"],  # random inputs, sized by size
        ["workload=apply_n_times", "workload.params.n=4"],
        ["workload=conditional_lax", "sequence=[{},{python_scalars:[1]}]"],
        ["workload=add_one", "mode=[eager,jit]", "mode.donate_argnums=[0]"],
        [*ONE_ARG, "workload.args=[{shape:[${size}],init:arange,start:2}]"],  # the default seed is nobody's word
    ],
)
def test_keys_the_job_uses_are_kept(argv, no_arity):
    assert len(preflight.check([*argv, "timing=quick"])) == 1


# ---- item 6: the messages say what is true -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("swept", "key", "value"),
    [("workload.name=a,b", "workload.name", "a,b"), ("progress=true,false", "progress", "true,false")],
)
def test_sweep_points_that_differ_only_in_keys_no_measurement_reads_are_refused(swept, key, value, no_arity):
    message = refusal(["-m", *CUSTOM, swept])
    assert message.startswith(f"{key}={value!r} is invalid; sweep points #0 (")
    assert message.endswith(
        "differ only in keys that change no timed measurement (workload.name, workload.description, progress, "
        "fail_on_error, resume, overwrite, check, roofline): one job measured twice under two labels; sweep a key the "
        "function reads"
    )


def test_an_arguments_own_dtype_labels_the_rows_when_nothing_follows_the_jobs(no_arity):
    """The rows' dtype column and the answer line come from the job's dtype: the arguments' own when they all have
    one (x64 follows), the job's when any argument follows it."""
    [job] = preflight.check([*ONE_ARG, "workload.args=[{shape:[64],dtype:float64}]", "timing=quick"])
    assert job.dtype == "float64"
    [mixed] = preflight.check([*ONE_ARG, "workload.args=[{shape:[64],dtype:float64},{shape:[64]}]", "timing=quick"])
    assert mixed.dtype == "float32"
