"""The confirmation of a best that sets an XLA option the config lacks: the baseline runs without the option (the
compiler's default, as the user runs it), not "no baseline value" (found on the TPU: experiment=tune_matmul_tpu)."""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

pytest.importorskip("optuna")

from hydra.core.override_parser.overrides_parser import OverridesParser  # noqa: E402
from hydra.core.utils import JobReturn, JobStatus  # noqa: E402

from jitexp.analysis.tune import TrialRecord  # noqa: E402
from jitexp.engine.tune import Study, job_return  # noqa: E402
from jitexp.engine.tune_space import read_space  # noqa: E402

OPTION = "mode.compiler_options.xla_cpu_enable_fast_math"


class ConfirmLauncher:
    """The confirmation job alone: keeps its overrides and returns its two variants, the best 2x faster, paired."""

    def __init__(self):
        self.launched: list[list[str]] = []

    def launch(self, jobs, initial_job_idx):
        self.launched += jobs
        rows = [
            {"mode": "jit", "status": "ok", "median_s": 2e-3, "variant": "baseline"},
            {"mode": "jit", "status": "ok", "median_s": 1e-3, "variant": "best", "ab_steady_ratio": 0.5,
             "ab_steady_ratio_ci_low": 0.45, "ab_steady_ratio_ci_high": 0.55},
        ]  # fmt: skip
        tune = OmegaConf.create({"objective": "steady", "examples": None})
        return [JobReturn(status=JobStatus.COMPLETED, _return_value=job_return(rows, tune))]


def test_an_option_the_config_lacks_is_unset_in_the_baseline_and_the_best_is_confirmed(tmp_path):
    config = OmegaConf.create(
        {
            "hydra": {"sweep": {"dir": str(tmp_path)}, "runtime": {"choices": {"workload": "matmul"}}},
            "dtype": "float32",
            "mode": {"compiler_options": {}},
            "tune": {"objective": "steady", "trials": 4, "baseline": None, "seed": 0,
                     "confirm_processes": 6, "examples": None, "runoff": 0},
            "resume": False,
            "overwrite": False,
        }
    )  # fmt: skip
    space = read_space(
        {"dtype": "choice(float32,bfloat16)", OPTION: "choice(true,false)"}, ["mode=jit"], OverridesParser.create()
    )
    launcher = ConfirmLauncher()
    study = Study(config, launcher, space, 1)
    assert [d.add for d in study.space.dimensions] == [False, True]
    verdict = study.confirm(TrialRecord(number=3, params={"dtype": "bfloat16", OPTION: True}, state="COMPLETE", job=3))
    [job] = launcher.launched
    assert f"variants={{baseline:{{dtype:float32}},best:{{dtype:bfloat16,{OPTION}:true}}}}" in job
    assert not any(o.lstrip("+").startswith(OPTION) for o in job)  # the job's own config (the baseline's) lacks it
    assert verdict.ratio == pytest.approx(2.0) and verdict.faster
