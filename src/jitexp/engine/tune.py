"""hydra/sweeper=tune: a study over Optuna's ask/tell API, each trial an ordinary jitexp job launched by Hydra's
launcher, the study's record an Optuna journal in the sweep folder, the winner confirmed against the baseline in
paired fresh processes (one more job, with variants). The decisions are analysis.tune's (pure)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf

from jitexp.analysis.tune import (
    COMPLETE,
    FAILED,
    REPEAT,
    RUNNING,
    Estimate,
    Outcome,
    Runoff,
    TrialRecord,
    Verdict,
    best_index,
    confirmed_ratio,
    estimate,
    params_label,
    pareto_front,
    per_call_note,
    repeat_of,
    resume_plan,
    runoff_contenders,
    runoff_pick,
    tied,
    trial_line,
    value_text,
    verdict,
)
from jitexp.config.tune import Objective, baseline_overrides, parse_objectives
from jitexp.engine.tune_space import EXTRA, Dimension, Space, added, encode, override, variants_text
from jitexp.engine.tune_space import value_text as override_text
from jitexp.errors import ConfigError, first_line

log = logging.getLogger("jitexp")

JOURNAL = "study.journal"  # the study's record (Optuna's JournalStorage, a file backend)
TRIALS_CSV = "trials.csv"  # a row per trial
CONFIRM_DIR = "confirm"  # the confirmation job's folder
RUNOFF_DIR = "runoff"  # the runoff job's folder
CONFIRM_JOB, RUNOFF_JOB = 10_000, 10_001  # their hydra.job.num, clear of the trials'
RUNOFF_PROCESSES = 6  # the runoff's fresh processes: its contenders side by side in each
VERDICT_TXT = "tune.txt"  # the confirmation's line
STUDY = "jitexp"
MAX_REPEATS = 25  # proposals in a row of points measured already: the space is exhausted


@dataclass
class TrialReturn:
    """What a tune job hands back to the sweeper: the outcome of its objectives, and its rows (trimmed)."""

    outcome: Outcome
    rows: list[dict] = field(default_factory=list)
    examples: float | None = None


KEPT = (
    "variant", "mode", "status", "error_phase", "error_type", "error_message", "hint", "median_s", "ci95_low_s",
    "ci95_high_s", "first_call_s", "first_call_ci95_low_s", "first_call_ci95_high_s", "compile_s",
    "device_peak_bytes", "peak_memory_bytes", "matches_eager", "max_rel_err_vs_eager", "n_processes",
    *(f"ab_{m}_{k}" for m in ("steady", "first_call", "compile") for k in ("ratio", "ratio_ci_low", "ratio_ci_high")),
)  # fmt: skip


def job_return(rows: Sequence[dict], tune: Any) -> TrialReturn:
    """The task function's return value in a tune sweep: the objectives' outcome from the job's rows."""
    from jitexp.analysis.tune import trial_outcome

    objectives = parse_objectives(
        OmegaConf.to_container(tune.objective) if OmegaConf.is_config(tune.objective) else tune.objective
    )
    examples = float(tune.examples) if tune.get("examples") else None
    kept = [{k: r.get(k) for k in KEPT if k in r} for r in rows]
    return TrialReturn(trial_outcome(rows, objectives, examples), kept, examples)


def study_held(root: Path, *, resume: bool, overwrite: bool) -> str:
    """Why a new study may not start in root (one holds its journal already), or "" when it may."""
    if resume or overwrite or not (root / JOURNAL).exists():
        return ""
    return f"holds a tune study already ({JOURNAL}); resume=true continues it, overwrite=true starts again"


def require_optuna() -> Any:
    """optuna, or the one line naming the extra."""
    try:
        import optuna
    except ImportError:
        raise ConfigError("hydra/sweeper", "tune", f"needs Optuna, in jitexp's tune extra: {EXTRA}") from None
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna


class Study:
    """One tune sweep: the search space, the Optuna study in the sweep folder, the launcher."""

    def __init__(self, config: DictConfig, launcher: Any, space: Space, n_jobs: int = 1) -> None:
        self.optuna = require_optuna()
        self.config = config
        self.launcher = launcher
        self.space = space
        self.n_jobs = max(1, n_jobs)
        self.root = Path(config.hydra.sweep.dir)
        tune = config.tune
        self.objectives: list[Objective] = parse_objectives(
            OmegaConf.to_container(tune.objective) if OmegaConf.is_config(tune.objective) else tune.objective
        )
        self.trials = int(tune.trials)
        self.resume = bool(config.get("resume"))
        self.records: list[TrialRecord] = []
        self.estimates: dict[int, tuple[Estimate, ...]] = {}
        self.reasons: dict[int, str] = {}
        self.examples: dict[int, float | None] = {}
        self.runoff: Runoff | None = None  # the best few measured again side by side, once it ran
        # a compiler option the config lacks is written +key=value
        present = [
            OmegaConf.select(config, d.key, default=_ABSENT) is not _ABSENT or d.key in _groups(config)
            for d in space.dimensions
        ]
        self.space = replace(space, dimensions=tuple(added(d, here) for d, here in zip(space.dimensions, present)))

    # ---- the study's record ----

    def open(self) -> Any:
        from optuna.storages import JournalStorage
        from optuna.storages.journal import JournalFileBackend

        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / JOURNAL
        if path.exists() and not self.resume:
            refusal = study_held(self.root, resume=False, overwrite=bool(self.config.get("overwrite")))
            if refusal:  # the preflight said it first; a Python caller reaches here
                raise ConfigError("hydra.sweep.dir", str(self.root), refusal)
            for name in (JOURNAL, TRIALS_CSV, VERDICT_TXT):  # overwrite=true: an earlier study's files go
                (self.root / name).unlink(missing_ok=True)
        storage = JournalStorage(JournalFileBackend(str(path)))
        seed = self.config.tune.get("seed")
        startup = max(2, min(10, self.trials // 3))
        sampler = self.optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup)
        directions = ["minimize"] * len(self.objectives)
        self.study = self.optuna.create_study(
            study_name=STUDY, storage=storage, sampler=sampler, directions=directions, load_if_exists=True
        )
        self._read_record()
        if self.records and seed is not None:  # resumed: the same seed would propose the measured points again
            self.study.sampler = self.optuna.samplers.TPESampler(
                seed=seed + len(self.records), n_startup_trials=startup
            )
        return self.study

    def _read_record(self) -> None:
        self.records = []
        states = self.optuna.trial.TrialState
        for t in self.study.get_trials(deepcopy=False):
            attrs = t.user_attrs
            if attrs.get("repeat_of") is not None:
                state = REPEAT
            elif t.state == states.COMPLETE:
                state = COMPLETE
            elif t.state == states.FAIL:
                state = FAILED
            else:
                state = RUNNING
            job = None if state == REPEAT else attrs.get("job")  # a repeat measured nothing: no folder of its own
            self.records.append(TrialRecord(t.number, self._decoded(t.params), state, job))
            if state == COMPLETE:
                self.estimates[t.number] = _estimates(attrs, len(self.objectives))
            if state == FAILED:
                self.reasons[t.number] = str(attrs.get("reason") or "failed")
            self.examples[t.number] = attrs.get("examples")

    # ---- the loop ----

    def run(self) -> None:
        self.open()
        plan = resume_plan(self.records, self.trials)
        if self.records:
            print(
                f"tune: resuming the study in {self.root}/{JOURNAL}: {plan.measured} trial(s) measured, "
                f"{len(plan.rerun)} interrupted to finish, {plan.new} new",
                flush=True,
            )
        try:
            for record in plan.rerun:
                trial = self.optuna.trial.Trial(self.study, self._trial_id(record.number))
                earlier = repeat_of(record.params, self.records)
                if earlier is not None:  # a point measured meanwhile: told its values, its folder left to a new one
                    self.records = [r for r in self.records if r.number != record.number]
                    self._tell_repeat(trial, earlier)
                    continue
                self._launch([(trial, record.job or 0, dict(record.params))])
            self._search(1 + max((r.job for r in self.records if r.job is not None), default=-1))
            self._final()
        finally:
            self.write_trials()

    def _trial_id(self, number: int) -> int:
        return next(t._trial_id for t in self.study.get_trials(deepcopy=False) if t.number == number)

    def measured(self) -> int:
        return sum(r.state in (COMPLETE, FAILED) for r in self.records)

    def _search(self, next_job: int) -> None:
        distributions = {d.key: _distribution(self.optuna, d) for d in self.space.dimensions}
        size = _grid(self.space.dimensions)
        repeats = 0
        while self.measured() < self.trials:
            if (
                size is not None
                and len({_key(r.params) for r in self.records if r.state in (COMPLETE, FAILED)}) >= size
            ):
                print(
                    f"tune: every one of the space's {size} points is measured: the study stops at {self.measured()} trials",
                    flush=True,
                )
                return
            batch: list[tuple[Any, int, dict]] = []
            while len(batch) < min(self.n_jobs, self.trials - self.measured()):
                trial = self.study.ask(distributions)
                params = self._decoded(trial.params)
                # a point of this batch, not measured yet: no value to tell (-1), so the sampler is told FAIL
                earlier = repeat_of(params, self.records) or next(
                    (TrialRecord(-1, p, COMPLETE, j) for _, j, p in batch if p == params), None
                )
                if earlier is not None:
                    self._tell_repeat(trial, earlier)
                    repeats += 1
                    if repeats > MAX_REPEATS:
                        print(
                            f"tune: the sampler proposed measured points {MAX_REPEATS} times in a row: the study stops at {self.measured()} trials",
                            flush=True,
                        )
                        return
                    continue
                repeats = 0
                trial.set_user_attr("job", next_job)
                self.records.append(TrialRecord(trial.number, params, RUNNING, next_job))
                batch.append((trial, next_job, params))
                next_job += 1
            if batch:
                self._launch(batch)

    def _tell_repeat(self, trial: Any, earlier: TrialRecord) -> None:
        trial.set_user_attr("repeat_of", earlier.number)
        self.records.append(TrialRecord(trial.number, self._decoded(trial.params), REPEAT, None))
        if earlier.number in self.estimates:
            self.study.tell(trial, [e.value for e in self.estimates[earlier.number]])
        else:
            self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)

    def _launch(self, batch: list[tuple[Any, int, dict]]) -> None:
        from hydra.core.utils import JobStatus

        jobs = [self._overrides(params) for _, _, params in batch]
        try:
            returns = self._launch_jobs(jobs, [j for _, j, _ in batch])
        except Exception as exc:  # e.g. submitit's UncompletedJobError: a SLURM job that died on its node
            why = f"the launcher failed: {type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0][:160]}"
            for trial, job, params in batch:
                self._tell(trial, job, params, Outcome(reason=why))
            return
        for (trial, job, params), ret in zip(batch, returns):
            if ret.status == JobStatus.COMPLETED and isinstance(ret._return_value, TrialReturn):
                back: TrialReturn = ret._return_value
                outcome = back.outcome
                trial.set_user_attr("examples", back.examples)
                self.examples[trial.number] = back.examples
            elif ret.status == JobStatus.COMPLETED:
                outcome = Outcome(reason="the job returned no outcome")
            else:
                error = getattr(ret, "_return_value", None)
                outcome = Outcome(
                    reason=f"the job raised {type(error).__name__}: {str(error).splitlines()[0][:160] if str(error) else ''}"
                )
            self._tell(trial, job, params, outcome)

    def _launch_jobs(self, jobs: list[list[str]], nums: list[int]) -> list[Any]:
        """Each job through Hydra's launcher, in its own folder (hydra.job.num: its number)."""
        if nums == list(range(nums[0], nums[0] + len(nums))):  # a batch numbered from its first (side by side)
            return list(self.launcher.launch(jobs, initial_job_idx=nums[0]))
        out = []
        for overrides, num in zip(jobs, nums):
            out.extend(self.launcher.launch([overrides], initial_job_idx=num))
        return out

    def _tell(self, trial: Any, job: int, params: dict, outcome: Outcome) -> None:
        records = [r for r in self.records if r.number != trial.number]
        if outcome.ok:
            for i, e in enumerate(outcome.estimates):
                trial.set_user_attr(f"objective_{i}", [e.value, e.low, e.high])
            self.study.tell(trial, [e.value for e in outcome.estimates])
            self.estimates[trial.number] = outcome.estimates
            state = COMPLETE
        else:
            trial.set_user_attr("reason", outcome.reason)
            self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
            self.reasons[trial.number] = outcome.reason
            state = FAILED
        self.records = [*records, TrialRecord(trial.number, params, state, job)]
        self.records.sort(key=lambda r: r.number)
        best = self.best()
        shown = None if best is None else (best.job or 0, best.params, self.estimates[best.number][0])
        print(
            trial_line(job, self.trials, params, self.objectives[0], outcome, shown, self._per_example()),
            flush=True,
        )
        self.write_trials()

    def _decoded(self, params: dict) -> dict:
        """A trial's params as the searched values (Optuna holds a list's text)."""
        return {d.key: d.decode(params[d.key]) for d in self.space.dimensions if d.key in params}

    def _per_example(self) -> bool:
        return any(v for v in self.examples.values())

    def _overrides(self, params: dict) -> list[str]:
        return [*self.space.fixed, *(override(d, params[d.key]) for d in self.space.dimensions)]

    # ---- the answer ----

    def measured_records(self) -> list[TrialRecord]:
        return [r for r in self.records if r.state in (COMPLETE, FAILED)]

    def best(self, objective: int = 0) -> TrialRecord | None:
        """The best trial: the runoff's winner once it ran (objective 0), else the lowest value of the search."""
        if objective == 0 and self.runoff is not None:
            return next(r for r in self.records if r.number == self.runoff.best)
        records = self.measured_records()
        index = best_index(self._estimates_of(records, objective))
        return None if index is None else records[index]

    def _estimates_of(self, records: Sequence[TrialRecord], objective: int = 0) -> list[Estimate | None]:
        """Each trial's estimate of one objective (None for a trial that failed)."""
        return [self.estimates[r.number][objective] if r.number in self.estimates else None for r in records]

    def _final(self) -> None:
        records = self.measured_records()
        if not records:
            return
        if self.best() is None:
            print("tune: every trial failed; no best (trials.csv says why each did)", flush=True)
            return
        self.run_runoff(records)
        best = self.best()
        assert best is not None
        self._print_best(records, best)
        if len(self.objectives) == 2:
            self._print_front(records)
        if int(self.config.tune.confirm_processes) == 0:
            print("tune: tune.confirm_processes=0: the best is not confirmed against the baseline", flush=True)
            return
        result = self.confirm(best)
        print(result.line, flush=True)
        write_verdict(self.root, result)

    def tied_numbers(self, records: Sequence[TrialRecord]) -> set[int]:
        """The trials tied with the best: the runoff's ties once it ran, else the search's intervals'."""
        if self.runoff is not None:
            return set(self.runoff.tied)
        return {r.number for r, t in zip(records, tied(self._estimates_of(records))) if t}

    def _print_best(self, records: Sequence[TrialRecord], best: TrialRecord) -> None:
        first, per = self.objectives[0], self._per_example()
        ties = self.tied_numbers(records)
        others = [
            f"trial {(r.job or 0) + 1} ({params_label(r.params)})"
            for r in records
            if r.number in ties and r is not best
        ]
        where = " in the runoff" if self.runoff is not None else ""
        shown = self.runoff.estimates[best.number] if self.runoff is not None else self.estimates[best.number][0]
        print(
            f"tune: best of {len(records)} trials on {first.label}: trial {(best.job or 0) + 1}, "
            f"{params_label(best.params)}: {value_text(first, shown, per)}{where}"
            + (
                f"; tied with it (intervals overlap{where}): {', '.join(others)}"
                if others
                else "; no other trial ties with it"
            ),
            flush=True,
        )

    def _print_front(self, records: Sequence[TrialRecord]) -> None:
        per = self._per_example()
        ok = [r for r in records if r.number in self.estimates]
        front = pareto_front([[e.value for e in self.estimates[r.number]] for r in ok])
        shown = "; ".join(
            f"trial {(ok[i].job or 0) + 1} {params_label(ok[i].params)}: "
            + ", ".join(value_text(o, e, per) for o, e in zip(self.objectives, self.estimates[ok[i].number]))
            for i in front
        )
        print(f"tune: Pareto front ({', '.join(o.label for o in self.objectives)}): {shown}", flush=True)

    # ---- the runoff: the best few measured again side by side ----

    def run_runoff(self, records: Sequence[TrialRecord]) -> None:
        """The leader, its ties, its runners-up and the unsettled trials (at most tune.runoff) as variants of one job
        in RUNOFF_PROCESSES fresh processes; the runoff's fastest is then the best (analysis.tune.runoff_pick)."""
        if not self.objectives[0].is_time:  # a memory figure is exact: nothing to measure again
            return
        picks = runoff_contenders(self._estimates_of(records), int(self.config.tune.get("runoff") or 0))
        contenders = [records[i] for i in picks]
        if not contenders:
            return
        names = {f"t{(r.job or 0) + 1}": dict(r.params) for r in contenders}
        print(
            f"tune: runoff: trials {', '.join(n[1:] for n in names)} measured again side by side, in "
            f"{RUNOFF_PROCESSES} fresh processes, before the best is named",
            flush=True,
        )
        job = [override(d, contenders[0].params[d.key]) for d in self.space.dimensions]
        back, why = self._launch_variants(names, job, RUNOFF_PROCESSES, RUNOFF_DIR, RUNOFF_JOB)
        if back is None:
            print(f"tune: the runoff job failed ({why}): the search's values name the best", flush=True)
            return
        rows = variant_rows(back.rows)
        found = [self._remeasured(rows.get(n), r) for n, r in zip(names, contenders)]
        result = runoff_pick([r.number for r in contenders], found)
        if result is None:
            print("tune: no trial measured in the runoff: the search's values name the best", flush=True)
            return
        self.runoff = result
        for r, e in zip(contenders, found):
            shown = value_text(self.objectives[0], e, self._per_example()) if e is not None else "failed there"
            print(f"tune: runoff: trial {(r.job or 0) + 1}, {params_label(r.params)}: {shown}", flush=True)

    def _remeasured(self, row: dict | None, record: TrialRecord) -> Estimate | None:
        """A contender's estimate from its runoff row (per example as in its trial); None when it failed there."""
        if row is None or row.get("status") != "ok":
            return None
        return estimate(row, self.objectives[0], self.examples.get(record.number))

    # ---- a job of variants: the runoff's and the confirmation's ----

    def _variants_overrides(self, names: dict[str, dict], job: list[str], processes: int, subdir: str) -> list[str]:
        """One job that measures `names` ({variant: params}) side by side in `processes` fresh processes."""
        fixed = [
            o
            for o in self.space.fixed
            if not o.lstrip("+~").startswith(("variants=", "timing.processes=", "timing.max_processes="))
        ]
        return [
            *fixed,
            *job,
            f"variants={variants_text(names)}",
            f"timing.processes={processes}",
            f"timing.max_processes={processes}",
            f"hydra.sweep.subdir={subdir}",
        ]

    def _launch_variants(
        self, names: dict[str, dict], job: list[str], processes: int, subdir: str, num: int
    ) -> tuple[TrialReturn | None, str]:
        """The variants' job through the launcher: what it returned, or None and why it failed."""
        from hydra.core.utils import JobStatus

        try:
            [ret] = self.launcher.launch([self._variants_overrides(names, job, processes, subdir)], initial_job_idx=num)
        except Exception as exc:  # e.g. submitit's UncompletedJobError
            return None, f"{type(exc).__name__}: {first_line(exc)[:200]}"
        if ret.status != JobStatus.COMPLETED or not isinstance(ret._return_value, TrialReturn):
            error = ret._return_value
            return None, f"{type(error).__name__}: {first_line(error)[:200]}" if error else "it returned nothing"
        return ret._return_value, ""

    # ---- the confirmation: the best against the baseline ----

    def baseline_params(self) -> dict[str, Any]:
        """The searched keys' values in the baseline: the config as given, with tune.baseline's keys over it."""
        given = baseline_overrides(_plain(self.config.tune.get("baseline")))
        out = {}
        for d in self.space.dimensions:
            if d.key in given:
                out[d.key] = given[d.key]
            else:
                value = OmegaConf.select(self.config, d.key, default=None)
                if d.key in _groups(self.config):
                    value = _groups(self.config)[d.key]
                out[d.key] = _plain(value)
        return out

    def confirm(self, best: TrialRecord) -> Verdict:
        """The best against the baseline in paired fresh processes: one job with variants {baseline, best}."""
        base, label = self.baseline_params(), params_label(best.params)
        if all(_same(base.get(k), v) for k, v in best.params.items()):
            return verdict(label, None, None, None, same=True)
        # an added entry (an XLA option) the baseline lacks is unset there: the compiler's default, as the user runs it
        unset = {d.key for d in self.space.dimensions if d.add and base.get(d.key) is None}
        n = int(self.config.tune.confirm_processes)
        print(
            f"tune: confirming trial {(best.job or 0) + 1} ({label}) against the baseline in {n} paired fresh processes",
            flush=True,
        )
        names = {"baseline": {k: base[k] for k in best.params if k not in unset}, "best": dict(best.params)}
        back, why = self._launch_variants(names, self._baseline_job(base, best), n, CONFIRM_DIR, CONFIRM_JOB)
        if back is None:
            return verdict(f"{label}; the confirmation job failed: {why}", None, None, None)
        return self._confirmed(label, best, back)

    def _baseline_job(self, base: dict[str, Any], best: TrialRecord) -> list[str]:
        """The confirmation job's own config: the baseline's (tune.examples resolves to its examples)."""
        given = baseline_overrides(_plain(self.config.tune.get("baseline")))
        extra = [f"{k}={override_text(v)}" for k, v in given.items() if k not in best.params]
        return extra + [override(d, base[d.key]) for d in self.space.dimensions if base.get(d.key) is not None]

    def _confirmed(self, label: str, best: TrialRecord, back: TrialReturn) -> Verdict:
        """The verdict from the confirmation job's two variant rows: the paired ratio, per example where it applies."""
        pick = variant_rows(back.rows)
        if "baseline" not in pick or "best" not in pick:
            return verdict(label, None, None, None)
        failed = [r for r in (pick["baseline"], pick["best"]) if r.get("status") != "ok"]
        if failed:
            message = str(failed[0].get("error_message") or "").splitlines()[:1]
            return verdict(
                f"{label}; the confirmation job failed: {message[0][:160] if message else ''}", None, None, None
            )
        examples = (back.examples, self.examples.get(best.number))
        if note := per_call_note(examples):
            print(note, flush=True)
        ratio, low, high = confirmed_ratio(pick["baseline"], pick["best"], self.objectives[0], examples)
        return verdict(label, ratio, low, high)

    def write_trials(self) -> None:
        write_trials(self.root, self.trial_rows())

    def trial_rows(self) -> list[dict]:
        """trials.csv: one row per trial, in order: its job, params, objective(s) with CI, its runoff estimate, best and
        tied (the runoff's once it ran), Pareto, failed why."""
        records = self.measured_records()
        ties, best = self.tied_numbers(records), self.best()
        ok = [r for r in records if r.number in self.estimates]
        front = set()
        if len(self.objectives) == 2:
            front = {ok[i].number for i in pareto_front([[e.value for e in self.estimates[r.number]] for r in ok])}
        rows = []
        for r in self.records:
            if r.state == REPEAT:
                continue
            row: dict[str, Any] = {"trial": (r.job or 0) + 1, "job_num": r.job, "state": r.state}
            row.update({f"param_{k}": encode(_plain(v)) for k, v in r.params.items()})
            for j, o in enumerate(self.objectives):
                e = self.estimates.get(r.number)
                row[f"objective_{j}"] = o.label
                row[f"value_{j}"], row[f"ci_low_{j}"], row[f"ci_high_{j}"] = (
                    (e[j].value, e[j].low, e[j].high) if e else (None, None, None)
                )
            again = self.runoff.estimates.get(r.number) if self.runoff is not None else None
            row["runoff_0"], row["runoff_ci_low_0"], row["runoff_ci_high_0"] = (
                (again.value, again.low, again.high) if again else (None, None, None)
            )
            row["best"] = best is not None and r.number == best.number
            row["tied"] = r.number in ties
            if len(self.objectives) == 2:
                row["pareto"] = r.number in front
            row["examples"] = self.examples.get(r.number)
            row["failed_why"] = self.reasons.get(
                r.number, "interrupted: resume=true runs it again" if r.state == RUNNING else ""
            )
            rows.append(row)
        return rows


_ABSENT = object()


def _groups(config: DictConfig) -> dict[str, Any]:
    """The config groups chosen (workload, mode, ...): a searched group is written key=option."""
    choices = OmegaConf.select(config, "hydra.runtime.choices", default=None)
    return {str(k): v for k, v in (choices or {}).items() if not str(k).startswith("hydra/")}


def _plain(value: Any) -> Any:
    return OmegaConf.to_container(value, resolve=True) if OmegaConf.is_config(value) else value


def _same(a: Any, b: Any) -> bool:
    """The same searched value, however written (`1` and "1", [0, 1] and "[0,1]")."""
    return a == b or str(encode(a)) == str(encode(b))


def _key(params: Any) -> str:
    return repr(sorted(dict(params).items()))


def _grid(dimensions: Sequence[Dimension]) -> int | None:
    from jitexp.analysis.tune import grid_size

    return grid_size(d.size for d in dimensions)


def _estimates(attrs: dict, n: int) -> tuple[Estimate, ...]:
    return tuple(Estimate(*attrs[f"objective_{i}"]) for i in range(n))


def variant_rows(rows: Sequence[dict]) -> dict[str, dict]:
    """A variants job's rows by variant, in the mode a trial is judged by (its first compiled mode)."""
    from jitexp.analysis.tune import TUNED_MODES

    modes = {r.get("mode") for r in rows}
    mode = next((m for m in TUNED_MODES if m in modes), None)
    return {str(r.get("variant")): r for r in rows if r.get("mode") == mode}


def _distribution(optuna: Any, d: Dimension) -> Any:
    dist = optuna.distributions
    if d.choices is not None:
        return dist.CategoricalDistribution([encode(v) for v in d.choices])
    if d.step is not None:
        return dist.IntDistribution(int(d.low), int(d.high), log=d.log, step=1 if d.log else d.step)  # type: ignore[arg-type]
    return dist.FloatDistribution(float(d.low), float(d.high), log=d.log)  # type: ignore[arg-type]


def write_trials(root: Path, rows: list[dict]) -> None:
    import pandas as pd

    from jitexp.store.csvio import csv_bytes, write_atomic

    if rows:
        write_atomic(root / TRIALS_CSV, csv_bytes(pd.DataFrame(rows)))


def write_verdict(root: Path, result: Verdict) -> None:
    from jitexp.store.csvio import write_atomic

    write_atomic(root / VERDICT_TXT, (result.line + "\n").encode())
