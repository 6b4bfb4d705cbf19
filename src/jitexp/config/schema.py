"""The config's schema: the dataclasses Hydra composes into, the choices each key takes, and their ConfigStore registration."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Dict, List, Optional

from omegaconf import MISSING, OmegaConf

log = logging.getLogger("jitexp")

CONFIG_MODULE = "jitexp.conf"  # where the packaged conf/ lives (pkg://jitexp.conf)

DTYPES = ("float32", "float16", "bfloat16", "float64")
MODES = ("eager", "jit", "aot", "numpy")  # the order modes are reported and paired in (the first is the baseline)
ISOLATES = ("process", "none")
INTERLEAVES = ("rounds", "processes")  # timing.interleave: how a job's processes take its modes
AXIS_TYPES = (
    "auto",
    "explicit",
)  # mesh.axis_types: JAX's AxisType.Auto (XLA propagates) or Explicit (sharding in types)
PLATFORMS = ("cpu", "gpu", "tpu", "auto")
INITS = ("normal", "uniform", "zeros", "ones", "arange")
ARG_DTYPES = DTYPES + ("int8", "int16", "int32", "int64", "uint8", "uint32", "bool", "complex64", "complex128")
ARRAY_KEYS = ("shape", "dtype", "init", "scale", "start")


@dataclass
class WorkloadConfig:
    """What to run: a function by import path, its arguments as data or from a setup function, its default statics."""

    fn: str = MISSING
    name: Optional[str] = None  # defaults to the function's name
    args: Optional[List[Any]] = None  # array specs and literals; a function with no arguments says `args: []`
    # or: import path of a function called in the worker with size, dtype, seed and the params as
    # keywords, returning the positional arguments (any pytrees) or jitexp.Inputs(args, kwargs)
    setup: Optional[str] = None
    kwargs: Dict[str, Any] = field(default_factory=dict)  # keyword arguments (YAML values), beside setup's
    static_argnums: List[int] = field(default_factory=list)
    static_argnames: List[str] = field(default_factory=list)
    donate_argnums: List[int] = field(
        default_factory=list
    )  # what a real loop donates: used when mode.donate_argnums is null
    # a training loop: {output position: argument position}; each timed call takes the previous call's outputs
    carry: Dict[int, int] = field(default_factory=dict)
    jit_fn: str = "jax.jit"  # the jit transformation jit and aot apply (equinox.filter_jit, flax.nnx.jit)
    params: Dict[str, Any] = field(default_factory=dict)
    # rules on params, e.g. {n: ">= 0"} or {classes: "> 0 and <= 100000"}: checked by validate
    checks: Dict[str, str] = field(default_factory=dict)
    description: str = ""
    numpy_fn: Optional[str] = None  # import path of a NumPy twin taking the same arguments (mode numpy)
    # with a mesh: {argument position or keyword name: PartitionSpec as a list}, e.g. {0: [data, null]}; a spec
    # applies to every array leaf of that argument; arguments not named are replicated. Unused without a mesh.
    # Or the import path of a function taking the built arguments and returning {position or name: a
    # PartitionSpec, or a pytree of them matching that argument} (a setup's params, leaf by leaf).
    # Typed Any (as envs): `workload.shardings={0: [data]}` then replaces null on the command line
    shardings: Any = None
    # with a mesh: the outputs' PartitionSpec as a list (every output leaf), or the import path of a function of the
    # arguments returning a PartitionSpec pytree over the output (a prefix, as jit's out_shardings); null: XLA's
    out_shardings: Any = None


@dataclass
class ModeConfig:
    """How to run it: which modes a job measures together (each conf/mode file sets its own flag).

    `mode=jit` selects one; `mode=[eager,jit]` (Hydra's multi-select) several, measured
    interleaved and paired in the same processes.
    """

    eager: bool = False  # op-by-op dispatch: the function called as written
    jit: bool = False  # jax.jit(fn, static_argnums=...)
    aot: bool = False  # jax.jit(fn).lower(*args).compile(), then calls of the Compiled object
    numpy: bool = False  # the workload's NumPy twin (workload.numpy_fn) on host arrays
    static_argnums: Optional[List[int]] = None  # null: the workload's default
    static_argnames: Optional[List[str]] = None  # null: the workload's default
    # jit/aot: arguments whose buffers XLA may reuse for an output of the same shape and dtype;
    # null: the workload's own donate_argnums ([] for most)
    donate_argnums: Optional[List[int]] = field(default_factory=list)
    donate_argnames: List[str] = field(default_factory=list)
    compiler_options: Dict[str, Any] = field(default_factory=dict)  # XLA options for jit/aot compiles
    jit_fn: Optional[str] = None  # null: the workload's (jax.jit unless it says otherwise)

    @property
    def names(self) -> tuple[str, ...]:
        """The selected modes in measuring order (eager first: it is the baseline)."""
        return tuple(m for m in MODES if getattr(self, m))


@dataclass
class DeviceConfig:
    """Where a job runs: `auto` is the accelerator when one is present (TPU or GPU), else the CPU."""

    platform: str = "auto"
    index: int = 0
    count: int = 1  # devices each worker has: on CPU, jax_num_cpu_devices before the backend starts
    # a TPU worker's TPU_PREMAPPED_BUFFER_SIZE (libtpu's pinned host buffer, 4 GiB by default): 256 MiB opens the
    # chip in ~1.4 s instead of ~5.5 s; host<->device transfers larger than it are slower (docs/decisions.md).
    # null: libtpu's default. A TPU_PREMAPPED_BUFFER_SIZE in the environment wins.
    premapped_buffer_bytes: Optional[int] = 268435456


@dataclass
class MeshConfig:
    """A device mesh the inputs are sharded over: {axis name: size} (empty: no mesh, one device) and JAX's axis type."""

    shape: Any = None  # {axis name: size}; typed Any so that `mesh.shape={data: 4}` replaces null on the command line
    axis_types: str = "auto"


@dataclass
class DistributedConfig:
    """One measuring process as several SLURM tasks (jax.distributed): 1 is a plain process."""

    processes: int = 1  # > 1: each measuring process is an `srun` step of this many tasks, one global mesh


@dataclass
class TimingConfig:
    """The sampling policy; docs/measurement.md explains each knob.

    These defaults are the `default` preset: conf/timing/default.yaml names no value of its own, so
    `timing=default` on the command line, `jitexp.measure` and `jitexp.run(mapping)` all get exactly
    these (tests/unit/test_timing_defaults.py).
    """

    warmup: int = 3  # calls per mode before calibration...
    max_warmup_time_s: Optional[float] = None  # ...or fewer where they would last longer (null: every one)
    min_samples: int = 10  # rounds per process, at least (a round takes one sample of every mode)
    max_samples: int = 200
    min_sample_time_s: float = 0.01  # calls per sample are calibrated so a sample lasts this long
    max_time_s: float = 0.5  # sampling budget of one process
    target_rel_ci: float = 0.02  # stop when the median's 95% CI half-width is within this fraction
    processes: int = 6  # fresh worker processes per job, at least
    max_processes: int = 12  # more are added while the CI is wider than target_rel_ci...
    # the first this many processes measure each mode's cold first call (the rest read the job's compilation cache);
    # null: every process on a CPU (its compiles are cheap, and a gate compares cold calls between runs), the first
    # on an accelerator
    cold_processes: Optional[int] = None
    job_time_s: float = 20.0  # ...and the job has run for less than this
    timeout_s: float = 600.0  # a worker running longer is killed; the job becomes an error row
    dispatch_probes: int = 10
    max_steal: float = 0.05  # a round whose CPU steal share exceeds this is marked; mostly marked: replaced
    # "rounds": every process samples every mode, round by round (pairs within a process); "processes": each
    # process measures one mode, processes alternate between the modes, process i of each mode is pair i
    interleave: str = "rounds"
    # the next worker forked (its imports done) while the current one measures; it opens the device when the
    # current one has exited. null: when the job's device is an accelerator (one process may hold a TPU at a time)
    prepare_next: Optional[bool] = None
    open_retries: int = 5  # a device refused at open (held by another process) is tried again this many times...
    open_wait_s: float = 2.0  # ...after this many seconds each; then the process is an error row


@dataclass
class FitConfig:
    """experiment=fit: the largest value of one key whose job compiles and runs in this device's memory."""

    key: Optional[str] = None  # size or workload.params.NAME; null: an ordinary job (the other fit keys unused)
    start: Optional[int] = None  # the first value probed; null: the key's value in the config
    max: int = 1048576  # doubling stops here: the largest value probed
    step: int = 1  # bisection stops when the fitting and the failing value are this close (values its multiples)
    # the memory limit in bytes: null is the accelerator's own (its allocator's bytes_limit), on a CPU the memory
    # available when the probe starts (the host's RAM is shared: set it to what the job may take)
    memory_bytes: Optional[int] = None
    time: bool = True  # then an ordinary job at the largest value: its rows and time per call


@dataclass
class TuneConfig:
    """hydra/sweeper=tune: what a trial's job returns to the search, how many trials, and the winner's confirmation."""

    # steady | first_call | compile | time_for_calls=N | device_memory; a list of two: a Pareto front
    objective: Any = "steady"
    trials: int = 20
    baseline: Any = None  # null: the config as given; {dotted key: value} or [key=value, ...]: those keys changed
    seed: Optional[int] = 0  # the sampler's seed (null: a fresh one each study)
    confirm_processes: int = 6  # the best against the baseline, paired in this many fresh processes (0: none)
    # before the best is named: at most this many of the best trials measured again side by side (0: none)
    runoff: int = 6
    # examples one call holds (e.g. ${workload.params.batch}): times are then per example; null: per call
    examples: Optional[int] = None


@dataclass
class ExperimentConfig:
    """One job: a workload in a mode at a size/dtype on a device, timed by a policy."""

    workload: WorkloadConfig = field(default_factory=WorkloadConfig)
    mode: ModeConfig = field(default_factory=ModeConfig)
    device: DeviceConfig = field(default_factory=DeviceConfig)
    mesh: MeshConfig = field(default_factory=MeshConfig)
    distributed: DistributedConfig = field(default_factory=DistributedConfig)
    timing: TimingConfig = field(default_factory=TimingConfig)
    fit: FitConfig = field(default_factory=FitConfig)
    tune: TuneConfig = field(default_factory=TuneConfig)
    size: int = 1000
    dtype: str = "float32"
    seed: int = 0
    calls: int = 0  # > 0: also record the first `calls` calls from cold in calls.csv
    check: bool = True  # compare jit/aot outputs with eager
    profile: bool = False  # one more worker, untimed, runs each compiled mode's steady calls under jax.profiler.trace
    # process 0 traces a few steady calls of each compiled mode after its timed rounds: device_s, host_overhead_s
    device_time: bool = True
    # the device's matmul and copy peaks, the rows' shares of them: true (measured once per machine, device kind, dtype
    # and JAX version, then read from a store), fresh (measured again now), false (none)
    roofline: Any = True
    # the job's persistent compilation cache: each program compiled once a job (the cold first calls excepted)
    compilation_cache: bool = True
    compilation_cache_dir: Optional[str] = None  # null: a private folder, removed after the job; a path: kept there
    cache_probe: bool = False  # a cold and a warm worker probe the disk cache: the cache_* columns
    progress: Optional[bool] = None  # a live status line on stderr (null: on a terminal); else a line per process
    cpu_async_dispatch: Optional[bool] = None  # null: JAX's default
    isolate: str = "process"  # "process": fresh worker processes; "none": in this process (debugging)
    resume: bool = False  # skip jobs whose folder already holds rows of the same config
    overwrite: bool = False  # run into a folder that already holds results, replacing them (else refused)
    fail_on_error: bool = False  # a sweep with any error row exits 1 (a single job with one always does)
    # retrace probe: argument variants called in order in a fresh worker per mode, one calls.csv
    # row each, e.g. [{n: 2}, {n: 3}, {n: 2}]; keys: workload params, size, dtype, python_scalars
    sequence: List[Dict[str, Any]] = field(default_factory=list)
    cpu_affinity: Optional[List[int]] = None  # cores the worker processes run on (null: any)
    # versions measured together in the same worker processes, each paired against the first (the
    # baseline): {name: {dotted key: value}}, e.g. {before: {workload.fn: m.f}, after: {workload.fn: m.g}}.
    # Typed Any (checked by variant_overrides): OmegaConf cannot merge `variants={...}` into a null Dict node
    variants: Optional[Any] = None
    # {name: path/to/python}: two or more Python environments (each with this jitexp installed), worker
    # processes alternating between them; the first is the baseline (jitexp.engine.envserver, jitexp.engine.pyenvs).
    # Typed Any: `envs={a: ..., b: ...}` then replaces null on the command line (a null Dict node cannot
    # take a merge, and a {} one refuses new keys without +); _validate_envs checks the shape.
    envs: Any = None

    @property
    def workload_name(self) -> str:
        return self.workload.name or self.workload.fn.rsplit(".", 1)[-1]

    @property
    def mesh_shape(self) -> dict[str, int]:
        """The mesh's {axis name: size} in order (empty: no mesh)."""
        return dict(self.mesh.shape or {})

    @property
    def shardings(self) -> dict[Any, Any]:
        """workload.shardings as a mapping (empty when it names none, or names a function: the worker calls it)."""
        return {} if isinstance(self.workload.shardings, str) else dict(self.workload.shardings or {})

    @property
    def static_argnums(self) -> tuple[int, ...]:
        """The statics in force: the mode's override, else the workload's default."""
        chosen = self.mode.static_argnums
        return tuple(self.workload.static_argnums if chosen is None else chosen)

    @property
    def static_argnames(self) -> tuple[str, ...]:
        """The static keyword names in force: the mode's override, else the workload's default."""
        chosen = self.mode.static_argnames
        return tuple(self.workload.static_argnames if chosen is None else chosen)

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """The donated positions in force: the mode's list, else (null) the workload's declared ones."""
        chosen = self.mode.donate_argnums
        return tuple(self.workload.donate_argnums if chosen is None else chosen)

    @property
    def jit_fn(self) -> str:
        """The jit transformation in force: the mode's override, else the workload's."""
        return self.mode.jit_fn or self.workload.jit_fn


@cache
def register_configs() -> None:
    """Register the schemas so conf/config.yaml can validate against them (defaults: jitexp_schema). Once per
    process: Hydra's ConfigStore and OmegaConf's resolvers keep them, and building the schema's node took ~7 ms
    of every compose."""
    from hydra.core.config_store import ConfigStore

    ConfigStore.instance().store(name="jitexp_schema", node=ExperimentConfig)
    # for conf/hydra/launcher/jitexp_slurm.yaml
    OmegaConf.register_new_resolver("jitexp_gpus", lambda platform: 1 if platform == "gpu" else None, replace=True)
    OmegaConf.register_new_resolver(
        "jitexp_minutes", lambda *seconds: int(math.ceil(sum(float(s) for s in seconds) / 60)) + 1, replace=True
    )
