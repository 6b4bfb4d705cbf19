"""The typed records that cross process and layer boundaries: a worker's task, what it returns, a job's rows.

Plain data only (builtins, NumPy arrays, the config dataclasses), so every record pickles
through a pipe from a worker process. Like torch.utils.benchmark's `common.py`: the runner
builds `Task`s, workers return `ProcessResult`s, `rows` turns them into a `JobResult`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from jitexp.config import ExperimentConfig
from jitexp.errors import ConfigError, Failure

if TYPE_CHECKING:
    import numpy as np


def field_names(cls: type) -> tuple[str, ...]:
    """A record's field names in declaration order (the CSV columns that derive from it)."""
    return tuple(f.name for f in dataclasses.fields(cls))


@dataclass
class Inputs:
    """What a `workload.setup` function may return: positional and keyword arguments, any pytrees."""

    args: tuple = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass
class Payload:
    """jitexp.measure's function and argument values for the worker: cloudpickled bytes, or (isolate=none) the objects."""

    function: Any  # (fn, jit_fn or None): cloudpickle bytes, or the pair itself in-process
    arguments: (
        Any  # (args, kwargs) with device arrays as host values (jitexp.worker.payload): bytes, or the pair in-process
    )
    arg_bytes: int = 0  # the arguments' array bytes: what the memory guard counts per set of inputs
    x64: bool = False  # the caller's jax_enable_x64, so 64-bit values keep their width in the worker


# a distributed.processes job's step folder: the task the driver writes, rank 0's result and the phase it is in
STEP_TASK, STEP_RESULT, STEP_PHASE = "task.pkl", "result.pkl", "phase"
STEP_STOPPED = 86  # a rank's exit code when its measurement failed: the last line of its stderr says how


@dataclass
class Task:
    """One process's share of a job: the config, which process it is, and what it records."""

    cfg: ExperimentConfig
    process: int = 0
    modes: tuple[str, ...] = ()  # the modes to measure (a mode that failed to compile is not retried)
    calls: int = 1  # calls from cold to time one by one (>= 1: the cold first call)
    extras: bool = True  # check against eager, cost analysis, dispatch probes (the first process)
    fresh: bool = True  # a fresh process: the first mode's first call needs no clear_caches
    # what the worker does: "measure" the modes, call a "sequence", probe the disk "cache", "profile" steady calls
    kind: str = "measure"
    sys_path: list[str] = field(default_factory=list)
    cwd: str = ""
    stderr_path: str = ""
    payload: Payload | None = None  # jitexp.measure: the function and arguments travel here, not by import path
    env: str | None = None  # with envs: the environment (a key of cfg.envs) whose server runs this process
    # a prepared worker (engine.handover): it imports, then waits for the driver's go (which may change process,
    # modes, calls and extras: `GO_FIELDS`) before it opens the device
    gated: bool = False
    cold: bool = True  # measure each mode's cold first call here (else the modes' programs come from cache_dir)
    cache_dir: str | None = None  # the job's persistent compilation cache (engine.jobcache); None: off


GO_FIELDS = ("process", "modes", "calls", "extras", "cold")
# inside the job's cache folder: its large inputs, drawn once (worker.diskcache.inputs_folder)
INPUTS_FOLDER = ".inputs"


@dataclass
class ConfigProblem:
    """A config mistake only the worker could see (no such device, a function that does not import)."""

    key: str
    value: Any
    expected: str


@dataclass
class Cold:
    """A mode's cold first call and its parts (trace + lower + compile + execute == first_call_s)."""

    first_call_s: float
    trace_s: float
    lower_s: float
    compile_s: float
    execute_s: float
    first_call_compiles: int


COLD_FIELDS = field_names(Cold)
COLD_PHASES = COLD_FIELDS[1:5]


@dataclass
class Extras:
    """Process 0's analysis of one mode; each field is the results.csv column of the same name (None: not measured)."""

    dispatch_s: float | None = None
    finite_output: bool | None = None
    flops: float | None = None
    transcendentals: float | None = None
    bytes_accessed: float | None = None
    argument_size_bytes: int | None = None
    output_size_bytes: int | None = None
    temp_size_bytes: int | None = None
    alias_size_bytes: int | None = None
    generated_code_size_bytes: int | None = None
    peak_memory_bytes: int | None = None
    max_abs_err_vs_eager: float | None = None
    max_rel_err_vs_eager: float | None = None
    matches_eager: bool | None = None
    check_vs_eager: str | None = None
    max_abs_err_vs_numpy: float | None = None
    max_rel_err_vs_numpy: float | None = None
    matches_numpy: bool | None = None
    check_vs_numpy: str | None = None
    numpy_blas_threads: int | None = None  # mode numpy: the BLAS threads NumPy had (worker.blas)
    numpy_one_thread_s: float | None = None  # mode numpy: a call with one BLAS thread, to see a stall
    eager_ops: int | None = None
    eager_bytes: int | None = None
    jaxpr_eqns: int | None = None
    xla_kernels: int | None = None
    xla_fusions: int | None = None
    output_sharding: str | None = None  # the first output array's PartitionSpec, P(...), with a mesh
    collectives: int | None = None  # collectives in the compiled HLO (worker.attribution.collective_counts)
    collective_bytes: int | None = None
    all_reduce_count: int | None = None
    all_reduce_bytes: int | None = None
    all_gather_count: int | None = None
    all_gather_bytes: int | None = None
    reduce_scatter_count: int | None = None
    reduce_scatter_bytes: int | None = None
    all_to_all_count: int | None = None
    all_to_all_bytes: int | None = None
    collective_permute_count: int | None = None
    collective_permute_bytes: int | None = None
    arithmetic_intensity: float | None = None
    op_dispatch_s: float | None = None
    attribution_error: str | None = None  # why eager_ops and eager_bytes are empty
    donation: str | None = None
    device_s: float | None = None  # the device's own time per call, from a profiler trace of device_time_calls calls
    device_time_calls: int | None = None
    device_trace_wall_s: float | None = None  # the traced loop's own wall time per call (device_s is part of it)
    device_time_error: str | None = None  # why device_s is empty

    def update(self, values: Mapping[str, Any]) -> None:
        """Set fields by name; a name that is no field is a bug, not a silently empty column."""
        for name, value in values.items():
            if name not in EXTRA_FIELDS:
                raise KeyError(f"Extras has no field {name!r}")
            setattr(self, name, value)

    def as_row(self) -> dict[str, Any]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


EXTRA_FIELDS = field_names(Extras)


@dataclass
class Profile:
    """A compiled mode's steady calls run under jax.profiler.trace in a worker of their own (profile=true), untimed."""

    calls: int  # steady calls in the profiled loop
    wall_s: float  # the loop's seconds, profiler on
    execute_s: float | None  # the outermost execution events per call (jitexp.analysis.profile)
    events: list[dict[str, Any]] = field(default_factory=list)  # profile.csv rows of this mode
    files: dict[str, bytes] = field(default_factory=dict)  # the trace files by name (gzipped JSON, XPlane)


@dataclass
class ModeResult:
    """What one process measured of one mode: its cold call, its samples, its extras, or why it failed."""

    error: Failure | None = None
    cold_position: int | None = None  # the mode's place in this process's cold-call order
    cold: Cold | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)  # calls.csv records (cold calls or the retrace probe)
    samples_s: np.ndarray | None = None  # per-call seconds of each round's sample
    number: int | None = None  # calls per sample
    stop_reason: str | None = None
    compiles_during_timing: int | None = None
    extras: Extras = field(default_factory=Extras)
    cache_hits: int | None = None  # the disk-cache probe's persistent-cache events
    cache_misses: int | None = None
    profile: Profile | None = None  # the profile worker's (profile=true)

    @property
    def sampled(self) -> bool:
        return self.samples_s is not None


@dataclass
class Noise:
    """The machine's own noise in one process: CPU shares over its cold calls and its rounds, the host probe.

    Shares are fractions of the worker's own CPUs' time from /proc/stat (None: not accounted here).
    """

    steal_cold: float | None = None  # over the cold first calls
    steal: float | None = None  # over the sampled rounds
    run_queue_wait: float | None = None  # share of the rounds' wall time the timing thread waited to run
    idle: float | None = None
    iowait: float | None = None
    round_steal: list[float | None] = field(default_factory=list)  # per round (None: no tick in it)
    rounds_under_steal: int | None = None  # rounds whose steal share exceeded timing.max_steal
    under_steal: bool = False  # measured mostly under steal (host.mostly_under_steal)
    accounted: bool = False  # the CPU counters were read around every round (the shares may still be None: too short)
    host_probe: dict[str, float] = field(default_factory=dict)  # host_probe_<name>_s


NOISE_COLUMNS = ("steal", "steal_cold", "run_queue_wait", "idle", "iowait", "rounds_under_steal")


# A process's phases in the order it goes through them (worker.clock names the worker's; the driver adds start,
# transfer and exit): processes.csv's phase_<name>_s columns, and `other` what the worker did outside them.
PHASES = (
    "start",
    "open",
    "warm_backend",
    "host_probe",
    "setup",
    "first_call",
    "attribution",
    "op_dispatch_probe",
    "cost_analysis",
    "check",
    "warmup",
    "sampling",
    "dispatch_probe",
    "device_time",
    "memory",
    "peaks",
    "other",
    "transfer",
    "exit",
)
COMPILE_PHASES_COUNTED = ("first_call", "warmup", "sampling")  # processes.csv's compiles_in_<phase>


@dataclass
class ProcessResult:
    """Everything one worker process returns; a crash or timeout is a result with `error` set."""

    process: int
    modes: dict[str, ModeResult] = field(default_factory=dict)
    error: Failure | None = None  # the whole process failed (inputs, a crash, a timeout)
    config_error: ConfigProblem | None = None
    platform: str | None = None
    device_kind: str | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    cpu_async_dispatch: bool | None = None
    measure_s: float = 0.0
    setup_s: float | None = None  # workload.setup's untimed run in this process
    peak_rss_growth_bytes: int | None = None
    device_peak_bytes: int | None = None
    device_open_s: float | None = None  # the process's open of its device (JAX's clients created, the device found)
    # process 0's probes of the device's ceilings (roofline=true): peak_flops_per_s, peak_bytes_per_s
    peaks: dict[str, float] = field(default_factory=dict)
    peaks_error: str | None = None  # why a peak is missing
    peaks_measured: str | None = None  # when and where the peaks were measured (worker.peaks' store)
    noise: Noise = field(default_factory=Noise)
    # a job with `variants`: per variant, per mode (and `modes` stays empty)
    variants: dict[str, dict[str, ModeResult]] = field(default_factory=dict)
    env: str | None = None  # with envs: the environment it ran in (set by the runner)
    # per variant ("" for a job without), labels.setup_kind of the workload.setup the worker imported
    setup_kinds: dict[str, str] = field(default_factory=dict)
    # per variant, labels.shapes_label of the arguments the worker built (the input_shapes column: issue 50)
    input_shapes: dict[str, str] = field(default_factory=dict)
    # per variant, labels.args_dtype of the array leaves the worker built (the row's dtype where it differs: issue 57)
    input_dtypes: dict[str, str] = field(default_factory=dict)
    # per variant, labels.prejitted of the function measured: "jax.jit" where it came wrapped already (issue 57)
    prejitted: dict[str, str] = field(default_factory=dict)
    # where the process's wall time went, by phase (worker.clock; the driver adds start, transfer and exit), and
    # the XLA compiles in each phase (compile events less persistent-cache hits)
    phases: dict[str, float] = field(default_factory=dict)
    phase_compiles: dict[str, int] = field(default_factory=dict)
    cache_hits: int | None = None  # the job's persistent compilation cache over the whole process
    cache_misses: int | None = None
    began: float | None = None  # the worker's CLOCK_MONOTONIC stamps: released to run (after any wait), done
    ended: float | None = None
    driver_wall_s: float | None = None  # from its launch to its exit, on the driver's clock

    @property
    def failed(self) -> bool:
        return self.error is not None or self.config_error is not None

    def failure_line(self) -> str | None:
        """Why the process failed, in one line: its config error as the job would raise it (`key=value is invalid;
        ...`), or its failure's phase, type and message (and hint); None where it did not fail. A script that printed
        `error` alone read "None" for a config error (issue 57)."""
        if self.config_error is not None:
            problem = self.config_error
            return str(ConfigError(problem.key, problem.value, problem.expected))
        if self.error is not None:
            return self.error.line() + (f" (hint: {self.error.hint})" if self.error.hint else "")
        return None

    def phase_seconds(self) -> dict[str, float]:
        """Every phase's seconds (records.PHASES), `other` the worker's time outside its named phases."""
        out = {name: self.phases.get(name, 0.0) for name in PHASES}
        worker = [s for name, s in self.phases.items() if name not in ("start", "transfer", "exit")]
        out["other"] = max(self.measure_s - sum(worker), 0.0)
        return out

    @property
    def wall_s(self) -> float:
        """The process's wall time from its launch to its exit on the driver's clock (in-process: its phases)."""
        return self.driver_wall_s if self.driver_wall_s is not None else sum(self.phase_seconds().values())

    @property
    def clean(self) -> bool:
        """No failure anywhere: not the process, not any mode (of any variant)."""
        results = [*self.modes.values(), *(m for modes in self.variants.values() for m in modes.values())]
        return not self.failed and not any(m.error for m in results)

    def mode_failed(self, mode: str) -> bool:
        """The mode failed here (in every variant of a job with variants): later processes need not measure it."""
        measured = list(self.variants.values()) if self.variants else [self.modes]
        return all(mode in modes and modes[mode].error is not None for modes in measured)

    def of_variant(self, name: str) -> ProcessResult:
        """This process as if it had measured one variant alone: its modes in `modes`."""
        return dataclasses.replace(self, modes=self.variants.get(name, {}), variants={})


INTERRUPTED = "interrupted"  # stop_reason of the rows Ctrl-C kept from a job's processes that had finished


@dataclass
class JobRaw:
    """Every raw result of one job, as the runner collected them, before any statistics."""

    processes: list[ProcessResult]
    stop_reason: str
    cache: tuple[ProcessResult, ProcessResult] | None = None  # the disk-cache probe: cold, then warm
    sequence: dict[str, ProcessResult] = field(default_factory=dict)  # the retrace probe, per mode
    load_avg_start: float | None = None
    load_avg_end: float | None = None
    replaced: list[ProcessResult] = field(default_factory=list)  # measured mostly under steal, replaced by others
    provenance: dict = field(default_factory=dict)  # jitexp's version and the git commit of the user's code
    profile: ProcessResult | None = None  # the profile worker (profile=true)
    wall_s: float | None = None  # the job's wall time in the driver, its probes' workers included
    prepared: int = 0  # processes whose worker was forked while the one before measured (engine.handover)
    probes: dict[str, float] = field(default_factory=dict)  # each probe worker's wall time (cache, retrace, profile)
    processes_s: float | None = None  # the driver's wall time from the job's start to its last timed process's end


@dataclass
class JobResult:
    """What one job measured: results.csv rows (one per mode), samples, processes and calls rows."""

    rows: list[dict]
    samples: list[dict] = field(default_factory=list)
    processes: list[dict] = field(default_factory=list)
    calls: list[dict] = field(default_factory=list)
    profile: list[dict] = field(default_factory=list)  # profile.csv rows (profile=true)
    files: dict[str, bytes] = field(default_factory=dict)  # other files of the job folder by relative path (traces)

    @property
    def row(self) -> dict:
        """The row of a single-mode job."""
        if len(self.rows) != 1:
            raise ValueError(f"this job measured {len(self.rows)} modes: use .rows or .by_mode(name)")
        return self.rows[0]

    def by_mode(self, mode: str) -> dict:
        """The row of one mode."""
        for row in self.rows:
            if row["mode"] == mode:
                return row
        raise KeyError(mode)
