"""The saved runs of tests/data/runs read back through today's analysis: the worker records a job kept, made into
rows by the code under test (tests/unit/test_consistency.py checks the line, the block and the report against them;
scripts/docs_samples.py makes the docs' samples from them)."""

from __future__ import annotations

from pathlib import Path


def analysed(folder: Path) -> list[dict]:
    """A saved job's rows as today's analysis makes them from its worker records (processes.csv, samples.csv, the
    noise each process saw), so that what reads them (the line, the block, the report) comes from the code under
    test."""
    import numpy as np
    import pandas as pd
    import yaml

    from jitexp.analysis.rows import job_result
    from jitexp.config.convert import to_config
    from jitexp.records import NOISE_COLUMNS, Cold, JobRaw, ModeResult, Noise, ProcessResult

    cfg = to_config(yaml.safe_load((folder / ".hydra" / "config.yaml").read_text()))
    procs, samples = pd.read_csv(folder / "processes.csv"), pd.read_csv(folder / "samples.csv")
    results = []
    for p, rows in procs.groupby("process"):
        modes = {}
        for r in rows.itertuples():
            per_call = samples[(samples["process"] == p) & (samples["mode"] == r.mode)].sort_values("round")
            cold = not _missing(r.first_call_s)  # a process past the first few measured no cold call
            modes[r.mode] = ModeResult(
                cold_position=int(r.cold_position) if cold else None,
                cold=Cold(r.first_call_s, r.trace_s, r.lower_s, r.compile_s, r.execute_s, int(r.first_call_compiles))
                if cold
                else None,
                samples_s=per_call["per_call_s"].to_numpy(dtype=float),
                number=int(r.number),
                stop_reason=r.stop_reason,
                compiles_during_timing=int(r.compiles_during_timing),
            )
        first = rows.iloc[0]  # the process's noise, on each of its rows
        noise = Noise(
            **{c: first[c] for c in NOISE_COLUMNS if c in first and not _missing(first[c])},
            host_probe={c: first[c] for c in first.index if c.startswith("host_probe_") and not _missing(first[c])},
        )
        results.append(ProcessResult(int(p), modes, platform="cpu", device_kind="cpu", noise=noise))
    stop = pd.read_csv(folder / "results.csv")["stop_reason"].iloc[0]  # the job's (budget, ci, max_processes)
    np.random.seed(0)
    return job_result(cfg, JobRaw(results, stop)).rows


def _missing(value: object) -> bool:
    return value is None or value != value  # NaN is the one value unequal to itself
