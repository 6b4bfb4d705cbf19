"""Check a jitexp command line before Hydra runs it: every config mistake becomes one ConfigError.

Hydra's own parser and config loader do the work (compose.py: the same composition Hydra does next), so
the preflight agrees with Hydra: a single run is composed once, a sweep once per job, expanded
as the basic sweeper expands it. Nothing here imports JAX, except that importing `workload.fn`
to check its arity imports whatever that module imports (in a forkserver child, for the command line).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from jitexp.config import (
    ExperimentConfig,
    check_arity,
    check_param_types,
    from_dict,
    jit_options_in_force,
    variant_configs,
    writable_dir,
)
from jitexp.config.digest import config_hash
from jitexp.config.usage import check_used
from jitexp.engine.compose import (
    CONFIG_NAME,
    MODE_UNREAD,
    compose_config,
    flag_choice_error,
    hydra_session,
    located,
    override_value,
    parse_args,
    parse_overrides,
    parse_with,
    replacing,
    sweep_jobs,
)
from jitexp.engine.processes import WORKER, Child, start_server, stop_server
from jitexp.engine.slurm_tasks import check_srun
from jitexp.engine.tune_space import EXTRA, added, is_tune, override, read_space
from jitexp.errors import ConfigError


def check(argv: Sequence[str], *, import_in_child: bool = False) -> list[ExperimentConfig]:
    """Every job the command line `jitexp ARGV` would run, validated; raise ConfigError on the first mistake.

    `--help`, `--hydra-help`, `--cfg` and `--info` only get their overrides' syntax checked: they
    run nothing, and composing twice would slow them down. import_in_child (the command line's driver): for a job
    whose workers will fork from this process's forkserver, the server starts now and the job's functions are
    imported and checked in a child of it, so that the driver never imports JAX (~1 s of CPU) only to check an
    arity; otherwise (a caller in Python) the check runs here and nothing starts.
    """
    return check_command(argv, import_in_child=import_in_child).jobs


@dataclass(frozen=True)
class Checked:
    """What the preflight found of a command line: its jobs, and hydra.mode as Hydra's get_mode reads it (MODE_UNREAD
    when the preflight did not compose the config that gives it)."""

    jobs: list[ExperimentConfig]
    hydra_mode: Any = MODE_UNREAD
    output: Output | None = None  # the run's or sweep's folder, where the preflight resolved it


@dataclass(frozen=True)
class Output:
    """The folder a command line writes: `key` (hydra.run.dir or hydra.sweep.dir) resolved to `path` at the
    preflight; `clocked`: named from the clock (`${now:...}`, the default), so each run claims a folder of its own
    (store.folders.claim_folder); `overwrite`: overwrite=true, the results an earlier run left there are replaced."""

    key: str
    path: str
    clocked: bool
    overwrite: bool


def check_command(argv: Sequence[str], *, import_in_child: bool = False) -> Checked:
    """check(argv), with hydra.mode beside the jobs (the command line hands it to Hydra: compose.known_mode).

    import_in_child: the workers' forkserver starts at once, before the first compose, so that its preload (`import
    jax`, 0.5 s on a CPU, seconds beside a TPU) overlaps the composing; it is stopped again when a job turns out
    to run its workers elsewhere or in another environment (a SLURM node, `envs`, hydra.job.env_set)."""
    args = parse_args(argv)
    if args is None:  # a malformed flag: Hydra's argparse says so, except a choice that swallowed an override
        swallowed = flag_choice_error(argv)
        if swallowed is not None:
            raise swallowed
        return Checked([])
    if args.help or args.hydra_help or args.shell_completion:
        return Checked([])
    overrides = parse_overrides(args.overrides)
    if (args.cfg or args.info) and args.multirun:  # Hydra's own ValueError otherwise
        flag = "--cfg" if args.cfg else "--info"
        raise ConfigError(
            flag,
            args.cfg or args.info,
            f"{flag} shows one job's config and -m runs a sweep: Hydra takes one of them; drop -m and give one point "
            "of the sweep (size=64, not size=64,128)",
        )
    if args.cfg:  # the config shown is one a job would run: its mistakes are said, as the job would say them
        with hydra_session(args.config_dir) as hydra:
            _jobs(hydra, list(args.overrides), overrides, multirun=False, arity=None)
        return Checked([])
    if args.info:
        return Checked([])
    if import_in_child:
        start_server(WORKER.module)
    with hydra_session(args.config_dir) as hydra:
        arity = _Arity(import_in_child)
        try:
            jobs, mode, output = _jobs(hydra, list(args.overrides), overrides, multirun=args.multirun, arity=arity)
        finally:
            if arity.child is not None:
                arity.child.close()
    if import_in_child and not arity.all_here:
        stop_server()
    check_envs(jobs)
    for job in jobs:
        check_srun(job.distributed.processes)
    return Checked(jobs, mode, output)


def check_envs(jobs: Sequence[ExperimentConfig]) -> None:
    """Each distinct `envs` interpreter of the jobs: an executable Python with this jitexp (envserver.check)."""
    from jitexp.engine.envserver import check as check_env

    seen = set()
    for job in jobs:
        for name, path in (job.envs or {}).items():
            if (name, path) not in seen:
                seen.add((name, path))
                check_env(f"envs.{name}", path)


def compose(overrides: Sequence[str] = (), config_dir: str | None = None) -> ExperimentConfig:
    """The validated ExperimentConfig of one job, `jitexp OVERRIDES...` (no sweep), for use from Python."""
    overrides = replacing(overrides)
    parsed = parse_overrides(overrides)
    for o in parsed:
        if o.is_hydra_override():  # they steer a command-line run: folders, launchers, sweepers
            raise ConfigError(
                o.key_or_group,
                o.get_value_element_as_str(),
                "Hydra's own keys steer a command-line run, and compose() makes one job's config without running "
                "it, so it would be ignored; drop it (run `jitexp` with it instead)",
            )
        if o.is_sweep_override():
            raise ConfigError(
                o.key_or_group,
                o.input_line.partition("=")[2],
                "compose() makes one job's config; a sweep is `jitexp -m` (or one compose() per point)",
            )
    with hydra_session(config_dir) as hydra:
        return _job(hydra, overrides, parsed)


def _jobs(
    hydra: Any, texts: list[str], parsed: list[Any], *, multirun: bool, arity: _Arity | None
) -> tuple[list[ExperimentConfig], Any, Output | None]:
    """The jobs, hydra.mode as Hydra's get_mode reads it (a config value: the same under either run mode), and the
    folder they write. arity None: the functions are not imported (`--cfg job` must not import JAX)."""
    from hydra.types import RunMode

    if not multirun:  # as Hydra decides: a preset may make it a sweep by itself (hydra.mode)
        if any(o.is_sweep_override() for o in parsed):
            multirun = _mode(hydra, texts) == RunMode.MULTIRUN
        if not multirun:
            base = compose_config(hydra, texts, parsed, run_mode="RUN")  # a,b without -m: "add -m"
            multirun = base.hydra.mode == RunMode.MULTIRUN
        if not multirun:
            _check_folder_keys(parsed, multirun=False)
            output = _check_output_dir("hydra.run.dir", base, "run")
            job = _validated(hydra, base, parsed, arity)
            point = " ".join(o.input_line for o in parsed if not o.is_hydra_override())
            _check_resume(output, base, [config_hash(base)], [point], sweep=False)
            if is_tune(base.hydra.sweeper):
                raise ConfigError("hydra/sweeper", "tune", "runs a search of many jobs: add -m (--multirun)")
            _check_tune_unused([job])
            return [job], base.hydra.mode, output
    _check_folder_keys(parsed, multirun=True)
    base = compose_config(hydra, texts, parsed, run_mode="MULTIRUN")
    output = _check_output_dir("hydra.sweep.dir", base, "sweep")
    task = [o.input_line for o in parsed if not o.is_hydra_override()]
    if is_tune(base.hydra.sweeper):
        return [_tune_baseline(hydra, base, task, parsed, arity)], base.hydra.mode, output
    batches = sweep_jobs(base.hydra.sweeper, task, hydra.config_loader)
    if batches is None:
        if arity is not None:
            arity.all_here = False  # another sweeper's grammar (ranges, intervals) is its own to expand and check
        return [], base.hydra.mode, output
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create(config_loader=hydra.config_loader)
    if not batches:
        _check_selects(hydra, parse_with(parser, task))
    hydra_overrides = [o.input_line for o in parsed if o.is_hydra_override()]
    jobs, digests = _sweep_points(hydra, parser, hydra_overrides, batches, arity)
    _check_repeats(jobs, batches, parsed)
    _check_tune_unused(jobs)
    _check_resume(output, base, digests, [" ".join(b) for b in batches], sweep=True)
    return jobs, base.hydra.mode, output


def _sweep_points(
    hydra: Any, parser: Any, hydra_overrides: list[str], batches: list[list[str]], arity: _Arity | None
) -> tuple[list[ExperimentConfig], list[str | None]]:
    """Each sweep point composed and validated as its job will be, with its config_hash; their job folders checked
    (_check_job_subdirs)."""
    jobs, digests, subdirs = [], [], []
    for num, job_overrides in enumerate(batches):
        job_parsed = parse_with(parser, hydra_overrides + job_overrides)
        cfg = compose_config(hydra, hydra_overrides + job_overrides, job_parsed, run_mode="RUN")
        jobs.append(_validated(hydra, cfg, job_parsed, arity))
        digests.append(config_hash(cfg))
        subdirs.append(_job_subdir(cfg, num))
    _check_job_subdirs(subdirs, batches)
    return jobs, digests


def _tune_baseline(
    hydra: Any, base: DictConfig, task: list[str], parsed: list[Any], arity: _Arity | None
) -> ExperimentConfig:
    """hydra/sweeper=tune: Optuna is there, the search space reads, and the job at the space's first point is valid
    (each trial's own values are checked by its job: a mistake there is a failed trial with its reason)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    try:
        import optuna  # noqa: F401  (the sweeper imports it next, in this process)
    except ImportError:
        raise ConfigError("hydra/sweeper", "tune", f"needs Optuna, in jitexp's tune extra: {EXTRA}") from None
    from jitexp.engine.tune import study_held

    folder = OmegaConf.select(base, "hydra.sweep.dir", throw_on_resolution_failure=False)
    if folder is not None:
        held = study_held(Path(str(folder)), resume=bool(base.get("resume")), overwrite=bool(base.get("overwrite")))
        if held:
            raise ConfigError("hydra.sweep.dir", str(folder), held)
    parser = OverridesParser.create(config_loader=hydra.config_loader)
    params = base.hydra.sweeper.get("params")
    space = read_space(cast(dict, OmegaConf.to_container(params, resolve=False)) if params else {}, task, parser)
    choices = OmegaConf.select(base, "hydra.runtime.choices", default={}) or {}
    present = [
        OmegaConf.select(base, d.key, default=_ABSENT) is not _ABSENT or d.key in choices for d in space.dimensions
    ]
    point = [override(added(d, here), d.first()) for d, here in zip(space.dimensions, present)]
    hydra_overrides = [o.input_line for o in parsed if o.is_hydra_override()]
    texts = hydra_overrides + list(space.fixed) + point
    job_parsed = parse_with(parser, texts)
    cfg = compose_config(hydra, texts, job_parsed, run_mode="RUN")
    return _validated(hydra, cfg, job_parsed, arity)


def _check_tune_unused(jobs: list[ExperimentConfig]) -> None:
    """A tune.* key set in a run that is no tune sweep would be ignored: refused, naming the sweeper."""
    import dataclasses

    from jitexp.config.schema import TuneConfig

    defaults = TuneConfig()
    for job in jobs:
        for f in dataclasses.fields(TuneConfig):
            value = getattr(job.tune, f.name)
            if value != getattr(defaults, f.name):
                raise ConfigError(
                    f"tune.{f.name}", value, "is used only by the tune sweeper: jitexp -m hydra/sweeper=tune ..."
                )


def _check_selects(hydra: Any, parsed: list[Any]) -> None:
    """A sweep whose points are none (`size=range(64,32)`, `workload=glob(zzz*)`) is refused naming the override
    that selects nothing: it would run no job and exit 0."""
    for o in parsed:
        if not o.is_sweep_override():
            continue
        try:
            values = list(o.sweep_string_iterator())
        except Exception:  # pragma: no cover - Hydra's parser said what is wrong already
            continue
        if values:
            continue
        key = o.get_key_element().lstrip("+~")
        try:
            options = hydra.config_loader.get_group_options(key)
        except Exception:  # not a group
            options = []
        choices = f"; valid choices: {', '.join(options)}" if options else ""
        raise ConfigError(
            key,
            o.input_line.partition("=")[2],
            f"selects no value, so the sweep would run no job{choices}",
        )


def _check_repeats(jobs: list[ExperimentConfig], batches: list[list[str]], parsed: list[Any]) -> None:
    """Two sweep points that are the same job are refused: their rows would be one case measured twice and merged
    as if paired. The key named is the swept one that repeats a value (size=64,64), else the first override the two
    points spell differently."""
    swept = {o.get_key_element().lstrip("+~") for o in parsed if o.is_sweep_override()}

    def shown(batch: list[str]) -> str:  # a point by the swept keys' values
        return " ".join(o for o in batch if o.partition("=")[0].lstrip("+~") in swept) or " ".join(batch)

    seen: dict[str, int] = {}
    measured: dict[str, int] = {}
    for j, job in enumerate(jobs):
        text = repr(job)
        i = seen.setdefault(text, j)
        if i == j:
            k = measured.setdefault(_measured(job), j)
            if k != j:
                labels = [o for o in batches[j] if o not in batches[k]] or batches[j]
                key = labels[0].partition("=")[0].lstrip("+~")
                swept_as = next((o for o in parsed if o.is_sweep_override() and o.get_key_element() == key), None)
                raise ConfigError(
                    key,
                    swept_as.input_line.partition("=")[2] if swept_as is not None else labels[0].partition("=")[2],
                    f"sweep points #{k} ({shown(batches[k])}) and #{j} ({shown(batches[j])}) "
                    f"{_same_measurement(jobs[k], job)}: one job measured twice under two labels; sweep a key the "
                    "function reads",
                )
            continue
        first, again = batches[i], batches[j]
        differing = [o for o in again if o not in first] or again
        differing = [o for o in differing if o.partition("=")[0].lstrip("+~") in swept] or differing
        key = differing[0].partition("=")[0].lstrip("+~") if differing else "-m"
        sweep = next((o for o in parsed if o.is_sweep_override() and o.get_key_element().lstrip("+~") == key), None)
        value = sweep.input_line.partition("=")[2] if sweep is not None else differing[0].partition("=")[2]
        raise ConfigError(
            key,
            value,
            f"sweep points #{i} ({shown(first)}) and #{j} ({shown(again)}) are the same job; give each point "
            "once (to measure it again, run it again, or raise timing.processes)",
        )


# the keys that label or steer a job, or add columns after its timed rounds, but change no timed measurement
UNMEASURED = (
    "workload.name",
    "workload.description",
    "progress",
    "fail_on_error",
    "resume",
    "overwrite",
    "check",
    "roofline",
)


def _measured(job: ExperimentConfig) -> str:
    """The job without the keys that only label or steer it, its statics as in force (`mode.static_argnums=null` is
    the workload's default): two sweep points equal here measure the same thing."""
    import dataclasses

    workload = dataclasses.replace(job.workload, name=None, description="", static_argnums=[], static_argnames=[])
    mode = dataclasses.replace(
        job.mode, static_argnums=list(job.static_argnums), static_argnames=list(job.static_argnames)
    )
    steered = dataclasses.replace(
        job,
        workload=workload,
        mode=mode,
        progress=None,
        fail_on_error=False,
        resume=False,
        overwrite=False,
        check=True,
        roofline=True,
    )
    return repr(steered)


def _same_measurement(first: ExperimentConfig, again: ExperimentConfig) -> str:
    """Why two sweep points that are spelt differently measure the same thing, in words."""
    for key in ("static_argnums", "static_argnames"):
        chosen = (getattr(first.mode, key), getattr(again.mode, key))
        if chosen[0] != chosen[1] and None in chosen:
            return f"measure the same thing: mode.{key}=null is the workload's default, {list(getattr(first, key))}"
    return f"differ only in keys that change no timed measurement ({', '.join(UNMEASURED)})"


def _mode(hydra: Any, texts: list[str]) -> Any:
    """hydra.mode as Hydra's get_mode reads it (None when the config does not compose yet)."""
    from hydra.types import RunMode

    try:
        return hydra.compose_config(
            CONFIG_NAME, list(texts), run_mode=RunMode.MULTIRUN, validate_sweep_overrides=False
        ).hydra.mode
    except Exception:
        return None


def _job(hydra: Any, texts: list[str], parsed: list[Any]) -> ExperimentConfig:
    return _validated(hydra, compose_config(hydra, texts, parsed, run_mode="RUN"), parsed, None)


@dataclass
class _Arity:
    """The arity checks of one command line: each distinct set of functions and call shapes once, in one forkserver
    child for all of them where in_child and the job's workers fork here (the driver stays free of JAX), else in
    this process."""

    in_child: bool
    seen: set = field(default_factory=set)
    child: Child | None = None
    all_here: bool = True  # every job's workers fork from this process's forkserver, in its environment


def _validated(hydra: Any, cfg: DictConfig, parsed: list[Any], arity: _Arity | None) -> ExperimentConfig:
    """The job's ExperimentConfig: schema keys, values, param types, and (for a run) fn's arity."""
    _check_shadowed(hydra, parsed)
    _check_deletes(hydra, cfg, parsed)
    _check_group_lists(hydra, parsed)
    workload = OmegaConf.select(cfg, "hydra.runtime.choices.workload")
    try:
        params = OmegaConf.to_container(cfg.workload.params, resolve=True)
    except OmegaConfBaseException:  # an interpolation that does not resolve: from_dict names it
        params = None
    task = cast(dict, OmegaConf.to_container(cfg, resolve=False))
    task.pop("hydra", None)
    try:
        if isinstance(params, dict):
            check_param_types(_option_params(hydra, workload), cast(dict, params))
        exp = from_dict(OmegaConf.create(task))
        given = [o.key_or_group for o in parsed if not o.is_hydra_override()]
        check_used(exp, task, given)
    except ConfigError as error:
        raise located(hydra, _deleted(_with_override_value(error, parsed), parsed), parsed) from error
    if arity is None:
        return exp
    here = _runs_here_in_fresh_processes(exp, cfg)
    arity.all_here = arity.all_here and here
    in_child = arity.in_child and here
    if in_child and arity.child is None:
        arity.child = Child(WORKER.module)  # in the workers' own forkserver
        arity.child.start()
    try:
        _check_arity_once(exp, arity, in_child)
        _check_variants_arity(exp, arity, in_child)
    except ConfigError as error:
        raise located(hydra, error, parsed) from error
    return exp


_ABSENT = object()


def _group_options(hydra: Any, key: str) -> list[str]:
    try:
        return list(hydra.config_loader.get_group_options(key))
    except Exception:  # not a group
        return []


def _schema() -> DictConfig:
    """ExperimentConfig's own defaults: a key found here is one the job always has."""
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = OmegaConf.structured(ExperimentConfig)
    return _SCHEMA


_SCHEMA: DictConfig | None = None


def _check_deletes(hydra: Any, cfg: DictConfig, parsed: list[Any]) -> None:
    """A `~KEY` that deletes nothing the job goes without is refused: `~timing` (a group with defaults) and `~seed` (a
    key of the schema) would run the schema's defaults unsaid."""
    for o in parsed:
        if not o.is_delete() or o.is_hydra_override():
            continue
        key = o.key_or_group
        options = _group_options(hydra, key)
        if options and OmegaConf.select(cfg, key, default=_ABSENT) is not _ABSENT:
            raise ConfigError(
                f"~{key}",
                None,
                f"deletes the {key} group's selection, and the job would run the schema's own {key} defaults "
                f"unsaid; choose one with {key}=NAME: valid choices: {', '.join(options)}",
            )
        value = OmegaConf.select(_schema(), key, default=_ABSENT)
        if not options and value is not _ABSENT and not isinstance(value, DictConfig):
            raise ConfigError(
                f"~{key}",
                None,
                f"{key} is a key of jitexp's schema, so deleting it runs the schema's default {value!r} unsaid; "
                f"write {key}={value} to mean that",
            )


def _check_group_lists(hydra: Any, parsed: list[Any]) -> None:
    """A group given a list with an option twice (`mode=[eager,jit,jit]`) is refused: Hydra would use it once."""
    for o in parsed:
        if o.is_sweep_override() or o.is_hydra_override() or not isinstance(o.value(), list):
            continue
        value = o.value()
        repeated = [v for i, v in enumerate(value) if v in value[:i]]
        if repeated and _group_options(hydra, o.key_or_group):
            raise ConfigError(
                o.key_or_group,
                o.get_value_element_as_str(),
                f"names {repeated[0]} twice; each option is used once, so give it once",
            )


def _runs_here_in_fresh_processes(exp: ExperimentConfig, cfg: DictConfig) -> bool:
    """The job's workers will fork from this process's forkserver: isolate=process, no envs, no srun step, and
    Hydra's basic launcher (a SLURM launcher runs the job, and its forkserver, on a node). Not with
    hydra.job.env_set: Hydra sets those variables when the job starts, and the server reads its environment once."""
    launcher = str(OmegaConf.select(cfg, "hydra.launcher._target_", default="") or "")
    local = launcher.endswith("BasicLauncher") and not OmegaConf.select(cfg, "hydra.job.env_set", default=None)
    return local and exp.isolate == "process" and not exp.envs and exp.distributed.processes <= 1


def _check_variants_arity(exp: ExperimentConfig, arity: _Arity, in_child: bool) -> None:
    """check_arity on each variant's own config; a mistake is named `variants.NAME.KEY`."""
    for name, variant in variant_configs(exp).items():
        try:
            _check_arity_once(variant, arity, in_child)
        except ConfigError as error:
            raise ConfigError(f"variants.{name}.{error.key}", error.value, error.expected) from None


def _check_arity_once(exp: ExperimentConfig, arity: _Arity, in_child: bool) -> None:
    """check_arity, once per distinct set of functions and call shapes in a sweep."""
    w = exp.workload
    key = (
        w.fn,
        w.numpy_fn,
        w.setup,
        repr(w.args),
        tuple(w.kwargs),
        tuple(w.params),
        exp.static_argnames,
        tuple(exp.mode.donate_argnames),
        exp.jit_fn,
        repr(sorted(jit_options_in_force(exp))),
        exp.mode.names,
    )
    if key not in arity.seen:
        _check_arity(exp, arity.child if in_child else None)
        arity.seen.add(key)


def _check_arity(exp: ExperimentConfig, child: Child | None) -> None:
    if child is not None:
        done, mistake = child.call("jitexp.config.imports", "arity_mistake", exp)
        if done:
            if mistake is not None:
                raise ConfigError(*mistake)
            return
    check_arity(exp)  # here, or again here when the child died (a crash here then shows where it happens)


def _option_params(hydra: Any, workload: str | None) -> dict:
    """The params of the workload's own file, unresolved: their types are the types they keep."""
    if not workload:
        return {}
    loaded = hydra.config_loader.repository.load_config(f"workload/{workload}")
    if loaded is None or not isinstance(loaded.config.get("params"), DictConfig):
        return {}
    params = loaded.config.params
    return {k: params[k] for k in params if not OmegaConf.is_interpolation(params, k)}


def _check_folder_keys(parsed: list[Any], *, multirun: bool) -> None:
    """A folder key the run would ignore (hydra.run.dir in a sweep, hydra.sweep.* in a single run) is refused."""
    for o in parsed:
        if o.is_delete() or not o.is_hydra_override():
            continue
        value = o.get_value_element_as_str() if o.value() is not None else ""
        if multirun and o.key_or_group == "hydra.run.dir":
            raise ConfigError(
                o.key_or_group,
                value,
                "names a single run's folder, and -m runs a sweep, which would ignore it: write "
                f"hydra.sweep.dir={value or 'FOLDER'}",
            )
        if not multirun and o.key_or_group in ("hydra.sweep.dir", "hydra.sweep.subdir"):
            raise ConfigError(
                o.key_or_group,
                value,
                "names a sweep's folder, and this is a single run (no -m), which would ignore it: write "
                "hydra.run.dir=FOLDER, or add -m",
            )


def _job_subdir(cfg: DictConfig, num: int) -> str | None:
    """Job #num's folder name below the sweep's (hydra.sweep.subdir resolved as Hydra will; None where it cannot be
    resolved outside a running job)."""
    node = cfg.copy()
    try:
        OmegaConf.update(node, "hydra.job.num", num, force_add=True)
        return str(OmegaConf.select(node, "hydra.sweep.subdir", throw_on_resolution_failure=True))
    except OmegaConfBaseException:
        return None


def _check_job_subdirs(subdirs: list[str | None], batches: list[list[str]]) -> None:
    """Two jobs writing one folder (a fixed hydra.sweep.subdir: the later replaced the earlier's rows) or a job folder
    named as another job's number (`${size}`: the gathering read 8/ and 16/ as no jobs of a 2-job sweep and left
    them out) are refused before anything runs."""
    seen: dict[str, int] = {}
    for num, name in enumerate(subdirs):
        if name is None:
            continue
        if name in seen:
            raise ConfigError(
                "hydra.sweep.subdir",
                name,
                f"jobs #{seen[name]} ({' '.join(batches[seen[name]])}) and #{num} ({' '.join(batches[num])}) would "
                "share that folder, and the later would replace the earlier's rows; name it from every swept key, "
                "or drop it (the job number)",
            )
        seen[name] = num
        if name.isdigit() and int(name) != num:
            raise ConfigError(
                "hydra.sweep.subdir",
                name,
                f"job #{num}'s folder would be named {name}, a job number, and the gathered results.csv reads job "
                "folders by number (it left this one out); give it a prefix (e.g. size_${size}), or drop it",
            )


def _check_output_dir(key: str, cfg: DictConfig, which: str) -> Output | None:
    """A folder jitexp can write, and one that holds no earlier run's results unless the user said what to do with
    them: overwrite=true replaces them, resume=true keeps the jobs already complete for the same config. A folder
    named from the clock (the default) is not checked for results: the run claims one of its own (Output)."""
    try:
        path = cfg.hydra[which].dir
    except OmegaConfBaseException:  # resolvers that only exist inside a running job
        return None
    if not str(path).strip():
        raise ConfigError(
            key, str(path), f"is empty, so every CSV would land in the current folder; name a folder: {key}=FOLDER"
        )
    writable_dir(key, path)
    written = cast(dict, OmegaConf.to_container(cfg.hydra[which], resolve=False)).get("dir")
    output = Output(key, str(path), "${now:" in str(written), bool(OmegaConf.select(cfg, "overwrite", default=False)))
    if output.clocked or output.overwrite or OmegaConf.select(cfg, "resume", default=False):
        return output
    from jitexp.store.folders import held_results

    held = held_results(path)
    if held:
        shown = ", ".join(held[:3]) + (f", ... ({len(held) - 3} more)" if len(held) > 3 else "")
        keep = "resume=true to keep its jobs complete for this config, " if which == "sweep" else ""
        raise ConfigError(
            key,
            path,
            f"already holds the results of an earlier run ({shown}); write {keep}overwrite=true to replace them, "
            f"or another {key}",
        )
    return output


def _check_resume(
    output: Output | None, cfg: DictConfig, digests: list[str | None], points: list[str], *, sweep: bool
) -> None:
    """resume=true into a folder whose rows are of another config (a changed config, another sweep) is refused: the
    job would replace them (store.folders.resume_conflict says which)."""
    if output is None or output.clocked or output.overwrite or not OmegaConf.select(cfg, "resume", default=False):
        return
    from jitexp.store.csvio import BadCsv
    from jitexp.store.folders import resume_conflict

    try:
        conflict = resume_conflict(output.path, digests, points, sweep=sweep)
    except BadCsv as bad:  # a results.csv cut short or edited: resume cannot tell which jobs are complete
        conflict = f"resume=true, but {bad}; restore it, or write overwrite=true to replace the folder's results"
    if conflict:
        raise ConfigError(output.key, output.path, conflict)


def _with_override_value(error: ConfigError, parsed: list[Any]) -> ConfigError:
    if error.value is not None:
        return error
    value = override_value(parsed, error.key)
    return error if value is None else ConfigError(error.key, value, error.expected, error.source)


def _deleted(error: ConfigError, parsed: list[Any]) -> ConfigError:
    """An interpolation to a key a `~KEY` override deleted says which override did it."""
    if not error.expected.startswith("refers to "):
        return error
    target = error.expected.removeprefix("refers to ").partition(",")[0]
    for o in parsed:
        if o.is_delete() and (target == o.key_or_group or target.startswith(o.key_or_group + ".")):
            return ConfigError(
                error.key,
                error.value,
                f"refers to {target}, which ~{o.key_or_group} deleted; keep {target}, or set {error.key} too",
                error.source,
            )
    return error


def _check_shadowed(hydra: Any, parsed: list[Any]) -> None:
    """A config the job uses from jitexp's own conf/ while a user's --config-dir (or hydra.searchpath) folder holds a
    file of the same name: Hydra takes the first in its search path, jitexp's, so the user's file would be silently
    ignored. One line naming both, and what to write instead."""
    from hydra.types import RunMode

    loader = hydra.config_loader
    sources = loader.repository.get_sources()
    if not any(source.scheme() == "file" for source in sources):
        return  # no folder of the user's in the search path (0.1 s of defaults list saved)
    try:
        defaults = loader.compute_defaults_list(CONFIG_NAME, [o.input_line for o in parsed], RunMode.RUN).defaults
    except Exception:  # composing said what is wrong already
        return
    for d in defaults:
        path = d.config_path
        if not path or path.startswith("hydra/") or "/" not in path:
            continue
        holders = [source for source in sources if source.is_config(path)]
        if len(holders) < 2 or holders[0].scheme() != "pkg":
            continue
        users = [source for source in holders[1:] if source.scheme() == "file"]
        if users:
            import os

            mine = os.path.join(users[0].path, f"{path}.yaml")
            rel = os.path.relpath(mine)
            group, _, option = path.rpartition("/")
            raise ConfigError(
                group,
                option,
                f"jitexp's own {path}.yaml comes first in the search path, so your {rel if not rel.startswith('..') else mine} "
                f"would be ignored (jitexp --info searchpath); rename your file, e.g. to my_{option}.yaml, and select "
                f"{group}=my_{option}",
            )
