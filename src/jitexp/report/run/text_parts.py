"""Text the terminal report and summary.md share: the headline (the page's too), the notes over the
variants and why tables, and the scaling and errors views.
"""

from __future__ import annotations

import pandas as pd

from jitexp.report.run.tables import SCALING_COLUMNS
from jitexp.report.shared.cases import STATIC_ARGNUMS, error_rows, ok_rows, params_labels
from jitexp.store.folders import SweepState

# The one meaning of `speedup` and of the job line's `±` (issue 50): docs/results.md, the README, the report's notes
# and the speedup plot's axis say these words (tests/unit/test_consistency.py checks that they do).
SPEEDUP_MEANING = (
    "speedup: how many times less time per call a mode takes than its baseline, from each process's ratio of its "
    "two medians (baseline / mode), combined over processes by the Hodges-Lehmann estimate (one process: its own "
    "ratio); not the two rows' median_s divided, which can differ by a few %"
)
PLUS_MINUS_MEANING = (
    "±N%: half the width of the median's 95% CI (ci95_low_s to ci95_high_s) as a share of the median; the CI "
    "itself can be asymmetric"
)
TRIALS_NOTE = (
    "A tune sweep's trials (hydra/sweeper=tune): each searched key, the objective with its 95% CI; runoff: the best "
    "few measured again side by side, which names the best; tied: the interval overlaps the best's (the runoff's, "
    "where it ran); a failed trial says why"
)
AB_NOTE = (
    "variants (or envs) against the first (jobs with `variants` or `envs`): the change in time, in words, "
    "paired per process for variants (every variant ran in the same processes' rounds) and per process pair for "
    "envs (processes alternating old, new, new, old); the Hodges-Lehmann estimate over pairs with the 95% CI "
    "that inverts the Wilcoxon signed-rank test giving p; 'cannot tell' when so few pairs can never reach "
    "significance"
)
WHY_NOTE = (
    "why: eager_ops primitives dispatched one by one against the xla_kernels jit runs (xla_fusions of them "
    "fused); eager_bytes is the memory traffic before fusion (every op reads and writes its arrays), "
    "bytes_accessed after it (XLA's cost analysis); traffic_cut = their ratio"
)


def headline(df: pd.DataFrame, state: SweepState | None = None) -> str:
    """One line: how many rows, how many ok and failed, from how many jobs (and which never finished)."""
    n_ok, n_err = len(ok_rows(df)), len(error_rows(df))
    if state is not None and state.n_jobs is not None:
        return f"{state.describe(len(df))} ({n_ok} ok, {n_err} error)"
    jobs = df["job_num"].nunique() if "job_num" in df.columns else 0
    text = f"{len(df)} rows ({n_ok} ok, {n_err} error)"
    return text + (f" from {jobs} job{'s' if jobs != 1 else ''}" if jobs else "")


def scaling_view(scaling: pd.DataFrame) -> pd.DataFrame:
    """scaling.csv as shown: workload, params (when any), dtype and the scaling columns but static_argnums."""
    view = scaling.reindex(columns=["workload"]).copy()
    view["params"] = params_labels(scaling)
    if not view["params"].astype(bool).any():
        view = view.drop(columns="params")
    cols = ["dtype", *(c for c in SCALING_COLUMNS if c != STATIC_ARGNUMS)]  # the scaling columns but static_argnums
    return pd.concat([view, scaling.reindex(columns=cols)], axis=1)


def errors_view(errors: pd.DataFrame) -> pd.DataFrame:
    """errors.csv as shown: the case, then where it failed, the error and the hint."""
    view = errors.reindex(columns=["workload", "mode", "size", "dtype"]).copy()
    view["params"] = params_labels(errors)
    if not view["params"].astype(bool).any():
        view = view.drop(columns="params")
    if "static_argnums" in errors.columns and errors["static_argnums"].notna().any():
        view["static_argnums"] = errors["static_argnums"]
    cols = ["error_phase", "error_type", "error_message", "hint"]
    return pd.concat([view, errors.reindex(columns=cols)], axis=1)
