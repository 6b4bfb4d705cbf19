"""Issue 51: every input is used or refused, before anything runs (the preflight needs no JAX: these mistakes are
found before any function is imported). Each case is the command line's one line: the key, the value written and
what is wrong or what to write instead (`jitexp` prints it as `jitexp: error: ...` and exits 2:
tests/e2e/test_config_mistakes_cli.py).

Each rule family is reached here through the preflight once, with Hydra; its rules one by one, without Hydra, in
test_usage.py (config/usage.py) and test_convert.py (config/convert.py); the family's other command lines, a Hydra
compose or a sweep's several each, in tests/inprocess/test_inputs_used.py."""

from __future__ import annotations

import pytest

from jitexp import ConfigError
from jitexp.engine import preflight
from unit.test_config_files import write_option


def refusal(argv: list[str]) -> str:
    with pytest.raises(ConfigError) as caught:
        preflight.check(argv)
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    return message


# ---- item 5: an omegaconf error on a user's input is one line, never a traceback ----------------------------------


def test_an_interpolation_in_a_users_workload_file_names_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = write_option(
        tmp_path, "workload", "fn: mine.f\nparams: {scale: 1.0}\nargs:\n  - value: ${workload.params.scael}\n"
    )
    assert refusal(["--config-dir", "conf", "workload=mine"]) == (
        f"{name}: workload.args[0].value='${{workload.params.scael}}' is invalid; refers to "
        "workload.params.scael, which does not exist; did you mean workload.params.scale?"
    )


# ---- item 3: nothing overwritten, nothing merged -----------------------------------------------------------------

CUSTOM = ["workload=custom", "workload.fn=mine.f", "workload.args=[{shape:[${size}]}]", "timing=quick"]


@pytest.fixture
def no_arity(monkeypatch):
    """The preflight without importing the function (and JAX, for jit_fn): these checks need neither."""
    monkeypatch.setattr(preflight, "check_arity", lambda exp: None)


def test_a_run_into_a_folder_that_holds_results_is_refused_unless_overwrite(tmp_path, no_arity):
    out = tmp_path / "run"
    preflight.check([*CUSTOM, f"hydra.run.dir={out}"])  # a new folder
    out.mkdir()
    (out / ".hydra").mkdir()
    preflight.check([*CUSTOM, f"hydra.run.dir={out}"])  # a folder without results (a run that never finished)
    (out / "results.csv").write_text("workload\nf\n")
    (out / "samples.csv").write_text("workload\nf\n")
    assert refusal([*CUSTOM, f"hydra.run.dir={out}"]) == (
        f"hydra.run.dir='{out}' is invalid; already holds the results of an earlier run (results.csv, samples.csv); "
        "write overwrite=true to replace them, or another hydra.run.dir"
    )
    assert len(preflight.check([*CUSTOM, f"hydra.run.dir={out}", "overwrite=true"])) == 1


def test_sweep_points_that_are_the_same_job_are_refused_before_the_sweep(no_arity):
    assert refusal(["-m", *CUSTOM[:3], "size=64,64"]) == (
        "size='64,64' is invalid; sweep points #0 (size=64) and #1 (size=64) are the same job; give each point once "
        "(to measure it again, run it again, or raise timing.processes)"
    )


# ---- item 4: the user's configs win, or the clash is one line ----------------------------------------------------


def test_a_users_file_with_the_name_of_a_built_in_is_refused_naming_both(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "conf" / "workload").mkdir(parents=True)
    (tmp_path / "conf" / "workload" / "matmul.yaml").write_text("fn: mine.f\nargs: [{shape: [4]}]\n")
    assert refusal(["--config-dir", "conf", "workload=matmul"]) == (
        "workload='matmul' is invalid; jitexp's own workload/matmul.yaml comes first in the search path, so your "
        "conf/workload/matmul.yaml would be ignored (jitexp --info searchpath); rename your file, e.g. to "
        "my_matmul.yaml, and select workload=my_matmul"
    )


# ---- item 1: every key the user set is used or refused -----------------------------------------------------------

ONE_ARG = ["workload=custom", "workload.fn=mine.f"]


def test_a_key_the_job_would_not_use_is_refused(no_arity):
    """What the preflight hands config/usage.py (the composed config, the keys the command line set) reaches it:
    a param no argument refers to, found in the unresolved config, and a seed no input reads, set by the command
    line (a line without seed=3 whose inputs are not random is kept: tests/inprocess/test_inputs_used.py)."""
    argv = [
        *ONE_ARG,
        "+workload.params.features=256",
        "+workload.params.feature=128",
        "workload.args=[{shape:[${workload.params.features}]}]",
        "timing=quick",
    ]
    assert refusal(argv) == (
        "workload.params.feature=128 is invalid; did you mean workload.params.features? no argument of mine.f refers "
        "to it (${workload.params.feature}), so it would only label the rows; drop it, or use it in workload.args or "
        "workload.kwargs"
    )
    argv = [*ONE_ARG, "workload.args=[{shape:[${size}],init:arange}]", "timing=quick"]
    assert refusal([*argv, "seed=3"]) == (
        "seed=3 is invalid; no input is random (every array argument's init is zeros, ones or arange), so the seed "
        "changes nothing; drop it, or give an argument init: normal"
    )


# ---- item 6: the messages say what is true -----------------------------------------------------------------------


@pytest.fixture
def mine(tmp_path, monkeypatch):
    """A user module `mine_i51` (no JAX) on the path."""
    (tmp_path / "mine_i51.py").write_text(
        "def kwonly(x, *, scale):\n    return x * scale\n\n\n"
        "def setup(size, dtype, seed, **kw):\n    return ([0.0] * size,)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    import sys

    sys.modules.pop("mine_i51", None)


def test_a_missing_keyword_only_argument_is_named(mine):
    assert refusal(["workload=custom", "workload.fn=mine_i51.kwonly", "workload.args=[{shape:[${size}]}]"]) == (
        "workload.args is invalid; it lists 1 argument(s), but mine_i51.kwonly(x, *, scale) also needs the "
        "keyword-only argument 'scale': give it in workload.kwargs, e.g. +workload.kwargs.scale=VALUE"
    )


def test_a_setup_taking_kw_does_not_swallow_a_param(mine):
    argv = ["workload=custom", "workload.fn=mine_i51.kwonly", "workload.setup=mine_i51.setup"]
    assert refusal([*argv, "+workload.params.featurs=3"]) == (
        "workload.params.featurs=3 is invalid; mine_i51.setup(size, dtype, seed, **kw) does not name it, so its **kw "
        "would take it unread; name featurs in the setup's signature, or drop the param"
    )
