"""timing.interleave=processes from hand-made worker results: processes of one mode each, in the runner's
alternating order, become pairs whose rows are those of processes that measured every mode (no processes, no JAX).
The real job: tests/e2e/test_runner_processes.py."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from jitexp.analysis.rows import job_result
from jitexp.analysis.stats import Unpaired, hierarchical_medians, point_medians
from jitexp.config import ExperimentConfig, TimingConfig, from_dict
from jitexp.engine.mode_processes import merged_pairs
from jitexp.engine.pyenvs import env_of
from jitexp.errors import ConfigError, Failure
from jitexp.records import JobRaw, Noise, ProcessResult
from unit.test_rows import config, mode

MODES = ("eager", "jit")


def alone(k: int, ratio: float = 2.0, rounds: dict[str, int] | None = None) -> ProcessResult:
    """The job's k-th process as the runner starts it: one mode (eager, jit, jit, eager, ...), its own rounds;
    pair p runs `ratio` times faster under jit, the level drifting 10% a pair."""
    which = env_of(k, list(MODES))
    p = k // len(MODES)
    level = 1e-3 * (1 + 0.1 * p)
    seconds = 2 * level if which == "eager" else 2 * level / ratio
    n = (rounds or {"eager": 11, "jit": 30})[which]
    return ProcessResult(
        k,
        {which: mode(seconds, rounds=n, position=0)},
        platform="cpu",
        device_kind="cpu",
        measure_s=1.0,
        noise=Noise(steal=0.01 * k, under_steal=False),
    )


def test_processes_alternate_and_pair_by_index():
    results = [alone(k) for k in range(6)]  # eager, jit, jit, eager, eager, jit
    assert [next(iter(r.modes)) for r in results] == ["eager", "jit", "jit", "eager", "eager", "jit"]
    pairs = merged_pairs(results, MODES)
    assert [p.process for p in pairs] == [0, 1, 2]
    # pair 1 is the jit process started third with the eager process started fourth
    assert pairs[1].modes["jit"] is results[2].modes["jit"] and pairs[1].modes["eager"] is results[3].modes["eager"]
    assert pairs[1].noise.steal == pytest.approx(0.03)  # the larger of its two processes'
    assert pairs[1].measure_s == 2.0


def test_a_process_that_crashed_is_its_own_mode_s_failure_not_the_pair_s():
    results = [alone(k) for k in range(2)]
    results[1] = dataclasses.replace(results[1], modes={}, error=Failure("execute", "Crash", "died", ""))
    (pair,) = merged_pairs(results, MODES)
    assert pair.error is None and pair.modes["jit"].error.error_type == "Crash"
    assert pair.modes["eager"] is results[0].modes["eager"]  # eager's own process was fine


def test_pairs_with_rounds_of_their_own_give_the_paired_speedup_and_each_mode_its_own_figures():
    results = [alone(k) for k in range(12)]
    raw = JobRaw(merged_pairs(results, MODES), "ci", load_avg_start=0.0, load_avg_end=0.0)
    cfg = dataclasses.replace(config(*MODES), timing=TimingConfig(interleave="processes"))
    rows = job_result(cfg, raw)
    eager, jit = rows.by_mode("eager"), rows.by_mode("jit")
    assert jit["speedup"] == pytest.approx(2.0, rel=0.01) and jit["verdict"] == "faster"
    assert (jit["n_processes"], jit["interleave"]) == (6, "processes")
    # the level drifted 1.0 .. 1.5 over the pairs: the speedup's CI stays tight because each pair shares it
    assert jit["speedup_ci_high"] / jit["speedup_ci_low"] < 1.05
    assert eager["n_samples"] == 6 * 11 and jit["n_samples"] == 6 * 30  # every round of every process counts
    assert {p["cold_position"] for p in rows.processes} == {0}  # each mode cold in a fresh process


def test_unpaired_rounds_are_resampled_each_on_their_own():
    rng = np.random.default_rng(0)
    paired = [rng.lognormal(0, 0.1, size=(20, 2)) for _ in range(4)]
    unpaired = [Unpaired([g[:, 0], g[:12, 1]]) for g in paired]
    assert point_medians(unpaired)[0] == pytest.approx(point_medians(paired)[0])
    boot = hierarchical_medians(unpaired, n_resamples=200)
    assert boot.shape == (200, 2) and np.all(np.isfinite(boot))
    with pytest.raises(ValueError, match="at least one round"):
        hierarchical_medians([Unpaired([np.ones(3), np.ones(0)])])


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (
            {"timing": {"interleave": "sideways"}},
            "timing.interleave='sideways' is invalid; valid choices: rounds, processes",
        ),
        ({"timing": {"interleave": "processes"}, "isolate": "none"}, "needs isolate=process"),
        (
            {"timing": {"interleave": "processes"}, "variants": {"a": {"size": 8}, "b": {"size": 16}}},
            "cannot be combined with variants",
        ),
        (
            {"timing": {"interleave": "processes"}, "envs": {"a": "/usr/bin/python3", "b": "/usr/bin/python3"}},
            "cannot be combined with envs",
        ),
    ],
)
def test_mistakes_are_one_line(extra, said):
    base = {"workload": {"fn": "jitexp.workloads.add_one", "args": [{"shape": [8]}]}}
    with pytest.raises(ConfigError, match=said.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        from_dict({**base, **extra})
    assert ExperimentConfig().timing.interleave == "rounds"
