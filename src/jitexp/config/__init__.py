"""The config: its schema (dataclasses Hydra composes into), validation, conversion from a composed config,
variants, the user's functions it names, and what its inputs weigh.

Imports no JAX (the import contracts in pyproject.toml), and imports a user's module only to check a function it
names (check_arity, import_fn): `jitexp --help` and `--cfg job` stay fast.
"""

from jitexp.config.convert import from_dict, to_config
from jitexp.config.imports import check_arity, import_fn, jit_options_in_force
from jitexp.config.schema import (
    CONFIG_MODULE,
    DTYPES,
    MODES,
    PLATFORMS,
    DeviceConfig,
    ExperimentConfig,
    ModeConfig,
    TimingConfig,
    WorkloadConfig,
    register_configs,
)
from jitexp.config.sizing import check_memory, input_bytes, needs_x64
from jitexp.config.validate import check_param_types, expected_type, unknown_key, validate, writable_dir
from jitexp.config.variants import variant_configs

__all__ = [
    "CONFIG_MODULE",
    "DTYPES",
    "MODES",
    "PLATFORMS",
    "DeviceConfig",
    "ExperimentConfig",
    "ModeConfig",
    "TimingConfig",
    "WorkloadConfig",
    "check_arity",
    "check_memory",
    "check_param_types",
    "expected_type",
    "from_dict",
    "import_fn",
    "input_bytes",
    "jit_options_in_force",
    "needs_x64",
    "register_configs",
    "to_config",
    "unknown_key",
    "validate",
    "variant_configs",
    "writable_dir",
]
