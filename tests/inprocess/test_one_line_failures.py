"""Issue 57, items 3-5 through the preflight and jitexp.measure's preparation (a Hydra compose each, or JAX's jit
wrapping a function): each failure is one line naming the key, the value and what would be right, before anything
runs. The command-line paths (exit codes, the callbacks, the current folder) are tests/e2e/test_one_line_cli.py."""

from __future__ import annotations

import sys

import pytest

from jitexp.config.schema import register_configs
from jitexp.engine import preflight
from jitexp.errors import ConfigError

USER = """
import jax.numpy as jnp


def gen(x):
    yield x


def scale(x, n):
    return x * n


class Model:
    @staticmethod
    def apply(x):
        return jnp.tanh(x)
"""


@pytest.fixture(autouse=True)
def _configs():
    register_configs()


@pytest.fixture
def user(tmp_path, monkeypatch):
    """A folder holding usermod.py, current and importable."""
    (tmp_path / "usermod.py").write_text(USER)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("usermod", None)


def gen(x):
    yield x


def scale(x, n):
    return x * n


def refusal(argv: list[str]) -> str:
    with pytest.raises(ConfigError) as caught:
        preflight.check(argv)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    return message


# ---- item 3: jax.jit refusing the function, before anything runs ---------------------------------------------------


def test_a_generator_function_is_refused_in_every_mode(user):
    args = ["workload=custom", "workload.fn=usermod.gen", "workload.args=[{shape:[${size}]}]"]
    expected = (
        "workload.fn='usermod.gen' is invalid; is a generator function (it yields): jax.jit refuses it, and eager "
        "would time making a generator; return the arrays instead"
    )
    assert refusal(args) == expected
    assert refusal([*args, "mode=eager"]) == expected
    assert refusal([*args, "isolate=none"]) == expected


def test_measure_says_what_jax_jit_refuses_before_any_worker_starts():
    import jax.numpy as jnp

    from jitexp.api import prepare

    with pytest.raises(ConfigError) as caught:
        prepare(gen, (jnp.ones(4),))
    assert str(caught.value).startswith("fn='gen' is invalid; is a generator function (it yields)")
    with pytest.raises(ConfigError) as caught:
        prepare(scale, jnp.ones(4), 3, static_argnums=[5])
    assert str(caught.value) == (
        "static_argnums=[5] is invalid; jax.jit refuses it: ValueError: Jitted function has static_argnums=(5,), "
        "but only accepts 2 positional arguments."
    )
    with pytest.raises(ConfigError) as caught:
        prepare(scale, jnp.ones(4), 3, static_argnums=[1], donate_argnums=[1])
    assert str(caught.value).startswith(
        "donate_argnums=[1] is invalid; jax.jit refuses it: ValueError: static_argnames and donate_argnames cannot "
        "intersect."
    )


# ---- item 3: sweep syntax that selects nothing; --cfg and --info -------------------------------------------------


def test_a_sweep_that_selects_nothing_is_refused():
    assert refusal(["-m", "size=range(64,32)"]) == (
        "size='range(64,32)' is invalid; selects no value, so the sweep would run no job"
    )
    message = refusal(["-m", "workload=glob(zzz*)"])
    assert message.startswith(
        "workload='glob(zzz*)' is invalid; selects no value, so the sweep would run no job; valid choices: add_one, "
    )


def test_an_interval_sweep_is_refused():
    """The basic sweeper raised HydraException on interval() once the sweep started (a traceback, found by
    benchmarks/hunt57.py)."""
    assert refusal(["-m", "workload=add_one", "size=interval(1,2)"]) == (
        "size='interval(1,2)' is invalid; interval() is a range of real numbers for a sweeper that samples; jitexp's "
        "sweep runs each listed value: write a list (a,b), range(start,stop,step) or choice(a,b)"
    )


def test_a_folder_key_the_run_would_ignore_or_a_job_subdir_not_by_number_is_refused():
    """hydra.run.dir with -m and hydra.sweep.dir without it were ignored without a word; hydra.sweep.subdir=x had
    each job replace the last one's rows (so does size_${size} in a sweep over seeds), and =${size} left the gathered
    results.csv empty ('2 never finished')."""
    assert refusal(["-m", "workload=add_one", "size=8,16", "hydra.run.dir=R"]) == (
        "hydra.run.dir='R' is invalid; names a single run's folder, and -m runs a sweep, which would ignore it: write "
        "hydra.sweep.dir=R"
    )
    assert refusal(["workload=add_one", "hydra.sweep.dir=S"]).startswith(
        "hydra.sweep.dir='S' is invalid; names a sweep's folder, and this is a single run (no -m)"
    )
    assert refusal(["-m", "workload=add_one", "size=8,16", "hydra.sweep.subdir=x"]) == (
        "hydra.sweep.subdir='x' is invalid; jobs #0 (workload=add_one size=8) and #1 (workload=add_one size=16) would "
        "share that folder, and the later would replace the earlier's rows; name it from every swept key, or drop it "
        "(the job number)"
    )
    assert refusal(["-m", "workload=add_one", "seed=0,1", "hydra.sweep.subdir=size_${size}"]).startswith(
        "hydra.sweep.subdir='size_1000' is invalid; jobs #0 (workload=add_one seed=0) and #1 (workload=add_one seed=1)"
    )
    assert refusal(["-m", "workload=add_one", "size=8,16", "hydra.sweep.subdir=${size}"]) == (
        "hydra.sweep.subdir='8' is invalid; job #0's folder would be named 8, a job number, and the gathered "
        "results.csv reads job folders by number (it left this one out); give it a prefix (e.g. size_${size}), or "
        "drop it"
    )
    for subdir in ("${hydra.job.num}", "size_${size}"):  # the default, and names of their own (test_faults.py)
        assert len(preflight.check(["-m", "workload=add_one", "size=8,16", f"hydra.sweep.subdir={subdir}"])) == 2


def test_a_glob_that_selects_options_is_expanded():
    jobs = preflight.check(["-m", "workload=glob(add_on*)", "timing=quick"])
    assert [job.workload.fn for job in jobs] == ["jitexp.workloads.add_one"]


def test_cfg_or_info_with_m_is_one_line():
    assert refusal(["-m", "--cfg", "job", "size=64,128"]) == (
        "--cfg='job' is invalid; --cfg shows one job's config and -m runs a sweep: Hydra takes one of them; drop -m "
        "and give one point of the sweep (size=64, not size=64,128)"
    )
    assert refusal(["-m", "--info", "config", "size=64"]).startswith("--info='config' is invalid; --info shows")


def test_an_override_read_as_a_flags_choice_is_one_line():
    """`-m --info size=64,128`: argparse took the override for --info's choice and printed its usage (issue 57)."""
    assert refusal(["-m", "--info", "size=64,128"]) == (
        "--info='size=64,128' is invalid; --info takes one of all, config, defaults, defaults-tree, plugins, "
        "searchpath (or nothing), and it took the override for its choice: write the choice first (--info all "
        "size=64); and it shows one job's config while -m runs a sweep: drop -m and give one point of the sweep"
    )
    assert refusal(["-c", "size=64"]).startswith("-c='size=64' is invalid; -c takes one of job, hydra, all")
    assert preflight.check(["--info", "nosuch"]) == []  # a choice that is no override: argparse's own error


def test_cfg_job_says_what_the_job_would_refuse_without_importing_the_function(user):
    assert refusal(["--cfg", "job", "size=1k"]) == "size='1k' is invalid; must be an integer"
    assert refusal(["--cfg", "job", "~timing"]).startswith("~timing is invalid;")
    assert (
        preflight.check(["--cfg", "job", "workload=custom", "workload.fn=usermod.gen", "workload.args=[{shape:[8]}]"])
        == []
    )  # no import
    assert "usermod" not in sys.modules


# ---- item 4: duplicates and no-ops -------------------------------------------------------------------------------


def test_sweep_points_that_resolve_to_the_same_statics_are_refused():
    assert refusal(["-m", "workload=apply_n_times", "mode.static_argnums=[1],null"]) == (
        "mode.static_argnums='[1],null' is invalid; sweep points #0 (mode.static_argnums=[1]) and #1 "
        "(mode.static_argnums=null) measure the same thing: mode.static_argnums=null is the workload's default, [1]: "
        "one job measured twice under two labels; sweep a key the function reads"
    )


@pytest.mark.parametrize("key", ["check", "roofline"])
def test_sweep_points_that_differ_in_a_key_no_timing_reads_are_refused(key):
    assert refusal(["-m", "workload=add_one", f"{key}=true,false"]) == (
        f"{key}='true,false' is invalid; sweep points #0 ({key}=True) and #1 ({key}=False) differ only in keys that "
        "change no timed measurement (workload.name, workload.description, progress, fail_on_error, resume, "
        "overwrite, check, roofline): one job measured twice under two labels; sweep a key the function reads"
    )


def test_a_mode_named_twice_is_refused():
    assert refusal(["workload=add_one", "mode=[eager,jit,jit]"]) == (
        "mode='[eager,jit,jit]' is invalid; names jit twice; each option is used once, so give it once"
    )


def test_an_empty_run_folder_is_refused():
    assert refusal(["workload=add_one", "hydra.run.dir="]) == (
        "hydra.run.dir='' is invalid; is empty, so every CSV would land in the current folder; name a folder: "
        "hydra.run.dir=FOLDER"
    )


def test_deleting_a_group_or_a_schema_key_is_refused():
    assert refusal(["workload=add_one", "~timing"]) == (
        "~timing is invalid; deletes the timing group's selection, and the job would run the schema's own timing "
        "defaults unsaid; choose one with timing=NAME: valid choices: default, quick, rigorous"
    )
    assert refusal(["workload=add_one", "~seed"]) == (
        "~seed is invalid; seed is a key of jitexp's schema, so deleting it runs the schema's default 0 unsaid; "
        "write seed=0 to mean that"
    )
    # mode's default is a list of options, which Hydra cannot delete: 'config is invalid; Could not delete' before
    assert refusal(["workload=add_one", "~mode"]) == (
        "~mode is invalid; every job selects a mode and it cannot be deleted; choose with mode=OPTION (valid choices: "
        "aot, eager, jit, numpy)"
    )


def test_compose_refuses_hydra_keys_and_sweeps():
    import jitexp

    with pytest.raises(ConfigError) as caught:
        jitexp.compose(["workload=add_one", "hydra.run.dir=x"])
    assert str(caught.value).startswith(
        "hydra.run.dir='x' is invalid; Hydra's own keys steer a command-line run, and compose() makes one job's config"
    )
    with pytest.raises(ConfigError, match=r"^size='64,128' is invalid; compose\(\) makes one job's config"):
        jitexp.compose(["size=64,128"])


# ---- item 5: messages that say what is true ---------------------------------------------------------------------


def test_deleting_workload_fn_says_it_cannot_be_deleted():
    assert refusal(["workload=add_one", "~workload.fn"]) == (
        "~workload.fn is invalid; workload.fn is a key of jitexp's schema and cannot be deleted; set "
        "workload.fn=package.module.function (every job measures a function)"
    )


def test_a_method_by_its_attribute_path_is_imported(user):
    jobs = preflight.check(["workload=custom", "workload.fn=usermod.Model.apply", "workload.args=[{shape:[8]}]"])
    assert jobs[0].workload.fn == "usermod.Model.apply"
    assert refusal(["workload=custom", "workload.fn=usermod.Model.nosuch", "workload.args=[{shape:[8]}]"]) == (
        "workload.fn='usermod.Model.nosuch' is invalid; usermod.Model (module 'usermod', then attributes) has no "
        "'nosuch'"
    )


def big_fixed(size, dtype, seed):
    import jax.numpy as jnp

    return (jnp.zeros((1024, 1024), dtype),)


def big_sized(size, dtype, seed):
    import jax.numpy as jnp

    return (jnp.zeros((size, 1024), dtype),)


def test_a_setup_whose_arrays_ignore_size_is_blamed_not_size(monkeypatch):
    from helpers import job_config
    from jitexp.config import sizing
    from jitexp.worker.inputs import check_setup_memory

    monkeypatch.setattr(sizing, "available_memory", lambda: 1 << 20)  # 1 MiB
    fixed = job_config(None, workload={"setup": "mine.big_fixed"}, size=1000)
    with pytest.raises(ConfigError) as caught:
        check_setup_memory(big_fixed, fixed, 2)
    assert str(caught.value).startswith("workload.setup='mine.big_fixed' is invalid; workload.setup's arrays")
    assert str(caught.value).endswith(
        "whatever the size (the setup's arrays are as large at size=500); make them smaller in the setup or its params"
    )
    sized = job_config(None, workload={"setup": "mine.big_sized"}, size=1000)
    with pytest.raises(ConfigError, match=r"^size=1000 is invalid; workload.setup's arrays"):
        check_setup_memory(big_sized, sized, 2)


def test_a_group_option_written_as_an_interpolation_names_the_group():
    message = refusal(["workload=${nosuch}"])
    assert message.startswith(
        "workload='${nosuch}' is invalid; a group's option is chosen before the config exists, so it cannot refer to "
        "a key of it; name an option: valid choices: add_one, "
    )
    assert refusal(["workload=add_one", "workload.setup=${nosuch}"]).startswith(
        "workload.setup='${nosuch}' is invalid; refers to nosuch, which does not exist"  # as typed, braces unescaped
    )


def test_seed_and_an_infinite_time_are_named_before_the_workers():
    assert refusal(["workload=add_one", "seed=-1"]) == (
        "seed=-1 is invalid; must be >= 0 (numpy's and JAX's generators take a non-negative seed)"
    )
    assert refusal(["workload=add_one", "resume=true", "overwrite=true"]) == (
        "overwrite=True is invalid; resume=true keeps the folder's complete jobs and overwrite=true removes them: give "
        "one of the two"
    )
    # a seed past int64: JAX's key raised OverflowError in a keyed workload, results.csv read it back as a float
    # (benchmarks/hunt57.py)
    assert refusal(["workload=add_one", "seed=18446744073709551616"]) == (
        "seed=18446744073709551616 is invalid; must be < 2**63 (a 64-bit integer, as results.csv and JAX's keys "
        "hold it)"
    )
    assert refusal(["workload=add_one", "timing.job_time_s=inf"]) == (
        "timing.job_time_s=inf is invalid; must be a finite number > 0"
    )


def test_cfg_job_says_a_users_file_is_shadowed_as_the_job_would(user):
    (user / "conf" / "workload").mkdir(parents=True)
    (user / "conf" / "workload" / "matmul.yaml").write_text("fn: usermod.scale\nargs: [{shape: ['${size}']}]\n")
    message = refusal(["--config-dir", "conf", "--cfg", "job", "workload=matmul"])
    assert message.startswith("workload='matmul' is invalid; jitexp's own workload/matmul.yaml comes first")


def test_a_variants_value_of_the_wrong_type_says_what_the_key_takes():
    assert refusal(["workload=apply_n_times", "variants={a:{},b:{size:[64,128]}}"]) == (
        "variants.b.size=[64, 128] is invalid; must be an integer; a variant is one version: several of size are a "
        "sweep (-m size=a,b)"
    )  # was OmegaConf's "Value '[64, 128]' of type 'ListConfig' could not be converted to Integer"
    assert refusal(["workload=apply_n_times", "variants={a:{},b:{seed:abc}}"]) == (
        "variants.b.seed='abc' is invalid; must be an integer"
    )


def test_deleting_a_key_that_holds_nothing_says_so():
    assert refusal(["workload=apply_n_times", "~mode.static_argnums"]) == (
        "~mode.static_argnums is invalid; mode.static_argnums holds nothing to delete (it is unset here); drop "
        "~mode.static_argnums, or set mode.static_argnums=VALUE"
    )  # was "config is invalid; Could not delete from config. 'mode.static_argnums' does not exist."
    assert refusal(["workload=apply_n_times", "~nosuch"]) == (
        "~nosuch is invalid; no such key, so nothing to delete; drop ~nosuch"
    )


def test_bisect_refuses_a_users_file_in_out_before_anything_runs(tmp_path, monkeypatch, capsys):
    """jitexp-history bisect --out holding the user's steps.jsonl, in a repository with GOOD and BAD: one line, exit 2,
    the file kept, no worktree made (issue 57: bisect's --out was neither probed nor owned)."""
    import subprocess

    from jitexp.bisection import main

    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", str(tmp_path)], check=True)
    for subject in ("a", "b"):
        subprocess.run([*git, "-C", str(tmp_path), "commit", "-q", "--allow-empty", "-m", subject], check=True)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "steps.jsonl").write_text("mine\n")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["--out", "out", "HEAD~1", "HEAD", "--", "jitexp", "size=8"]) == 2
    said = capsys.readouterr()
    assert said.err == (
        f"jitexp-history bisect: error: {tmp_path / 'out'} holds steps.jsonl, which jitexp-history bisect did not "
        "write and would replace; choose another --out, or move them away\n"
    )
    assert said.out == "" and (tmp_path / "out" / "steps.jsonl").read_text() == "mine\n"
    assert main(["--out", "out/steps.jsonl/x", "HEAD~1", "HEAD", "--", "jitexp", "size=8"]) == 2
    assert capsys.readouterr().err.endswith("/out/steps.jsonl/x' is invalid; cannot be written: Not a directory\n")


def test_resume_over_a_truncated_results_csv_is_one_line(tmp_path):
    """resume=true reads the folder's rows to tell which jobs are complete: a results.csv cut short was a BadCsv
    traceback from the preflight (benchmarks/hunt57.py)."""
    (tmp_path / "results.csv").write_text('"workload","mode","status"\n"add_one","jit\n')
    assert refusal(["workload=add_one", f"hydra.run.dir={tmp_path}", "resume=true"]) == (
        f"hydra.run.dir='{tmp_path}' is invalid; resume=true, but {tmp_path}/results.csv, row 1 (line 2): not a CSV "
        "jitexp can read (EOF inside string starting at row 1); restore it, or write overwrite=true to replace the "
        "folder's results"
    )
