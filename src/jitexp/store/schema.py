"""Every CSV's columns: results.csv's groups in schema order, the long files', the types they read back as.

One place names each column, so the writers, the readers, the docs test and the reports agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from jitexp.analysis.device import JOB_PART_COLUMNS
from jitexp.analysis.profile import PROFILE_EVENT_COLUMNS
from jitexp.analysis.stats import CHANGE_METRICS
from jitexp.noise import PROBE_COLUMNS
from jitexp.provenance import CODE_COLUMNS
from jitexp.records import COLD_FIELDS, COMPILE_PHASES_COUNTED, NOISE_COLUMNS, PHASES

# jit's own settings beside static_argnums, and the mesh and argument shardings beside device_count: each a case's
# identity (the reports' knobs, jitexp-compare's "what changed")
# `prejitted`: the jit the function came wrapped in already (labels.prejitted: `jax.jit`; empty for a plain function)
JIT_KNOBS = ["static_argnames", "jit_fn", "donate_argnums", "donate_argnames", "compiler_options", "prejitted"]
MESH_COLUMNS = ["mesh", "mesh_axis_types", "shardings"]
IDENTITY = [
    "workload",
    "mode",
    "size",
    "inputs",
    "input_shapes",
    "dtype",
    "static_argnums",
    # param_<name> columns are inserted here, one per workload param
    *JIT_KNOBS,
    "seed",
    "platform",
    "device_kind",
    "device_count",
    "distributed_processes",
    *MESH_COLUMNS,
    "job_num",
    "overrides",
    "config_hash",
]
OUTCOME = ["status", "error_phase", "error_type", "error_message", "hint"]
STEADY = [
    "n_samples",
    "number",
    "median_s",
    "mean_s",
    "std_s",
    "min_s",
    "max_s",
    "p10_s",
    "p90_s",
    "iqr_s",
    "ci95_low_s",
    "ci95_high_s",
    "cv",
    "n_outliers",
    "unstable",
    "unstable_reason",
    "stop_reason",
    "rel_ci_halfwidth",
    "ci_target_met",
    "within_process_rel_spread",
]
SPREAD = [
    "n_processes",
    "ci_scope",
    "process_rel_spread",
    "process_median_min_s",
    "process_median_max_s",
    "isolate",
    "interleave",
    "modes",
    "measure_s",
]
NOISE = [
    "steal_median",
    "steal_max",
    "run_queue_wait_median",
    "n_steal_replaced",
    "kept_vs_all_processes",
    *PROBE_COLUMNS,
]
# a compiled mode's speedup over its baseline: a paired row's columns, and the report's speedup table's
SPEEDUP_FIGURES = ["speedup", "speedup_ci_low", "speedup_ci_high", "verdict", "break_even_calls", "ahead_until_calls"]
PAIRED = [
    "baseline_mode",
    *SPEEDUP_FIGURES,
    "speedup_vs_numpy",
    "speedup_vs_numpy_ci_low",
    "speedup_vs_numpy_ci_high",
    "verdict_vs_numpy",
]
COMPILATION = [
    "setup_s",
    "first_call_s",
    "first_call_ci95_low_s",
    "first_call_ci95_high_s",
    "first_call_processes",
    "trace_s",
    "lower_s",
    "compile_s",
    "execute_s",
    "first_call_compiles",
    "compiles_during_timing",
    "dispatch_s",
    "numpy_blas_threads",
    "numpy_one_thread_s",
]
ATTRIBUTION = [
    "explanation",
    "explanation_detail",
    "eager_ops",
    "xla_kernels",
    "xla_fusions",
    "jaxpr_eqns",
    "eager_bytes",
    "arithmetic_intensity",
    "op_dispatch_s",
    "attribution_error",
]
# profile=true: the profile worker's loop per compiled mode (its events: profile.csv)
PROFILE = ["profile_calls", "profile_step_s", "profile_execute_s", "profile_error"]
# the device beside the wall clock (analysis.device): process 0's trace of a few steady calls, the device's measured
# peaks and the shares of them, the open of the device and where the job's wall time went; `unavailable` says once
# which of a job's columns its host or backend cannot give, and why
DEVICE = [
    "device_s",
    "device_trace_wall_s",
    "host_overhead_s",
    "device_time_calls",
    "peak_flops_per_s",
    "peak_bytes_per_s",
    "peaks_measured",
    "nominal_flops_per_s",
    "nominal_bytes_per_s",
    "flops_ceiling",
    "bytes_ceiling",
    "peak_flops_share",
    "peak_bytes_share",
    "device_peak_flops_share",
    "device_peak_bytes_share",
    "above_ceiling",
    "device_open_s",
    "job_wall_s",
    "job_open_s",
    "job_compile_s",
    *JOB_PART_COLUMNS,
    "prepared_processes",
    "unavailable",
]
# the collectives XLA inserted for a sharded job (worker.attribution.collective_counts): totals, then per kind
COLLECTIVE_KINDS = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "collective_permute"]
COLLECTIVES = [
    "collectives",
    "collective_bytes",
    *(f"{kind}_{part}" for kind in COLLECTIVE_KINDS for part in ("count", "bytes")),
]
WORK = [
    "flops",
    "transcendentals",
    "bytes_accessed",
    "gflops_per_s",
    "gbytes_per_s",
    "argument_size_bytes",
    "output_size_bytes",
    "temp_size_bytes",
    "alias_size_bytes",
    "generated_code_size_bytes",
    "peak_memory_bytes",
    "peak_rss_growth_bytes",
    "device_peak_bytes",
]
DISK_CACHE = [
    "cache_hit",
    "cache_cold_first_call_s",
    "cache_warm_first_call_s",
    "cache_cold_compile_s",
    "cache_warm_compile_s",
    "cache_warm_trace_s",
    "cache_warm_lower_s",
]
CHECKS = [
    "donation",
    "finite_output",
    "max_abs_err_vs_eager",
    "max_rel_err_vs_eager",
    "matches_eager",
    "check_vs_eager",
    "max_abs_err_vs_numpy",
    "max_rel_err_vs_numpy",
    "matches_numpy",
    "check_vs_numpy",
]
# the machine and the software a row was measured on, and when and under what load (platform and device_kind are
# identity columns too: results.csv writes them there, the other ones in its closing group)
ENVIRONMENT_COLUMNS = [
    "jitexp_version",
    "jax_version",
    "jaxlib_version",
    "python_version",
    "hostname",
    "cpu_model",
    "cpu_count",
    "cpu_affinity",
    "blas_threads",
    "load_avg_start",
    "load_avg_end",
    "platform",
    "device_kind",
    "x64",
    "cpu_async_dispatch",
    "xla_flags",
    "tpu_premapped_buffer_bytes",
    *CODE_COLUMNS,
    "timestamp",
]
# what changes from run to run on one setup (pinning, load, the time): reports show it as ranges, and two runs
# that differ only here ran on the same machine and software
RUN_STATE = ("cpu_affinity", "blas_threads", "load_avg_start", "load_avg_end", "timestamp")
SETUP_COLUMNS = [c for c in ENVIRONMENT_COLUMNS if c not in RUN_STATE]  # the machine and software alone
COLUMNS = (
    IDENTITY
    + OUTCOME
    + STEADY
    + SPREAD
    + NOISE
    + PAIRED
    + COMPILATION
    + DISK_CACHE
    + ATTRIBUTION
    + ["output_sharding"]  # the PartitionSpec jit gave the first output array; empty without a mesh
    + COLLECTIVES
    + PROFILE
    + DEVICE
    + WORK
    + CHECKS
    + [c for c in ENVIRONMENT_COLUMNS if c not in IDENTITY]
)
# written only by a job with `variants` (like param_<name>): which variant a row is, after `mode`, and
# its paired change against the baseline variant's same mode, after the paired speedups
VARIANT = "variant"
ENV = "env"  # written only by a job with `envs`: the environment a row's processes ran in, after `variant`
AB = ["ab_baseline"] + [
    f"ab_{metric}_{part}"
    for metric in CHANGE_METRICS
    for part in ("ratio", "ratio_ci_low", "ratio_ci_high", "p_value", "verdict", "n_pairs")
]
OPTIONAL_COLUMNS = [VARIANT, ENV, *AB]

SAMPLE_COLUMNS = ["job_num", "workload", "mode", "size", "process", "round", "number", "per_call_s", "steal"]
PROCESS_COLUMNS = [
    "job_num",
    "workload",
    "mode",
    "size",
    "process",
    "cold_position",
    *COLD_FIELDS,
    "rounds",
    "number",
    "median_s",
    "compiles_during_timing",
    "stop_reason",
    "replaced",
    "device_open_s",
    "peak_rss_growth_bytes",  # the process's memory (one process measures every mode: the same on each mode's row)
    "device_peak_bytes",
    *NOISE_COLUMNS,
    *PROBE_COLUMNS,
    "process_wall_s",
    *(f"phase_{name}_s" for name in PHASES),
    *(f"compiles_in_{name}" for name in COMPILE_PHASES_COUNTED),
    "cache_hits",
    "cache_misses",
]
PROFILE_COLUMNS = ["job_num", "workload", "mode", "size", *PROFILE_EVENT_COLUMNS]  # profile.csv
JOB_LIST_COLUMNS = ["job_num", "overrides"]  # a sweep's jobs.csv
CALL_COLUMNS = [
    "job_num",
    "workload",
    "mode",
    "size",
    "probe",
    "call",
    "variant",
    "status",
    "call_s",
    "compiles",
    "compiled",
    "trace_s",
    "compile_s",
    "miss_reason",
    "hint",
    "error_phase",
    "error_type",
    "error_message",
]

INT_COLUMNS = [
    "size",
    "seed",
    "job_num",
    "n_samples",
    "number",
    "n_outliers",
    "n_processes",
    "first_call_compiles",
    "first_call_processes",
    "compiles_during_timing",
    "cpu_count",
    "process",
    "round",
    "cold_position",
    "rounds",
    "call",
    "compiles",
    *(f"compiles_in_{name}" for name in COMPILE_PHASES_COUNTED),
    "cache_hits",
    "cache_misses",
    "eager_ops",
    "xla_kernels",
    "xla_fusions",
    "jaxpr_eqns",
    "eager_bytes",
    "device_count",
    "distributed_processes",
    *COLLECTIVES,
    "profile_calls",
    "device_time_calls",
    "prepared_processes",
    "tpu_premapped_buffer_bytes",
    "count",
    "peak_rss_growth_bytes",
    "device_peak_bytes",
    "n_steal_replaced",
    "rounds_under_steal",
    "blas_threads",
    *(f"ab_{metric}_n_pairs" for metric in CHANGE_METRICS),
]
BOOL_COLUMNS = [
    "outermost",
    "unstable",
    "replaced",
    "ci_target_met",
    "finite_output",
    "matches_eager",
    "matches_numpy",
    "compiled",
    "cache_hit",
    "x64",
    "cpu_async_dispatch",
    "code_dirty",
]
TEXT_COLUMNS = [
    "workload",
    "mode",
    "inputs",
    "input_shapes",  # `f32[64,256]`: text, never a number (read back as NaN before issue 50)
    "dtype",
    "static_argnums",
    *JIT_KNOBS,
    "env",
    *MESH_COLUMNS,
    "output_sharding",
    "profile_error",
    "unavailable",
    "peaks_measured",
    "flops_ceiling",
    "bytes_ceiling",
    "above_ceiling",
    "thread",
    "event",
    "donation",
    "check_vs_eager",  # why outputs differ or cannot be compared: words (read back as NaN before issue 57)
    "check_vs_numpy",
    "attribution_error",
    "platform",
    "device_kind",
    "overrides",
    "status",
    "error_phase",
    "error_type",
    "error_message",
    "hint",
    "unstable_reason",
    "stop_reason",
    "ci_scope",
    "isolate",
    "interleave",
    "modes",
    "baseline_mode",
    "verdict",
    "verdict_vs_numpy",
    "jitexp_version",
    "jax_version",
    "jaxlib_version",
    "python_version",
    "hostname",
    "cpu_model",
    "xla_flags",
    "code_commit",
    "code_commit_date",
    "code_subject",
    "code_repo",
    "timestamp",
    "cpu_affinity",
    "config_hash",
    "explanation",
    "explanation_detail",
    "probe",
    "variant",
    "miss_reason",
    "ab_baseline",
    *(f"ab_{metric}_verdict" for metric in CHANGE_METRICS),
]


KNOWN_NUMERIC = (
    (
        set(COLUMNS)
        | set(OPTIONAL_COLUMNS)
        | set(SAMPLE_COLUMNS)
        | set(CALL_COLUMNS)
        | set(PROCESS_COLUMNS)
        | set(PROFILE_COLUMNS)
    )
    - set(TEXT_COLUMNS)
    - set(BOOL_COLUMNS)
)


def ordered_columns(names: Iterable[str]) -> list[str]:
    """The schema order for a set of column names; param_* after static_argnums, unknowns last."""
    names = list(dict.fromkeys(names))
    params = sorted(n for n in names if n.startswith("param_"))
    rest = COLUMNS[len(IDENTITY) :]
    after_paired = rest.index(PAIRED[-1]) + 1
    order = (
        IDENTITY[:2]
        + [VARIANT, ENV]
        + IDENTITY[2 : IDENTITY.index("static_argnums") + 1]
        + params
        + IDENTITY[IDENTITY.index("static_argnums") + 1 :]
        + rest[:after_paired]
        + AB
        + rest[after_paired:]
    )
    return [c for c in order if c in names] + [c for c in names if c not in order]


def with_variant(columns: Sequence[str], rows: Sequence[Mapping]) -> list[str]:
    """A long file's columns, with `variant` (a job with variants) or `env` (with envs) after `mode` when its rows carry one."""
    columns = list(columns)
    extra = [c for c in (VARIANT, ENV) if c not in columns and any(c in row for row in rows)]
    return [*columns[: columns.index("mode") + 1], *extra, *columns[columns.index("mode") + 1 :]]
