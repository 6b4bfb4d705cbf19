"""The `jitexp` command: a thin @hydra.main around runner.run, writing the job's CSVs.

JAX is imported only inside the job, so `jitexp --help` and `jitexp --cfg job` start fast.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Sequence

import hydra
from hydra.core.hydra_config import HydraConfig
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf

from .config import ExperimentConfig, from_dict, register_configs
from .errors import ConfigError

log = logging.getLogger("jitexp")
CONFIG_MODULE = "jitexp.conf"


@hydra.main(version_base="1.3", config_path=f"pkg://{CONFIG_MODULE}", config_name="config")
def _job(cfg: DictConfig) -> None:
    hc = HydraConfig.get()
    multirun = hc.mode == RunMode.MULTIRUN
    job_num = int(hc.job.num) if multirun else 0
    # unresolved: an override may itself hold ${...} (workload.args=[{shape:[${size}]}])
    overrides = " ".join(OmegaConf.to_container(hc.overrides.task, resolve=False))
    out_dir = Path(hc.runtime.output_dir)
    from .results import write_job

    try:
        exp = from_dict(cfg)
        from .runner import run

        result = run(exp, job_num=job_num, overrides=overrides)
    except ConfigError as error:
        if not multirun:
            print(f"jitexp: error: {error}", file=sys.stderr)
            sys.exit(2)
        from .runner import config_error_result

        result = config_error_result(cfg, error, job_num=job_num, overrides=overrides)
    write_job(result, out_dir)
    from .tables import job_summary

    log.info(job_summary(result.rows))
    if not multirun:
        print(f"results: {out_dir}/ (next: jitexp-report {out_dir})")


def compose(overrides: Sequence[str] = ()) -> ExperimentConfig:
    """The ExperimentConfig that `jitexp OVERRIDES...` would run, for use from Python."""
    from hydra import compose as hydra_compose, initialize_config_module

    register_configs()
    with initialize_config_module(config_module=CONFIG_MODULE, version_base="1.3"):
        cfg = hydra_compose(config_name="config", overrides=list(overrides))
    return from_dict(cfg)


def main() -> None:
    """Console-script entry point (`jitexp` and `python -m jitexp`)."""
    # JAX logs at INFO that it found no TPU and that it resets its cache; Hydra's logging
    # config would print both every job.
    for name in ("jax._src.xla_bridge", "jax._src.compilation_cache"):
        logging.getLogger(name).setLevel(logging.WARNING)
    register_configs()
    _job()
