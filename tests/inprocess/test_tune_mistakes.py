"""hydra/sweeper=tune's mistakes, refused by the preflight before any trial runs, one line each naming the key."""

from __future__ import annotations

import pytest

from jitexp import ConfigError
from jitexp.engine import preflight
from jitexp.engine.tune_space import quoted_params

TUNE = ["-m", "hydra/sweeper=tune", "workload=apply_n_times", "timing=quick"]


@pytest.mark.parametrize(
    ("args", "key", "words"),
    [
        (["hydra/sweeper=tune", "workload=apply_n_times", "workload.params.n=3"], "hydra/sweeper", "add -m"),
        ([*TUNE, "size=64"], "hydra.sweeper.params", "searches no key"),
        ([*TUNE, "workload.params.nn=choice(1,2)"], "workload.params.nn", "did you mean workload.params.n"),
        ([*TUNE, "workload.params.n=glob(*)"], "workload.params.n", "glob() is not searched"),
        ([*TUNE, "workload.params.n=choice(1,1)"], "workload.params.n", "names a value twice"),
        ([*TUNE, "workload.params.n=choice(1,2)", "tune.objective=fast"], "tune.objective", "valid choices: steady"),
        ([*TUNE, "workload.params.n=choice(1,2)", "tune.confirm_processes=3"], "tune.confirm_processes", ">= 6"),
        ([*TUNE, "workload.params.n=choice(1,2)", "tune.runoff=1"], "tune.runoff", "0 (no runoff) or >= 2"),
        ([*TUNE, "workload.params.n=choice(-1,2)"], "workload.params.n", ">= 0"),  # the workload's own check
    ],
)
def test_a_tune_mistake_is_one_line_naming_the_key(args, key, words):
    with pytest.raises(ConfigError) as caught:
        preflight.check(quoted_params(args))
    message = str(caught.value)
    assert "\n" not in message and message.startswith(key) and words in message, message


def test_a_search_in_hydra_sweeper_params_on_the_command_line_passes():
    assert len(preflight.check(quoted_params([*TUNE, "hydra.sweeper.params.workload.params.n=choice(1,2)"]))) == 1


def test_a_folder_holding_a_study_is_refused_without_resume_or_overwrite(tmp_path):
    (tmp_path / "study.journal").write_text("")  # a study that crashed before its first trial's rows
    args = [*TUNE, "workload.params.n=choice(1,2)", f"hydra.sweep.dir={tmp_path}"]
    with pytest.raises(ConfigError) as caught:
        preflight.check(args)
    assert str(caught.value).startswith("hydra.sweep.dir=") and "resume=true continues it" in str(caught.value)
    assert len(preflight.check([*args, "resume=true"])) == 1
