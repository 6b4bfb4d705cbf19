"""Issue 51's search through the command line: every key tests/unit/test_keys_used.py lists as REFUSED, set to a value
the chosen workload and mode cannot use, is refused by the preflight `jitexp` runs before anything runs, in one line
naming the key. Here rather than in tests/unit for its cost (45 Hydra composes, 7 s); no JAX is needed (the workload's
module imports none). The rules behind these refusals are tested one by one without Hydra in tests/unit
(test_usage.py, test_validate.py, test_inputs_used.py)."""

from __future__ import annotations

import sys

import pytest

from jitexp import ConfigError
from jitexp.engine import preflight
from unit.test_keys_used import REFUSED


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """keys_i51 (no JAX) on the path, and the working directory a scratch folder."""
    (tmp_path / "keys_i51.py").write_text(
        "def f(x):\n    return x\n\n\ndef s(size, dtype, seed):\n    return ([0.0] * size,)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    yield
    sys.modules.pop("keys_i51", None)


@pytest.mark.parametrize("key", list(REFUSED))
def test_a_value_the_job_cannot_use_is_refused_in_one_line_naming_the_key(key, user_module):
    with pytest.raises(ConfigError) as caught:
        preflight.check([*REFUSED[key], "timing=quick"])
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    assert key.removesuffix(".*") in message
