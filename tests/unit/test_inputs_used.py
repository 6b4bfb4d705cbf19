"""Issue 51: every input is used or refused, before anything runs (the preflight needs no JAX: these mistakes are
found before any function is imported). Each case is the command line's one line: the key, the value written and
what is wrong or what to write instead (`jitexp` prints it as `jitexp: error: ...` and exits 2:
tests/e2e/test_config_mistakes_cli.py)."""

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


def test_an_interpolation_in_a_users_workload_file_names_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = write_option(
        tmp_path, "workload", "fn: mine.f\nparams: {scale: 1.0}\nargs:\n  - value: ${workload.params.scael}\n"
    )
    assert refusal(["--config-dir", "conf", "workload=mine"]) == (
        f"{name}: workload.args[0].value='${{workload.params.scael}}' is invalid; refers to "
        "workload.params.scael, which does not exist; did you mean workload.params.scale?"
    )


def test_a_resolver_that_fails_is_one_line_naming_the_key():
    message = refusal(["workload=custom", "workload.fn=mine.f", "workload.args=[{value: '${oc.env:JITEXP_NO_SUCH}'}]"])
    assert message.startswith("workload.args[0].value='${oc.env:JITEXP_NO_SUCH}' is invalid; cannot be resolved: ")
    assert "JITEXP_NO_SUCH" in message.partition("cannot be resolved")[2]
