"""config/convert.py without Hydra: a composed config, given as the plain mapping it is, to a validated
ExperimentConfig. An interpolation that does not resolve is one line naming the key that refers to it, and the rows'
dtype follows the arguments when nothing follows the job's. The same through a command line:
tests/unit/test_inputs_used.py (a user's file) and tests/inprocess/test_inputs_used.py."""

from __future__ import annotations

import pytest

from jitexp.config import from_dict
from jitexp.errors import ConfigError


def job(*args, mode=None, **workload) -> dict:
    """A composed job of mine.f with the arguments given (jit by default)."""
    return {
        "workload": {"fn": "mine.f", "args": list(args), **workload},
        "mode": mode or {"jit": True},
        "size": 8,
        "dtype": "float32",
    }


def refusal(cfg: dict) -> str:
    with pytest.raises(ConfigError) as caught:
        from_dict(cfg)
    return str(caught.value)


@pytest.mark.parametrize(
    ("cfg", "written", "why"),
    [
        (
            job({"value": "${workload.params.scael}"}, params={"scale": 2.0}),
            "${workload.params.scael}",
            "refers to workload.params.scael, which does not exist; did you mean workload.params.scale?",
        ),
        (
            job({"value": "${workload.params.zzz}"}, params={"scale": 2.0, "n": 1}),
            "${workload.params.zzz}",
            "refers to workload.params.zzz, which does not exist; workload.params has scale, n",
        ),
        (
            job({"value": "${workload.params.zzz}"}),
            "${workload.params.zzz}",
            "refers to workload.params.zzz, which does not exist; workload.params has none",
        ),
        (
            job({"value": "${sise}"}),
            "${sise}",
            "refers to sise, which does not exist; did you mean size?",
        ),
        (
            job({"value": "${nosuch}"}),
            "${nosuch}",
            "refers to nosuch, which does not exist; the config has workload, mode, size, dtype",
        ),
        (
            job({"value": "${nosuch.deeper.key}"}),
            "${nosuch.deeper.key}",
            "refers to nosuch.deeper.key, which does not exist; nosuch.deeper has none",
        ),
    ],
)
def test_an_interpolation_to_a_missing_key_names_the_key_that_refers_to_it(cfg, written, why):
    assert refusal(cfg) == f"workload.args[0].value={written!r} is invalid; {why}"


def test_a_resolver_that_fails_is_one_line_naming_the_key():
    message = refusal(job({"value": "${oc.env:JITEXP_NO_SUCH}"}))
    assert message.startswith("workload.args[0].value='${oc.env:JITEXP_NO_SUCH}' is invalid; cannot be resolved: ")
    assert "JITEXP_NO_SUCH" in message.partition("cannot be resolved")[2]


@pytest.mark.parametrize(
    ("args", "dtype"),
    [
        ([{"shape": [64], "dtype": "float64"}], "float64"),  # nothing follows the job's: the arguments' own
        ([{"shape": [64], "dtype": "float64"}, {"shape": [64]}], "float32"),  # one follows it
        ([{"shape": [64], "dtype": "float64"}, {"shape": [64], "dtype": "float16"}], "float32"),  # no one dtype
    ],
)
def test_the_rows_dtype_is_the_arguments_own_when_nothing_follows_the_jobs(args, dtype):
    assert from_dict(job(*args)).dtype == dtype
