"""What a distributed.processes job's failed step says (engine.slurm_tasks): the rank that died first and its
last line, from srun's report and each rank's stderr file; and one line where srun is missing."""

from __future__ import annotations

import pytest

from jitexp import ConfigError
from jitexp.engine import slurm_tasks
from jitexp.errors import failure_of
from jitexp.records import STEP_STOPPED

# srun's stderr when rank 1 exits 3 and srun ends rank 0 (kill-on-bad-exit), as seen on the local cluster
RANK_ONE_EXITS = """srun: error: vm: task 1: Exited with exit code 3
srun: launch/slurm: _step_signal: Terminating StepId=54.0
srun: error: vm: task 0: Killed
srun: Force Terminated StepId=54.0
"""


def test_the_rank_that_died_first_is_named_with_its_own_last_line(tmp_path):
    (tmp_path / "rank-0.err").write_text("slurmstepd-vm: error: *** STEP 54.0 ON vm CANCELLED ***\n")
    (tmp_path / "rank-1.err").write_text("Traceback (most recent call last):\n  File x\nValueError: rank 1 gives up\n")
    failure = slurm_tasks._failure(tmp_path, RANK_ONE_EXITS, 3, "execute", 2)
    assert (failure.error_phase, failure.error_type) == ("execute", "exit 3")
    assert failure.error_message == "rank 1 of 2: ValueError: rank 1 gives up"
    assert "srun ended the others" in failure.hint


def test_a_rank_killed_by_a_signal_is_named_by_it(tmp_path):
    said = "srun: error: vm: task 0: Aborted (core dumped)\nsrun: error: vm: task 1: Killed\n"
    (tmp_path / "rank-0.err").write_text("Fatal Python error: Aborted\n")
    failure = slurm_tasks._failure(tmp_path, said, 134, "start", 2)
    assert (failure.error_phase, failure.error_type, failure.error_message) == (
        "crash",
        "SIGABRT",
        "rank 0 of 2: Fatal Python error: Aborted",
    )


def test_ranks_that_ended_alike_are_one_srun_line_and_the_first_is_named(tmp_path):
    (tmp_path / "rank-0.err").write_text("ValueError: both ranks raise this\n")
    failure = slurm_tasks._failure(tmp_path, "srun: error: vm: tasks 0-1: Exited with exit code 1\n", 1, "trace", 2)
    assert (failure.error_type, failure.error_message) == ("exit 1", "rank 0 of 2: ValueError: both ranks raise this")


def test_a_rank_whose_measurement_failed_says_so_in_jitexps_own_words(tmp_path):
    # the line the rank's worker writes (worker.rank), read back here
    line = failure_of("trace", ValueError("no sharded step today")).line()
    (tmp_path / "rank-1.err").write_text(f"{line}\n")
    said = f"srun: error: vm: task 1: Exited with exit code {STEP_STOPPED}\nsrun: error: vm: task 0: Killed\n"
    failure = slurm_tasks._failure(tmp_path, said, 1, "lower", 2)  # the phase rank 0 was in
    assert (failure.error_phase, failure.error_type) == ("trace", "ValueError")
    assert failure.error_message == "rank 1 of 2: no sharded step today"
    assert "one rank's failure ends them all" in failure.hint
    # a stopped rank whose last line is not in that form (a config problem's one line) is named as it said it
    (tmp_path / "rank-1.err").write_text("workload.shardings.1=['data'] is invalid; names no argument\n")
    failure = slurm_tasks._failure(tmp_path, said, 1, "lower", 2)
    assert (failure.error_phase, failure.error_type) == ("lower", "RankFailed")
    assert failure.error_message == "rank 1 of 2: workload.shardings.1=['data'] is invalid; names no argument"


def test_a_rank_that_died_on_its_own_is_named_before_one_that_stopped_when_its_collective_broke(tmp_path):
    (tmp_path / "rank-0.err").write_text("execute: jax.errors.JaxRuntimeError: gloo: connection closed by peer\n")
    (tmp_path / "rank-1.err").write_text("rank 1 gives up here\n")
    said = f"srun: error: vm: task 0: Exited with exit code {STEP_STOPPED}\nsrun: error: vm: task 1: Exited with exit code 3\n"
    failure = slurm_tasks._failure(tmp_path, said, 3, "execute", 2)
    assert (failure.error_type, failure.error_message) == ("exit 3", "rank 1 of 2: rank 1 gives up here")


def test_srun_failing_on_its_own_says_its_line(tmp_path):
    said = "srun: error: Unable to allocate resources: Requested node configuration is not available\n"
    failure = slurm_tasks._failure(tmp_path, said, 1, "start", 4)
    assert failure.error_type == "exit 1"
    assert failure.error_message == said.strip()


def test_without_srun_a_distributed_job_is_one_line_naming_the_key(monkeypatch):
    monkeypatch.setattr(slurm_tasks.shutil, "which", lambda name: None)
    slurm_tasks.check_srun(1)  # one process needs no SLURM
    with pytest.raises(ConfigError) as error:
        slurm_tasks.check_srun(2)
    message = str(error.value)
    assert message.startswith("distributed.processes=2 is invalid; ") and "srun, which is not on PATH" in message
    assert "\n" not in message
