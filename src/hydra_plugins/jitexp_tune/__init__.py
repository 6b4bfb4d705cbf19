"""jitexp's tune sweeper, found by Hydra in its hydra_plugins namespace (hydra/sweeper=tune)."""
