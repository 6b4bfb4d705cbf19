"""distributed.processes=N: each measuring process as one `srun` step of N tasks running jitexp.worker.rank.

The driver writes the task into a folder in the working directory (a cluster shares it between nodes), runs
`srun --ntasks=N --kill-on-bad-exit=1` with each task's stderr in its own file (inside an allocation with
JAX_COORDINATOR_PORT set), waits up to timing.timeout_s, and reads rank 0's result. A rank that dies ends the step (srun ends the others): the
process's error names the rank and the last line it wrote. Inside an allocation (sbatch, salloc, Hydra's submitit
launcher) srun takes its tasks from it; elsewhere srun asks SLURM for them.
"""

from __future__ import annotations

import os
import pickle
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from jitexp.engine.processes import Target, crash_hint, last_meaningful_line, read_and_remove
from jitexp.errors import ConfigError, Failure, line_parts
from jitexp.records import STEP_PHASE as PHASE
from jitexp.records import STEP_RESULT as RESULT
from jitexp.records import STEP_STOPPED, ProcessResult, Task
from jitexp.records import STEP_TASK as TASK

SRUN = "srun"
MODULE = "jitexp.worker.rank"
# srun's "srun: error: node: task 1: Exited with exit code 3", or "tasks 0-1: ..." for ranks that ended alike
_TASK_LINE = re.compile(r"tasks? (\d+)[\d,\-]*: (.+)$")
_SIGNALS = {"Killed": "SIGKILL", "Aborted": "SIGABRT", "Segmentation fault": "SIGSEGV", "Terminated": "SIGTERM"}


def check_srun(processes: int) -> None:
    """One line when a job asks for SLURM tasks on a machine without srun."""
    if processes > 1 and shutil.which(SRUN) is None:
        raise ConfigError(
            "distributed.processes",
            processes,
            "runs each measuring process as SLURM tasks with srun, which is not on PATH: run on a SLURM cluster "
            "(a login node, or inside sbatch/salloc), or set distributed.processes=1",
        )


class SlurmTasks:
    """A Launcher (engine.processes) for distributed.processes > 1: one srun step of `processes` tasks per task."""

    def __init__(self, processes: int) -> None:
        self.processes = processes

    def launch(self, target: Target, task: Task, timeout_s: float) -> ProcessResult:
        task.sys_path, task.cwd = list(sys.path), os.getcwd()
        work = Path(tempfile.mkdtemp(prefix=".jitexp-ranks-", dir=task.cwd))
        try:
            (work / TASK).write_bytes(pickle.dumps(task))
            return self._run(work, task, timeout_s)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _run(self, work: Path, task: Task, timeout_s: float) -> ProcessResult:
        n = self.processes
        command = [
            SRUN,
            f"--ntasks={n}",
            "--kill-on-bad-exit=1",
            "--overlap",  # inside an allocation (sbatch, submitit), beside the step that runs the driver
            "--job-name=jitexp",
            f"--output={work}/rank-%t.out",
            f"--error={work}/rank-%t.err",
            sys.executable,
            "-m",
            MODULE,
            str(work),
        ]
        env = dict(os.environ)
        if "SLURM_JOB_ID" in env:  # inside an allocation every step has its job id, from which JAX derives the port
            env["JAX_COORDINATOR_PORT"] = str(_free_port())  # a free one here, on the allocation's first node
        # outside one, srun makes a new job for each step: JAX's port from its id never meets the last step's
        srun = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
        )
        try:
            _, said = srun.communicate(timeout=timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            _end(srun)
            _, said = srun.communicate()
            timed_out = True
        except BaseException:  # Ctrl-C: the step goes with the driver
            _end(srun)
            raise
        phase = (work / PHASE).read_text() if (work / PHASE).exists() else "start"
        if not timed_out and (work / RESULT).exists():  # rank 0's, also when it or another rank then stopped the step
            result: ProcessResult = pickle.loads((work / RESULT).read_bytes())
            stderr = read_and_remove(work / "rank-0.err")
            if stderr.strip() and task.process == 0 and result.clean:
                sys.stderr.write(stderr)  # warnings stay visible, once per job
            return result
        if timed_out:
            error = Failure(
                "timeout" if phase == "start" else phase,
                "Timeout",
                f"no result from the {n} SLURM tasks after timing.timeout_s={timeout_s:g} s",
                "raise timing.timeout_s, or use a smaller size; `squeue` shows whether the tasks were waiting to start",
            )
        else:
            error = _failure(work, said or "", srun.returncode, phase, n)
        return ProcessResult(task.process, error=error)


def _failure(work: Path, said: str, code: int, phase: str, n: int) -> Failure:
    """The rank whose end ended the step (from srun's "task N: ..." lines) and the last line it wrote."""
    reports = [m.groups() for m in map(_TASK_LINE.search, said.splitlines()) if m]
    # the cause first: a rank that died on its own, then one that stopped (its peers' collectives then fail and
    # they stop too), then one srun killed
    stopped = f"exit code {STEP_STOPPED}"
    order = sorted(reports, key=lambda r: (r[1] == "Killed", r[1].endswith(stopped)))
    first = order[0] if order else None
    if first is None:  # srun itself failed: no allocation, a bad option
        line = last_meaningful_line(said) or f"srun exited with code {code}"
        return Failure(phase if phase != "start" else "crash", f"exit {code}", line, "check `sinfo` and the allocation")
    rank, how = int(first[0]), first[1]
    exited = re.search(r"exit code (\d+)", how)
    line = last_meaningful_line(read_and_remove(work / f"rank-{rank}.err")) or how
    if exited and int(exited.group(1)) == STEP_STOPPED:  # jitexp's own: the rank's "phase: Type: message"
        stage, kind, message = line_parts(line) or (phase, "RankFailed", line)
        return Failure(
            stage,
            kind,
            f"rank {rank} of {n}: {message}",
            "every call of the step is a collective, so one rank's failure ends them all; this is that rank's",
        )
    name = f"exit {exited.group(1)}" if exited else _SIGNALS.get(how.split(" (")[0], how)
    return Failure(phase if phase != "start" else "crash", name, f"rank {rank} of {n}: {line}", _hint(name, line))


def _hint(name: str, line: str) -> str:
    if name.startswith("exit"):
        return "that rank's workload ended its process (sys.exit/os._exit, or an error outside the measurement); srun ended the others"
    return crash_hint(name, line)


def _end(srun: subprocess.Popen) -> None:
    """srun cancels its step on SIGTERM (its tasks get it too); SIGKILL to its session if it has not gone."""
    srun.send_signal(signal.SIGTERM)  # nothing when srun has exited already
    try:
        srun.wait(15)
    except subprocess.TimeoutExpired:
        _kill_session(srun)
    except BaseException:  # a second Ctrl-C while waiting
        _kill_session(srun)
        raise


def _kill_session(srun: subprocess.Popen) -> None:
    try:
        os.killpg(srun.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return int(s.getsockname()[1])
