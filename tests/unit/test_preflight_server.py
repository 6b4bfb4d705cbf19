"""Preflight starts the forkserver early only for jobs whose workers fork from this process."""

from __future__ import annotations

import dataclasses

from omegaconf import OmegaConf

from jitexp.config.schema import DistributedConfig, ExperimentConfig
from jitexp.engine.preflight import _runs_here_in_fresh_processes

BASIC = "hydra._internal.core_plugins.basic_launcher.BasicLauncher"
SLURM = "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher"


def hydra_cfg(target: str | None, env_set: dict | None = None):
    job = {"env_set": env_set or {}}
    return OmegaConf.create({"hydra": {"launcher": {"_target_": target}, "job": job}} if target else {})


def test_a_local_job_in_fresh_processes_starts_the_server_and_the_others_do_not():
    job = ExperimentConfig()
    assert _runs_here_in_fresh_processes(job, hydra_cfg(BASIC))
    assert not _runs_here_in_fresh_processes(job, hydra_cfg(SLURM))  # the job runs on a node, its workers there
    assert not _runs_here_in_fresh_processes(job, hydra_cfg(None))  # no launcher known: nothing started
    # Hydra sets env_set's variables when the job starts: a server started before would not see them
    assert not _runs_here_in_fresh_processes(job, hydra_cfg(BASIC, {"XLA_FLAGS": "--xla_cpu_use_thunk_runtime=false"}))
    assert not _runs_here_in_fresh_processes(dataclasses.replace(job, isolate="none"), hydra_cfg(BASIC))
    assert not _runs_here_in_fresh_processes(dataclasses.replace(job, envs={"old": "/x/python"}), hydra_cfg(BASIC))
    two_ranks = dataclasses.replace(job, distributed=DistributedConfig(processes=2))
    assert not _runs_here_in_fresh_processes(two_ranks, hydra_cfg(BASIC))  # srun steps start the ranks
