"""hydra/sweeper=tune: Hydra's Sweeper interface over jitexp.engine.tune.Study (Optuna's ask/tell)."""

from __future__ import annotations

from typing import Any

from hydra.plugins.sweeper import Sweeper
from hydra.types import HydraContext, TaskFunction
from omegaconf import DictConfig


class TuneSweeper(Sweeper):
    """Searches hydra.sweeper.params (Hydra's choice/range/interval syntax) for the lowest tune.objective."""

    def __init__(self, params: dict[str, Any] | None = None, n_jobs: int = 1) -> None:
        self.params = dict(params or {})
        self.n_jobs = n_jobs
        self.config: DictConfig | None = None
        self.hydra_context: HydraContext | None = None

    def setup(self, *, hydra_context: HydraContext, task_function: TaskFunction, config: DictConfig) -> None:
        from hydra.core.plugins import Plugins

        self.config = config
        self.hydra_context = hydra_context
        self.launcher = Plugins.instance().instantiate_launcher(
            hydra_context=hydra_context, task_function=task_function, config=config
        )

    def sweep(self, arguments: list[str]) -> Any:
        from hydra.core.override_parser.overrides_parser import OverridesParser

        from jitexp.engine.tune import Study
        from jitexp.engine.tune_space import read_space

        assert self.hydra_context is not None and self.config is not None  # setup() ran
        parser = OverridesParser.create(config_loader=self.hydra_context.config_loader)
        space = read_space(self.params, arguments, parser)
        Study(self.config, self.launcher, space, self.n_jobs).run()
        return None
