"""The `jitexp` command: a thin @hydra.main around runner.run, writing the job's CSVs.

JAX, NumPy and pandas are imported only inside the job, so `jitexp --help` and
`jitexp --cfg job` start fast. Config mistakes are caught before Hydra runs (preflight.py).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from omegaconf import DictConfig

# Hydra, OmegaConf and jitexp.config are imported in main(), inside its Ctrl-C guard: a Ctrl-C while they load
# (~0.2 s) is the same one line and exit 130 as one later, not a traceback.
log = logging.getLogger("jitexp")
__all__ = ["main"]

# the single job running now (cli._job sets it): what a Ctrl-C says it kept
_running: dict[str, Any] = {}


def _job(cfg: DictConfig) -> Any:
    """One job, as Hydra runs it (main wraps it in @hydra.main); under hydra/sweeper=tune it returns the trial's
    outcome to the sweeper (engine.tune.TrialReturn), else None. A Ctrl-C held while Hydra composed is raised here."""
    from jitexp.engine.interrupts import held

    held.release()
    import pandas as pd
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import OmegaConf

    from jitexp.analysis.formatting.answer import job_summary
    from jitexp.analysis.formatting.block import block_lines, sweep_line
    from jitexp.analysis.formatting.values import display_path
    from jitexp.callbacks import failing_rows
    from jitexp.config import to_config
    from jitexp.engine.console import print_block
    from jitexp.errors import ConfigError, Interrupted
    from jitexp.records import INTERRUPTED
    from jitexp.store.folders import RESULTS_CSV, clear_job, is_complete, job_overrides, write_job

    hc = HydraConfig.get()
    multirun = hc.mode == RunMode.MULTIRUN
    job_num = int(hc.job.num) if multirun else 0
    # unresolved: an override may itself hold ${...} (workload.args=[{shape:[${size}]}])
    overrides = job_overrides(cast(list, OmegaConf.to_container(hc.overrides.task, resolve=False)))
    out_dir = Path(hc.runtime.output_dir)
    digest = config_hash(cfg)
    tuning = multirun and _tuning(hc)
    if cfg.get("resume") and is_complete(out_dir, digest, job_num, overrides):
        progress = _progress(Path(hc.sweep.dir), job_num) if multirun else ""
        log.info(f"{progress}job #{job_num} ({overrides}) already complete for this config: skipped")
        return _tune_return(out_dir, cfg) if tuning else None
    clear_job(out_dir)  # files of an earlier run in this folder never mix with this one's
    _running.clear()
    _running.update(where=f"{display_path(out_dir)}/")
    if OmegaConf.select(cfg, "fit.key") is not None:  # experiment=fit (engine.fit): a search, then the largest's job
        from jitexp.engine.fit import fit_job

        if not fit_job(
            cfg, out_dir, job_num=job_num, overrides=overrides, sweep=_sweep(hc, multirun, job_num), digest=digest
        ):
            sys.exit(1)
        return
    try:
        from jitexp.engine.runner import run

        # the preflight validated every job of this command line before Hydra started; only convert here
        result = run(to_config(cfg), job_num=job_num, overrides=overrides, sweep=_sweep(hc, multirun, job_num))
    except Interrupted as stop:  # Ctrl-C: the processes that finished are kept, as rows of their own
        if stop.result is None:
            _running["kept"] = (
                f"discarded the {stop.finished} finished process{'es' if stop.finished != 1 else ''} of job #{job_num}: "
                "with envs or timing.interleave=processes its processes pair up, and half a pair makes no row"
            )
            raise KeyboardInterrupt from None
        for row in stop.result.rows:
            row["config_hash"] = digest
        write_job(stop.result, out_dir)
        _running["kept"] = (
            f"kept the {stop.finished} process{'es' if stop.finished != 1 else ''} of job #{job_num} that finished: "
            f"{display_path(out_dir)}/{RESULTS_CSV} (stop_reason={INTERRUPTED}; resume=true measures it again)"
        )
        raise KeyboardInterrupt from None
    except ConfigError as error:
        if not multirun:
            print(f"jitexp: error: {error}", file=sys.stderr)
            sys.exit(2)
        from jitexp.analysis.rows import config_error_result
        from jitexp.provenance import code_provenance

        result = config_error_result(cfg, error, job_num=job_num, overrides=overrides)
        code = code_provenance([OmegaConf.select(cfg, "workload.fn"), OmegaConf.select(cfg, "workload.setup")])
        for row in result.rows:
            row.update(code)  # the commit of a job that could not run, as of the ones that did
    for row in result.rows:
        row["config_hash"] = digest
    write_job(result, out_dir)
    _running["kept"] = f"the job's rows are written: {display_path(out_dir)}/{RESULTS_CSV}"
    if multirun:
        _answer(sweep_line(result.rows, _progress(Path(hc.sweep.dir), job_num)), job_summary(result.rows))
        if tuning:
            from jitexp.engine.tune import job_return

            return job_return(result.rows, cfg.tune)
    else:
        where = display_path(out_dir)
        print_block(block_lines(result.rows, where))
        _log(job_summary(result.rows))
        _log(f"results: {where}/ (next: jitexp-report {where})")
        failed = [r for r in result.rows if r.get("status") != "ok"]
        for row in failed:
            hint = f" (hint: {row['hint']})" if row.get("hint") else ""
            print(
                f"jitexp: error: {row['mode']} failed in {row['error_phase']}: {row['error_type']}: "
                f"{row['error_message']}{hint}",
                file=sys.stderr,
            )
        # with fail_on_error, a time that is no speedup fails the job too (its line said why first)
        if failed or (cfg.get("fail_on_error") and failing_rows(pd.DataFrame(result.rows))):
            sys.exit(1)


def _tuning(hc: Any) -> bool:
    """Whether the sweep is hydra/sweeper=tune's (its jobs return their outcome)."""
    from jitexp.engine.tune_space import is_tune

    return is_tune(hc.sweeper)


def _tune_return(out_dir: Path, cfg: DictConfig) -> Any:
    """A tune trial whose job was complete already (resume=true): its outcome read back from its rows."""
    from jitexp.engine.tune import job_return
    from jitexp.store.folders import JobFolder

    frame = JobFolder(out_dir).results
    return job_return(frame.to_dict("records"), cfg.tune)


def _answer(shown: str, logged: str) -> None:
    """A sweep job's answer: its short line on stdout, the whole one-line form in the job's log file only."""
    print(shown, flush=True)
    _log(logged)


def _log(line: str) -> None:
    """A record in the job's log file (jitexp.log) only: the terminal has the block or the short line."""
    record = log.makeRecord(log.name, logging.INFO, __file__, 0, line, (), None)
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.FileHandler):
            handler.handle(record)


def config_hash(cfg: DictConfig) -> str:
    """A short digest of the job's resolved config (without resume/fail_on_error/overwrite): resume compares it."""
    from jitexp.config.digest import config_hash as digest

    found = digest(cfg)
    assert found is not None  # inside the job every interpolation resolves
    return found


def _sweep(hc: Any, multirun: bool, job_num: int) -> Any:
    """Where this job stands for its status line: engine.progress.Sweep (job 1 of 1 for a single job)."""
    from jitexp.engine.progress import Sweep
    from jitexp.store.folders import JOBS_CSV, read_manifest

    if not multirun:
        return Sweep(0, 1, 0.0)
    sweep_dir = Path(hc.sweep.dir)
    jobs = read_manifest(sweep_dir)
    if not jobs:
        return Sweep(0, 1, 0.0)
    return Sweep(job_num, len(jobs), max(0.0, time.time() - (sweep_dir / JOBS_CSV).stat().st_mtime))


def _progress(sweep_dir: Path, job_num: int) -> str:
    """`[3/12 25 s, ~75 s left] `: where the sweep stands (from its job list, written when it started)."""
    from jitexp.store.folders import JOBS_CSV, read_manifest

    jobs = read_manifest(sweep_dir)
    if not jobs:
        return ""
    elapsed = max(0.0, time.time() - (sweep_dir / JOBS_CSV).stat().st_mtime)
    done = job_num + 1
    left = elapsed / done * (len(jobs) - done)
    eta = f", ~{left:.0f} s left" if done < len(jobs) else ""
    return f"[{done}/{len(jobs)} {elapsed:.0f} s{eta}] "


def main() -> None:
    """Console-script entry point (`jitexp` and `python -m jitexp`): Ctrl-C at any moment is one line, what was kept,
    and exit 130."""
    try:
        _main()
    except KeyboardInterrupt:
        sys.exit(_stopped("interrupted (Ctrl-C)", 130))


def _main() -> None:
    import hydra

    from jitexp.config import CONFIG_MODULE, register_configs
    from jitexp.errors import ConfigError

    # The current directory is importable for workload.fn, as it is for `python -m` and pytest.
    if os.getcwd() not in sys.path[:1]:
        sys.path.insert(0, os.getcwd())
    from jitexp.engine.compose import replacing
    from jitexp.engine.tune_space import quoted_params

    argv = sys.argv[1:] = quoted_params(replacing(sys.argv[1:]))  # Hydra reads sys.argv itself
    if "--version" in argv:
        from jitexp.helptext import version_text

        print(version_text())
        return
    # JAX logs at INFO that it found no TPU and that it resets its cache; Hydra's logging
    # config would print both every job.
    for name in ("jax._src.xla_bridge", "jax._src.compilation_cache"):
        logging.getLogger(name).setLevel(logging.WARNING)
    register_configs()
    from jitexp import helptext
    from jitexp.engine import preflight

    asks_help = "--help" in argv or "-h" in argv
    helptext.register_resolvers(listing=asks_help)
    try:
        if asks_help:
            print(helptext.help_page(argv))
            return
        from jitexp.config.imports import check_shadowing

        check_shadowing(os.getcwd())
        checked = preflight.check_command(argv, import_in_child=True)
    except ConfigError as error:
        if os.environ.get("HYDRA_FULL_ERROR") == "1":
            raise
        print(f"jitexp: error: {error}", file=sys.stderr)
        sys.exit(2)
    from jitexp import callbacks
    from jitexp.engine.compose import known_mode

    if checked.output is not None:
        _own_folder(checked.output)
    _register_sweeper()
    job = hydra.main(version_base="1.3", config_path=f"pkg://{CONFIG_MODULE}", config_name="config")(_job)
    from jitexp.engine.interrupts import held

    held.hold()  # until the job starts, or a sweep's callback (its jobs may run elsewhere: a SLURM launcher)
    try:
        try:
            with known_mode(checked.hydra_mode):
                job()
        finally:
            held.release()
    except SystemExit:
        # Hydra turns a launcher's exception (submitit's UncompletedJobError when a job died on
        # its node) into a message and exit 1; the jobs that finished still get gathered.
        if callbacks.current.get("root") is None or callbacks.current.get("ended"):
            raise
        sys.exit(_stopped("the launcher failed (see above)", 1))
    ended = callbacks.current
    if ended.get("ended"):
        state = ended["state"]
        if state.missing or (ended.get("fail_on_error") and ended.get("n_errors")):
            sys.exit(1)


def _register_sweeper() -> None:
    """hydra/sweeper=tune's class, registered by hand: Hydra finds plugins by listing the hydra_plugins namespace,
    which an editable install's import hook does not list."""
    from hydra.core.plugins import Plugins

    from hydra_plugins.jitexp_tune.tune_sweeper import TuneSweeper

    Plugins.instance().register(TuneSweeper)


def _own_folder(output: Any) -> None:
    """The run's folder, its own: a clock-named one (the default) claimed now, with a suffix when another run took
    that name in the same second (Hydra is told the claimed name); with overwrite=true, the results an earlier run left
    there removed, and said, so that no command reads them as this run's."""
    from jitexp.analysis.formatting.values import display_path
    from jitexp.store.folders import claim_folder, clear_results

    if output.clocked:
        claimed = claim_folder(output.path)
        sys.argv.append(f"{output.key}={_override_value(str(claimed))}")
    elif output.overwrite:
        removed = clear_results(output.path)
        if removed:
            shown = ", ".join(removed[:4]) + (f", ... ({len(removed) - 4} more)" if len(removed) > 4 else "")
            print(
                f"jitexp: overwrite=true: removed the results of an earlier run in {display_path(output.path)}/ "
                f"({shown})",
                file=sys.stderr,
            )


def _override_value(text: str) -> str:
    """text as a value of a Hydra command-line override: bare when its grammar reads it as written, else quoted."""
    import re

    if re.fullmatch(r"[\w./@+-]+", text) and not text[0].isdigit():
        return text
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _stopped(why: str, code: int) -> int:
    """A run that stopped early: gather what finished, say what was kept, no traceback (a second Ctrl-C meanwhile
    is ignored: the gathering takes a moment, and stopping it half-way would only lose the summary)."""
    import signal

    if code == 130:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    print(f"\njitexp: {why}", file=sys.stderr)
    callbacks = sys.modules.get("jitexp.callbacks")
    current: dict = getattr(callbacks, "current", {})
    root = current.get("root")
    try:
        if code == 130 and _running:
            print(f"jitexp: {_running.get('kept') or _discarded()}", file=sys.stderr)
        if root is not None and not current.get("ended"):
            current["ended"] = True
            assert callbacks is not None
            callbacks.gather_and_summarise(root)
        elif root is None and not _running:
            print("jitexp: stopped before any job started: nothing was measured or written", file=sys.stderr)
    except OSError as error:
        print(f"jitexp: error: the results could not be gathered: {error}", file=sys.stderr)
    return code


def _discarded() -> str:
    """What a job stopped by Ctrl-C before any of its processes finished leaves: nothing of it."""
    where = _running.get("where", "its folder")
    return f"the job stopped before any of its processes finished: nothing of it is kept in {where}"
