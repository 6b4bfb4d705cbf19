"""Every config mistake is one line naming the key, before anything runs (issue 8), checked in-process through
the preflight the command runs (the command prints its message as `jitexp: error: ...` and exits 2:
tests/e2e/test_config_mistakes_cli.py). Hypothesis draws override sets over the config space; a table holds
30+ distinct mistakes. Mistakes inside a user's own config files, which name the file, are found before any function
is imported: tests/unit/test_config_files.py, one case of each kind (the other cases of its table, a sweep's and the one
that needs the function are here). Nothing is measured."""

from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jitexp import ConfigError
from jitexp.engine import preflight
from unit.test_config_files import HERE, IN_FILES, MATMUL, in_file, write_option

WRITABLE = tempfile.gettempdir()

# key -> (valid values, invalid values), as typed on a command line
SPACE: dict[str, tuple[list[str], list[str]]] = {
    "size": (["1", "8", "64"], ["abc", "1.5", "0", "-3", "[1]"]),
    "dtype": (["float32", "float16", "bfloat16", "float64"], ["float128", "int", "x"]),
    "seed": (["0", "7", "123456"], ["abc", "1.5"]),
    "calls": (["0", "3"], ["-1", "x"]),
    "check": (["true", "false"], ["maybe"]),
    "mode": (["jit", "eager", "aot", "[eager,jit]", "[jit,aot]"], ["jitt", "[jit,jitt]", "fast"]),
    "device": (["cpu", "gpu", "tpu", "auto"], ["gpx"]),
    "device.index": (["0", "3"], ["-1", "x"]),
    "timing": (["default", "quick", "rigorous"], ["fast"]),
    "timing.target_rel_ci": (["0.01", "0.5"], ["0", "3", "1", "-0.1", "abc"]),
    "timing.warmup": (["0", "5"], ["-1"]),
    "timing.timeout_s": (["10", "0.5"], ["0", "nan"]),
    "workload": (["compute_heavy", "matmul", "mlp", "apply_n_times", "conditional"], ["nope", "compute"]),
    "isolate": (["process", "none"], ["thread"]),
    "compilation_cache_dir": (["null", os.path.join(WRITABLE, "jitexp-cache-test")], ["/proc/x/y"]),
    "cpu_async_dispatch": (["null", "true", "false"], ["sometimes"]),
    "mode.static_argnums": (["null"], ["abc", "[99]"]),
    "+sise": ([], ["64"]),
    "foo": ([], ["1"]),
    "timing.warmpu": ([], ["3"]),
    "hydra.run.dir": ([os.path.join(WRITABLE, "jitexp-run-test")], ["/proc/x/y"]),
}


def reported_key(key: str) -> str:
    return key.lstrip("+")


@st.composite
def override_sets(draw):
    """A set of distinct keys, each given a valid or an invalid value; returns (overrides, bad keys)."""
    keys = draw(st.lists(st.sampled_from(sorted(SPACE)), min_size=1, max_size=5, unique=True))
    overrides, bad = [], set()
    for key in keys:
        valid, invalid = SPACE[key]
        use_invalid = not valid or draw(st.booleans())
        value = draw(st.sampled_from(invalid if use_invalid else valid))
        overrides.append(f"{key}={value}")
        if use_invalid:
            bad.add(reported_key(key))
    if "seed" in keys and any(o in overrides for o in ("workload=conditional",)):
        bad.add("seed")  # conditional's inputs are not random: a seed would change nothing (issue 51)
    if "check=true" in overrides and "mode=eager" in overrides:
        bad.add("check")  # eager alone: nothing to compare with eager's outputs (issue 51)
    return draw(st.permutations(overrides)), bad


def assert_one_line(error: ConfigError, bad: set[str]) -> None:
    message = str(error)
    assert "\n" not in message and message
    assert error.key in bad, (error.key, bad, message)
    assert message.startswith(f"{error.key}=") or message.startswith(f"{error.key} is invalid")


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(override_sets())
def test_any_override_set_is_a_valid_experiment_or_one_line_naming_the_key(case):
    overrides, bad = case
    try:
        jobs = preflight.check(list(overrides))
    except ConfigError as error:
        assert bad, f"valid overrides refused: {overrides}: {error}"
        assert_one_line(error, bad)
    else:
        assert not bad, f"mistake accepted: {overrides}"
        assert len(jobs) == 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(["8", "16", "abc", "1.5", "0", "24"]), min_size=1, max_size=4),
    st.lists(st.sampled_from(["jit", "eager", "jitt"]), min_size=1, max_size=2, unique=True),
)
def test_a_sweep_with_one_bad_value_is_refused_before_any_job(sizes, modes):
    argv = ["-m", f"size={','.join(sizes)}", f"mode={','.join(modes)}", "workload=matmul"]
    bad_sizes = {s for s in sizes if s in ("abc", "1.5", "0")}
    repeated = len(set(sizes)) < len(sizes)  # two sweep points that are the same job (issue 51)
    try:
        jobs = preflight.check(argv)
    except ConfigError as error:
        bad = ({"size"} if bad_sizes or repeated else set()) | ({"mode"} if "jitt" in modes else set())
        assert_one_line(error, bad)
    else:
        assert not bad_sizes and "jitt" not in modes and not repeated
        assert len(jobs) == len(sizes) * len(modes)


# (command line, text the one line must contain): 30+ distinct mistakes through the real command
MISTAKES = [
    (["workload=nope"], "workload='nope' is invalid; valid choices: add_one, apply_n_times,"),
    (["mode=jitt"], "mode='jitt' is invalid; did you mean jit? valid choices: aot, eager, jit"),
    (["mode=[eager,jitt]"], "mode='jitt' is invalid; did you mean jit? valid choices: aot, eager, jit"),
    (["device=gpx"], "device='gpx' is invalid; valid choices: auto, cpu, gpu, tpu"),
    (["timing=fast"], "timing='fast' is invalid; valid choices: default, quick, rigorous"),
    (["experiment=nope"], "experiment='nope' is invalid; valid choices: compilation_cache,"),
    (["size=abc"], "size='abc' is invalid; must be an integer"),
    (["size=1.5"], "size='1.5' is invalid; must be an integer"),
    (["size=0"], "size=0 is invalid; must be > 0"),
    (["seed=abc"], "seed='abc' is invalid; must be an integer"),
    (["check=maybe"], "check='maybe' is invalid; must be true or false"),
    (["cpu_async_dispatch=sometimes"], "cpu_async_dispatch='sometimes' is invalid; must be true or false or null"),
    (["mode.static_argnums=abc"], "mode.static_argnums='abc' is invalid; must be a list of integers or null"),
    # a mapping where a list goes: OmegaConf's "Cannot merge DictConfig with ListConfig" was the message
    (
        ["workload=custom", "workload.fn=math.sin", "workload.args={shape:[8]}"],
        "workload.args='{shape:[8]}' is invalid; must be a list or null",
    ),
    (["dtype=float128"], "dtype='float128' is invalid; valid choices: float32, float16, bfloat16, float64"),
    (["isolate=thread"], "isolate='thread' is invalid; valid choices: process, none"),
    (["foo=1"], "foo='1' is invalid; no such key;"),
    (["+sise=64"], "sise=64 is invalid; no such key; did you mean size?"),
    (["timing.warmpu=3"], "timing.warmpu='3' is invalid; no such key; did you mean timing.warmup?"),
    (["+timing.proceses=3"], "did you mean timing.processes?"),
    (["size=[1,"], "size='[1,' is invalid; malformed override"),
    (["size"], "size is invalid; malformed override"),
    (["size=64,abc"], "a sweep needs -m (--multirun)"),
    (["-m", "size=64,abc,96"], "size='abc' is invalid; must be an integer"),
    (["-m", "mode=jit,jitt"], "mode='jitt' is invalid; did you mean jit? valid choices: aot, eager, jit"),
    (["experiment=size_scaling", "dtype=float32,float128"], "dtype='float128' is invalid"),
    (["hydra.run.dir=/proc/x/y"], "hydra.run.dir='/proc/x/y' is invalid; cannot write in /proc"),
    (["-m", "size=8", "hydra.sweep.dir=/proc/x/y"], "hydra.sweep.dir='/proc/x/y' is invalid; cannot write"),
    (["compilation_cache_dir=/proc/x"], "compilation_cache_dir='/proc/x' is invalid; cannot write in /proc"),
    (["timing.target_rel_ci=3"], "timing.target_rel_ci=3.0 is invalid; must lie in (0, 1)"),
    (
        ["timing.processes=4", "timing.max_processes=2"],
        "timing.max_processes=2 is invalid; must be >= timing.processes",
    ),
    (
        ["workload=custom", "workload.fn=jitexp.workloads.matmul"],
        "workload.args is invalid; needs the function's arguments",
    ),
    (
        ["workload=custom", "workload.fn=nosuchmodule.fn", "workload.args=[{shape:[2]}]"],
        "workload.fn='nosuchmodule.fn' is invalid; importing 'nosuchmodule' failed: ModuleNotFoundError",
    ),
    (
        ["workload=custom", "workload.fn=jitexp.workloads.matmul", "workload.args=[{shape:[2,2]}]"],
        "workload.args is invalid; it lists 1 argument(s), but jitexp.workloads.matmul(x, y)",
    ),
    (["workload=apply_n_times", "workload.params.n=-3"], "workload.params.n=-3 is invalid; must be >= 0"),
    (
        ["workload=apply_n_times", "workload.params.n=abc"],
        "workload.params.n='abc' is invalid; must be an integer like its default (3)",
    ),
    (
        ["workload=conditional", "workload.params.threshold=high"],
        "workload.params.threshold='high' is invalid; must be a number",
    ),
    (
        ["workload.params.n=3"],
        "workload.params.n='3' is invalid; no such key; workload.params has none; "
        "a new param needs a leading +: +workload.params.n=3",
    ),
    (
        ["mode.compiler_options.xla_cpu_enable_fast_math=true"],
        "is invalid; a new entry needs a leading +: +mode.compiler_options.xla_cpu_enable_fast_math=True",
    ),
    (
        ["workload=apply_n_times", "mode.donate_argnums=[1]"],
        "mode.donate_argnums=[1] is invalid; positions of traced array arguments: [0]",
    ),
    (
        ["workload=apply_n_times", "sequence=[{m: 2}]"],
        "sequence[0].m=2 is invalid; no such key; sequence[0] has dtype, n",
    ),
    (
        ["workload=apply_n_times", "mode.static_argnums=[5]"],
        "mode.static_argnums=[5] is invalid; indices must lie in [0, 2)",
    ),
    (
        ["workload=matmul", "device.count=4", "mesh.shape={data:8}"],
        "mesh.shape={'data': 8} is invalid; needs 8 devices and device.count is 4: set device.count=8",
    ),
    (
        ["workload=matmul", "device.count=4", "mesh.shape={data:4}", "workload.shardings={0:[model]}"],
        "workload.shardings.0=['model'] is invalid; axis 'model' is not in mesh.shape; its axes: data",
    ),
    (
        ["workload=matmul", "size=130", "device.count=4", "mesh.shape={data:4}", "workload.shardings={0:[data]}"],
        "workload.shardings.0=['data'] is invalid; dimension 0 of argument 0 (130) is not divisible by data (4)",
    ),
    (
        ["workload=matmul", "device.count=4", "mesh.shape={data:4}", "workload.shardings={2:[data]}"],
        "workload.shardings.2=['data'] is invalid; positions lie in [0, 2) for 2 argument(s)",
    ),
    (
        ["profile=true", "variants={a: {size: 8}, b: {size: 16}}"],
        "profile=True is invalid; profiles one version of a job: run it in a job without envs or variants",
    ),
    (
        [
            "workload=tp_mlp",
            "device.count=2",
            "variants={one: {mesh.shape: {model: 1}}, four: {mesh.shape: {model: 4}}}",
        ],
        "variants.four.mesh.shape={'model': 4} is invalid; needs 4 devices and device.count is 2: set device.count=4",
    ),
    (
        [
            "workload=matmul",
            "device.count=2",
            "mesh.shape={data:2}",
            "workload.shardings={0:[data]}",
            "workload.args=[5]",
        ],
        "workload.args[0]=5 is invalid; a mapping",  # the argument's own mistake, before the mesh reads its shape
    ),
    (
        ["workload=matmul", "device.count=2", "mesh.shape={data:2}", "workload.out_shardings=[model]"],
        "workload.out_shardings=['model'] is invalid; axis 'model' is not in mesh.shape; its axes: data",
    ),
    (["distributed.processes=0"], "distributed.processes=0 is invalid; must be an int >= 1 (1: one process, no SLURM)"),
    (
        ["workload=dp_train_step", "mode=jit", "distributed.processes=2"],
        "mesh.shape is invalid; distributed.processes=2 needs a mesh over every process's devices, e.g. mesh.shape=",
    ),
    (
        ["workload=dp_train_step", "distributed.processes=2", "mesh.shape={data:2}"],
        "mode='eager' is invalid; with distributed.processes=2 the modes are jit and aot",
    ),
    (
        ["workload=dp_train_step", "mode=jit", "distributed.processes=2", "mesh.shape={data:4}"],
        "needs 4 devices and device.count is 1 in each of distributed.processes=2: set device.count=2",
    ),
    (
        ["workload=dp_train_step", "mode=jit", "distributed.processes=2", "mesh.shape={data:2}", "isolate=none"],
        "isolate='none' is invalid; not with distributed.processes=2: each measuring process is 2 SLURM tasks",
    ),
    (
        ["workload=dp_train_step", "mode=jit", "distributed.processes=2", "device.count=2", "mesh.shape={data:2}"],
        "with distributed.processes=2 the mesh takes every process's devices: 4 (device.count=2 x 2)",
    ),
    (
        ["device=gpu", "mode=jit", "distributed.processes=2", "device.count=2", "mesh.shape={data:4}"],
        "device.count=2 is invalid; with distributed.processes=2 on gpu: 1 (each SLURM task drives one GPU)",
    ),
    (
        ["variants={a: {distributed.processes: 1}, b: {distributed.processes: 2}}"],
        "variants.a.distributed.processes=1 is invalid; is set once per worker process",
    ),
    (["mesh.axis_types=manual"], "mesh.axis_types='manual' is invalid; valid choices: auto, explicit"),
    (["device.count=0"], "device.count=0 is invalid; must be an int >= 1"),
    (["mesh.shape=[4]"], "mesh.shape=[4] is invalid; {axis name: size >= 1, ...}, e.g. {data: 4}"),
    (["workload.args.0.init=gaussian"], "workload.args[0].init='gaussian' is invalid; valid choices: normal,"),
    (["hydra/launcher=nope"], "hydra/launcher='nope' is invalid; valid choices: basic"),
    (["--config-dir", "/no/such/dir", "workload=x"], "--config-dir='/no/such/dir' is invalid; no such directory"),
]


def test_each_mistake_is_one_line_the_command_prints_before_anything_runs(tmp_path, monkeypatch):
    """What `jitexp ARGV` prints after `jitexp: error: ` (cli.main prints preflight.check's ConfigError)."""
    assert len({tuple(argv) for argv, _ in MISTAKES}) >= 30
    monkeypatch.chdir(tmp_path)
    failures = []
    for argv, expected in MISTAKES:
        quick = [] if any(a.startswith("timing") for a in argv) else ["timing=quick"]
        try:
            preflight.check([*argv, *quick])
        except ConfigError as error:
            message = str(error)
            if "\n" in message or expected not in message:
                failures.append(f"{argv}: {message!r}")
        else:
            failures.append(f"{argv}: accepted")
    assert not failures, "\n".join(failures)
    assert not (tmp_path / "outputs").exists()  # nothing ran, nothing was written


@pytest.mark.parametrize(
    "argv",
    [
        ["--cfg", "job", "workload=apply_n_times"],
        ["--cfg", "job", "experiment=size_scaling"],
        ["--info", "defaults"],
        ["--help"],
    ],
)
def test_flags_that_run_nothing_are_left_to_hydra(argv):
    assert preflight.check(argv) == []


def test_presets_and_launchers_pass_the_preflight():
    assert len(preflight.check(["experiment=size_scaling"])) == 5  # the preset sweeps by itself
    assert len(preflight.check(["experiment=seed_control_flow"])) == 4
    assert len(preflight.check(["experiment=seed_static_args"])) == 4
    assert len(preflight.check(["-m", "mode=eager,jit", "size=8,16", "hydra/launcher=basic"])) == 4
    assert len(preflight.check(["-m", "mode=[eager,jit],aot", "size=8"])) == 2
    jobs = preflight.check(["-m", "workload=glob(apply_n*)", "size=8"])
    assert sorted(j.workload_name for j in jobs) == ["apply_n_times", "apply_n_times_fori"]


# ---- a user's own config file whose mistake needs the function imported (the mistakes found before that:
# tests/unit/test_config_files.py) ----


def test_a_users_file_whose_args_do_not_fit_the_function_is_one_line_naming_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = write_option(tmp_path, "workload", "fn: jitexp.workloads.matmul\nargs: [{shape: [4, 4]}]\n")
    with pytest.raises(ConfigError) as caught:
        preflight.check(["--config-dir", "conf", "workload=mine"])
    message = str(caught.value)
    assert "\n" not in message and caught.value.source == name
    assert message.startswith(
        f"{name}: workload.args is invalid; it lists 1 argument(s), but jitexp.workloads.matmul(x, y)"
    ), message


def test_a_device_file_has_no_required_key(tmp_path):
    """Both device keys have defaults (platform auto, index 0): a file may set either alone."""
    write_option(tmp_path, "device", "index: 0\n")
    [job] = preflight.check(["--config-dir", str(tmp_path / "conf"), "device=mine"])
    assert (job.device.platform, job.device.index) == ("auto", 0)


@pytest.mark.parametrize("group, kind", sorted(set(IN_FILES) - set(HERE)))
def test_a_mistake_in_a_users_file_is_one_line_naming_file_key_value_and_fix(group, kind, tmp_path, monkeypatch):
    in_file(group, kind, tmp_path, monkeypatch)


def test_a_sweep_names_the_file_too(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = write_option(tmp_path, "workload", MATMUL + "statc_argnums: [0]\n")
    with pytest.raises(ConfigError, match=f"^{name}: workload.statc_argnums=.*did you mean workload.static_argnums"):
        preflight.check(["--config-dir", "conf", "-m", "workload=mine", "size=8,16"])
