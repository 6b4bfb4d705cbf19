"""The driver: plans a job's processes, launches workers (fresh processes, in-process, other Python environments) and
gathers their records. Never imports JAX (the import contracts in pyproject.toml)."""
