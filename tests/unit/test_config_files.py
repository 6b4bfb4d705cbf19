"""A mistake inside a user's own config file (issue 19) is the command line's one line, naming the file, the key,
the value and the fix: found by the preflight before any function is imported. Mistakes that need the function
(its arity) and the command line's own mistakes: tests/inprocess/test_config_mistakes.py.

Each is a Hydra compose with a --config-dir (0.1-0.2 s): each way a file's mistake is found (a key or type Hydra refuses
while merging it, a key the config then lacks, a value the checks refuse, in a group's file and in an experiment's
global one) is here once; IN_FILES' other cases, and a sweep, in tests/inprocess/test_config_mistakes.py."""

from __future__ import annotations

import pytest

from jitexp import ConfigError
from jitexp.engine import preflight

MATMUL = "fn: jitexp.workloads.matmul\nargs: [{shape: [4, 4]}, {shape: [4, 4]}]\n"
GLOBAL = "# @package _global_\n"

# (group, kind) -> (the user's file conf/<group>/mine.yaml, text the one line must hold after "<file>: ")
IN_FILES = {
    ("workload", "unknown key"): (
        MATMUL + "statc_argnums: [0]\n",
        "workload.statc_argnums=[0] is invalid; no such key; did you mean workload.static_argnums?",
    ),
    ("workload", "wrong type"): (
        MATMUL + "static_argnums: abc\n",
        "workload.static_argnums='abc' is invalid; must be a list of integers",
    ),
    ("workload", "missing key"): (
        "args: [{shape: [4, 4]}, {shape: [4, 4]}]\n",
        "workload.fn is invalid; needs an import path like package.module.function",
    ),
    ("workload", "missing args or setup"): (
        "fn: jitexp.workloads.matmul\n",
        "workload.args is invalid; needs the function's arguments",
    ),
    ("workload", "bad array key"): (
        "fn: jitexp.workloads.matmul\nargs: [{shap: [4, 4]}, {shape: [4, 4]}]\n",
        "workload.args[0].shap=[4, 4] is invalid; did you mean workload.args[0].shape?",
    ),
    ("mode", "unknown key"): (
        "jit: true\nstatic_argnum: [0]\n",
        "mode.static_argnum=[0] is invalid; no such key; did you mean mode.static_argnums?",
    ),
    ("mode", "wrong type"): ("jit: maybe\n", "mode.jit='maybe' is invalid; must be true or false"),
    ("mode", "missing key"): ("static_argnums: null\n", "mode=[] is invalid; select at least one mode"),
    ("timing", "unknown key"): (
        "procesess: 3\n",
        "timing.procesess=3 is invalid; no such key; did you mean timing.processes?",
    ),
    ("timing", "wrong type"): ("processes: many\n", "timing.processes='many' is invalid; must be an integer"),
    ("timing", "missing key"): (
        "processes: 13\n",  # raising processes needs max_processes (default 12) too
        "timing.max_processes=12 is invalid; must be >= timing.processes (13)",
    ),
    ("device", "unknown key"): (
        "platfrom: cpu\n",
        "device.platfrom='cpu' is invalid; no such key; did you mean device.platform?",
    ),
    ("device", "wrong type"): ("index: first\n", "device.index='first' is invalid; must be an integer"),
    ("experiment", "unknown key"): (
        GLOBAL + "timing:\n  warmpu: 2\n",
        "timing.warmpu=2 is invalid; no such key; did you mean timing.warmup?",
    ),
    ("experiment", "wrong type"): (GLOBAL + "size: big\n", "size='big' is invalid; must be an integer"),
    ("experiment", "missing key"): (
        GLOBAL + "defaults:\n  - override /workload: custom\nworkload:\n  fn: jitexp.workloads.matmul\n",
        "workload.args is invalid; needs the function's arguments",
    ),
    ("experiment", "bad value"): (
        GLOBAL + "defaults:\n  - override /workload: apply_n_times\nworkload:\n  params:\n    n: abc\n",
        "workload.params.n='abc' is invalid; must be an integer like its default (3)",
    ),
}


def write_option(root, group: str, text: str) -> str:
    """conf/<group>/mine.yaml under root, holding text; returns its path relative to root."""
    (root / "conf" / group).mkdir(parents=True, exist_ok=True)
    (root / "conf" / group / "mine.yaml").write_text(text)
    return f"conf/{group}/mine.yaml"


# one case of each way a file's mistake is found: the rest of IN_FILES in tests/inprocess/test_config_mistakes.py
HERE = [
    ("workload", "unknown key"),  # Hydra refuses it while merging the file (compose._in_file)
    ("mode", "wrong type"),
    ("workload", "missing key"),  # the config lacks it after composing: the file that set the node is named
    ("experiment", "unknown key"),  # a global (_global_) file
    ("experiment", "bad value"),  # a param's type, refused after composing
]


@pytest.mark.parametrize("group, kind", HERE)
def test_a_mistake_in_a_users_file_is_one_line_naming_file_key_value_and_fix(group, kind, tmp_path, monkeypatch):
    in_file(group, kind, tmp_path, monkeypatch)


def in_file(group: str, kind: str, tmp_path, monkeypatch) -> None:
    """IN_FILES' case: the user's file written, the command line's one line naming it."""
    text, expected = IN_FILES[(group, kind)]
    monkeypatch.chdir(tmp_path)
    name = write_option(tmp_path, group, text)
    with pytest.raises(ConfigError) as caught:
        preflight.check(["--config-dir", "conf", f"{group}=mine"])
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{name}: {expected}"), message
    assert caught.value.source == name


def test_a_bad_value_the_command_line_replaces_names_no_file(tmp_path, monkeypatch):
    """The file's `init: gaussian` is replaced on the command line by `init: bad`: the mistake is the command line's."""
    monkeypatch.chdir(tmp_path)
    write_option(
        tmp_path, "workload", "fn: jitexp.workloads.matmul\nargs: [{shape: [4, 4], init: gaussian}, {shape: [4, 4]}]\n"
    )
    with pytest.raises(ConfigError) as caught:
        preflight.check(
            ["--config-dir", "conf", "workload=mine", "workload.args=[{shape:[2,2],init:bad},{shape:[2,2]}]"]
        )
    assert str(caught.value).startswith("workload.args[0].init='bad' is invalid; valid choices: normal")
    assert caught.value.source is None


def test_a_file_that_is_not_yaml_is_named_with_its_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = write_option(tmp_path, "workload", "fn: jitexp.workloads.matmul\nargs: [{shape: [4, 4]}, {shape: [4, 4]\n")
    with pytest.raises(ConfigError) as caught:
        preflight.check(["--config-dir", "conf", "workload=mine"])
    assert str(caught.value).startswith(f"{name}:3:1: workload='mine' is invalid; not valid YAML: expected ',' or '}}'")
