"""The `jitexp` command: a thin @hydra.main around runner.run, writing the job's CSVs.

JAX, NumPy and pandas are imported only inside the job, so `jitexp --help` and
`jitexp --cfg job` start fast. Config mistakes are caught before Hydra runs (preflight.py).
"""

from __future__ import annotations

import logging
import os
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


def compose(overrides: Sequence[str] = (), config_dir: str | None = None) -> ExperimentConfig:
    """The ExperimentConfig that `jitexp OVERRIDES...` would run, for use from Python."""
    from .preflight import compose as checked_compose

    return checked_compose(overrides, config_dir)


def main() -> None:
    """Console-script entry point (`jitexp` and `python -m jitexp`)."""
    # The current directory is importable for workload.fn, as it is for `python -m` and pytest.
    if os.getcwd() not in sys.path[:1]:
        sys.path.insert(0, os.getcwd())
    argv = sys.argv[1:]
    if "--version" in argv:
        from .helptext import version_text

        print(version_text())
        return
    # JAX logs at INFO that it found no TPU and that it resets its cache; Hydra's logging
    # config would print both every job.
    for name in ("jax._src.xla_bridge", "jax._src.compilation_cache"):
        logging.getLogger(name).setLevel(logging.WARNING)
    register_configs()
    from . import helptext, preflight

    helptext.register_resolvers()
    try:
        if "--help" in argv or "-h" in argv:
            print(helptext.help_page(argv))
            return
        preflight.check(argv)
    except ConfigError as error:
        if os.environ.get("HYDRA_FULL_ERROR") == "1":
            raise
        print(f"jitexp: error: {error}", file=sys.stderr)
        sys.exit(2)
    _job()
