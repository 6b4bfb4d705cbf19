"""engine.tune.Study's loop with a launcher of its own (no process, no JAX): each "job" returns rows whose time
depends on the searched k in a known way. The sampler (Optuna) and the journal in tmp_path are real."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from omegaconf import OmegaConf

pytest.importorskip("optuna")

from hydra.core.override_parser.overrides_parser import OverridesParser  # noqa: E402
from hydra.core.utils import JobReturn, JobStatus  # noqa: E402

from jitexp.engine.tune import TRIALS_CSV, Study, job_return  # noqa: E402
from jitexp.engine.tune_space import read_space  # noqa: E402


def time_of(k: int) -> float:
    return 1e-3 * (1 + abs(k - 4))  # the planted optimum: k=4


class FakeLauncher:
    """Runs nothing: a job with workload.params.k=K returns rows timed by time_of(K); fails on K in `fails`, raises
    (as a launcher whose SLURM job died) on K in `dies`, reads 5x slower with a wide interval on K in `burst` (a trial
    measured in a burst of load); the runoff job returns a row per variant, timed by time_of; the confirmation job
    returns its two variants, paired."""

    def __init__(self, fails=(), dies=(), examples=None, burst=()):
        self.fails, self.dies, self.burst, self.launched, self.calls = set(fails), set(dies), set(burst), [], []
        self.examples = examples  # k -> the examples a call holds (tune.examples), None: per call

    def launch(self, jobs, initial_job_idx):
        self.calls.append(len(jobs))
        out = []
        for i, overrides in enumerate(jobs):
            self.launched.append((initial_job_idx + i, overrides))
            values = dict(o.lstrip("+").split("=", 1) for o in overrides if "=" in o and not o.startswith("variants"))
            if values.get("hydra.sweep.subdir") == "runoff":
                found = re.findall(
                    r"(\w+):\{workload\.params\.k:(\d+)\}", next(o for o in overrides if o.startswith("variants="))
                )
                rows = [row(int(k), variant=name) for name, k in found]
                k = int(found[0][1])  # the runoff job's own config is its first contender's
            elif any(o.startswith("variants=") for o in overrides):
                rows = [row(1, variant="baseline"), {**row(4, variant="best"), **paired(time_of(4) / time_of(1))}]
                k = 1  # the confirmation job's own config is the baseline's
            else:
                k = int(values["workload.params.k"])
                if k in self.dies:
                    raise RuntimeError(f"job for k={k} died on its node")
                rows = [row(k, error=k in self.fails, burst=k in self.burst)]
            tune = OmegaConf.create({"objective": "steady", "examples": self.examples(k) if self.examples else None})
            out.append(JobReturn(status=JobStatus.COMPLETED, _return_value=job_return(rows, tune)))
        return out


def row(k: int, *, error: bool = False, variant=None, burst: bool = False) -> dict:
    if error:
        return {
            "mode": "jit",
            "status": "error",
            "error_phase": "compile",
            "error_message": "bad k",
            "variant": variant,
        }
    t = time_of(k)
    return {
        "mode": "jit",
        "status": "ok",
        "median_s": 5 * t if burst else t,
        "ci95_low_s": t if burst else 0.97 * t,
        "ci95_high_s": 6 * t if burst else 1.03 * t,
        "variant": variant,
    }


def paired(ratio: float) -> dict:
    return {"ab_steady_ratio": ratio, "ab_steady_ratio_ci_low": 0.9 * ratio, "ab_steady_ratio_ci_high": 1.1 * ratio}


def study(root: Path, launcher, *, trials: int, choices: str, resume=False, confirm=6, n_jobs=1, runoff=6) -> Study:
    config = OmegaConf.create(
        {
            "hydra": {"sweep": {"dir": str(root)}, "runtime": {"choices": {"workload": "custom"}}},
            "workload": {"params": {"k": 1}},
            "tune": {"objective": "steady", "trials": trials, "baseline": None, "seed": 0,
                     "confirm_processes": confirm, "examples": None, "runoff": runoff},
            "resume": resume,
            "overwrite": False,
        }
    )  # fmt: skip
    space = read_space({"workload.params.k": choices}, ["mode=jit"], OverridesParser.create())
    return Study(config, launcher, space, n_jobs)


def test_a_study_measures_each_point_once_finds_the_optimum_and_confirms_it(tmp_path, capsys):
    launcher = FakeLauncher(fails={8})
    study(tmp_path, launcher, trials=10, choices="choice(1,2,4,8)").run()
    printed = capsys.readouterr().out
    jobs = [num for num, overrides in launcher.launched if not any(o.startswith("variants") for o in overrides)]
    assert jobs == [0, 1, 2, 3]  # 4 points, each once: the space is exhausted before 10 trials
    assert "every one of the space's 4 points is measured" in printed
    assert "best: k=4: 4x faster than the baseline (95% CI 3.64x-4.44x)" in printed
    trials = (tmp_path / TRIALS_CSV).read_text()
    assert "bad k" in trials and trials.count("\n") == 5


def test_a_job_the_launcher_loses_is_a_failed_trial_and_the_study_goes_on(tmp_path):
    launcher = FakeLauncher(dies={1, 2, 3})
    s = study(tmp_path, launcher, trials=4, choices="choice(1,2,3,4)", confirm=0)
    s.run()
    assert s.measured() == 4
    assert sorted(s.reasons.values()) == [
        f"the launcher failed: RuntimeError: job for k={k} died on its node" for k in (1, 2, 3)
    ]
    best = s.best()
    assert best is not None and best.params == {"workload.params.k": 4}


def trial_jobs(launcher: FakeLauncher) -> list[int]:
    """The trials' job numbers, the runoff's and the confirmation's jobs (variants) left out."""
    return [num for num, overrides in launcher.launched if not any(o.startswith("variants") for o in overrides)]


def interrupted(s: Study, k: int, job: int) -> None:
    """A trial asked and given its job folder, never told (its process died)."""
    s.study.enqueue_trial({"workload.params.k": k})
    trial = s.study.ask(s.study.trials[0].distributions)
    trial.set_user_attr("job", job)


def test_a_resumed_study_runs_the_interrupted_trial_in_its_folder_and_asks_only_the_rest(tmp_path):
    s = study(tmp_path, FakeLauncher(), trials=2, choices="choice(1,2,3,4,5,6)", confirm=0)
    s.run()
    measured = {r.params["workload.params.k"] for r in s.measured_records()}
    [unmeasured, *_] = sorted({1, 2, 3, 4, 5, 6} - measured)
    interrupted(s, unmeasured, job=2)
    again = FakeLauncher()
    resumed = study(tmp_path, again, trials=4, choices="choice(1,2,3,4,5,6)", resume=True, confirm=0)
    resumed.run()
    assert again.launched[0] == (2, ["mode=jit", f"workload.params.k={unmeasured}"])  # in its own folder
    assert trial_jobs(again) == [2, 3]  # then one new: 4 trials in all
    params = [r.params["workload.params.k"] for r in resumed.measured_records()]
    assert len(params) == 4 and len(set(params)) == 4


def test_an_interrupted_trial_of_a_point_measured_since_is_not_measured_again(tmp_path):
    s = study(tmp_path, FakeLauncher(), trials=2, choices="choice(1,2,3,4,5,6)", confirm=0)
    s.run()
    [(_, done), *_] = [(r.job, r.params["workload.params.k"]) for r in s.measured_records()]
    interrupted(s, done, job=2)
    again = FakeLauncher()
    resumed = study(tmp_path, again, trials=3, choices="choice(1,2,3,4,5,6)", resume=True, confirm=0)
    resumed.run()
    assert trial_jobs(again) == [2]  # folder 2 goes to a new point; the repeat measures nothing
    assert f"workload.params.k={done}" not in again.launched[0][1]
    assert resumed.measured() == 3


def test_a_new_study_in_a_folder_holding_one_is_refused(tmp_path):
    from jitexp.errors import ConfigError

    study(tmp_path, FakeLauncher(), trials=1, choices="choice(1,2)", confirm=0).run()
    with pytest.raises(ConfigError, match="resume=true continues it"):
        study(tmp_path, FakeLauncher(), trials=1, choices="choice(1,2)", confirm=0).run()


def test_n_jobs_trials_are_launched_together_in_consecutive_folders(tmp_path):
    launcher = FakeLauncher()
    s = study(tmp_path, launcher, trials=5, choices="choice(1,2,3,4,5,6)", confirm=0, n_jobs=2, runoff=0)
    s.run()
    assert launcher.calls == [2, 2, 1] and [num for num, _ in launcher.launched] == [0, 1, 2, 3, 4]
    assert len({r.params["workload.params.k"] for r in s.measured_records()}) == 5


def test_a_confirmation_whose_sides_hold_other_numbers_of_examples_says_its_job_line_is_per_call(tmp_path, capsys):
    """A batch searched per example: the confirmation job's own line compares calls (the best's, 4x the examples, reads
    slower), so a line says so above the per-example verdict; a study per call prints no such line."""
    study(tmp_path / "per_example", FakeLauncher(examples=lambda k: 8.0 * k), trials=4, choices="choice(1,2,4,8)").run()
    printed = capsys.readouterr().out
    note = "tune: that job's line compares calls; a call of the baseline holds 8 examples, the best's 32"
    assert note in printed and printed.index(note) < printed.index("best: k=4")
    study(tmp_path / "per_call", FakeLauncher(), trials=4, choices="choice(1,2,4,8)").run()
    assert "compares calls" not in capsys.readouterr().out


def test_the_runoff_names_the_best_a_burst_of_load_hid_in_the_search(tmp_path, capsys):
    """k=4 (the fastest) measured in a burst reads 5x slower in its trial, its interval wide: the runoff measures it
    again beside the leader and names it the best; without the runoff the search's leader stands."""
    s = study(tmp_path / "runoff", FakeLauncher(burst={4}), trials=6, choices="choice(1,2,3,4,5,6)", confirm=0)
    s.run()
    printed = capsys.readouterr().out
    best = s.best()
    assert best is not None and best.params == {"workload.params.k": 4}
    [runoff] = [o for _, o in s.launcher.launched if "hydra.sweep.subdir=runoff" in o]
    assert "timing.processes=6" in runoff and any("workload.params.k:4" in o for o in runoff)
    assert "tune: runoff: trials" in printed and "in the runoff" in printed
    trials = __import__("pandas").read_csv(tmp_path / "runoff" / TRIALS_CSV)
    row = trials[trials["best"]].iloc[0]
    assert row["param_workload.params.k"] == 4 and row["runoff_0"] == pytest.approx(1e-3)
    plain = study(
        tmp_path / "plain", FakeLauncher(burst={4}), trials=6, choices="choice(1,2,3,4,5,6)", confirm=0, runoff=0
    )
    plain.run()
    leader = plain.best()
    assert leader is not None and leader.params["workload.params.k"] in (3, 5)


def test_a_runoff_job_that_fails_leaves_the_search_to_name_the_best(tmp_path, capsys):
    class Dying(FakeLauncher):
        def launch(self, jobs, initial_job_idx):
            if any("hydra.sweep.subdir=runoff" in o for o in jobs[0]):
                raise RuntimeError("the runoff's SLURM job died")
            return super().launch(jobs, initial_job_idx)

    s = study(tmp_path, Dying(burst={4}), trials=6, choices="choice(1,2,3,4,5,6)", confirm=0)
    s.run()
    assert "the runoff job failed (RuntimeError: the runoff's SLURM job died)" in capsys.readouterr().out
    best = s.best()
    assert best is not None and best.params["workload.params.k"] in (3, 5)
