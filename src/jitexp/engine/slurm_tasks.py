"""distributed.processes=N: each measuring process as one `srun` step of N tasks running jitexp.worker.distributed.

The driver writes the task into a folder in the working directory (a cluster shares it between nodes), runs
`srun --ntasks=N --kill-on-bad-exit=1` with each task's stderr in its own file and JAX_COORDINATOR_PORT set, waits
up to timing.timeout_s, and reads rank 0's result. A rank that dies ends the step (srun ends the others): the
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

from jitexp.engine.processes import Target, crash_hint, last_meaningful_line
from jitexp.errors import ConfigError, Failure
from jitexp.records import STEP_PHASE as PHASE
from jitexp.records import STEP_RESULT as RESULT
from jitexp.records import STEP_TASK as TASK
from jitexp.records import ProcessResult, Task

SRUN = "srun"
MODULE = "jitexp.worker.distributed"
_TASK_LINE = re.compile(r"task (\d+): (.+)$")  # srun's "srun: error: node: task 1: Exited with exit code 3"
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
        env = {**os.environ, "JAX_COORDINATOR_PORT": str(_free_port())}
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
        if not timed_out and srun.returncode == 0 and (work / RESULT).exists():
            result: ProcessResult = pickle.loads((work / RESULT).read_bytes())
            stderr = _read(work / "rank-0.err")
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
    """The rank that died first (srun's "task N: ..." lines; ranks srun killed after it come later), its last line."""
    reports = [m.groups() for m in map(_TASK_LINE.search, said.splitlines()) if m]
    first = next((r for r in reports if r[1] != "Killed"), reports[0] if reports else None)
    if first is None:  # srun itself failed: no allocation, a bad option
        line = last_meaningful_line(said) or f"srun exited with code {code}"
        return Failure(phase if phase != "start" else "crash", f"exit {code}", line, "check `sinfo` and the allocation")
    rank, how = int(first[0]), first[1]
    exited = re.search(r"exit code (\d+)", how)
    name = f"exit {exited.group(1)}" if exited else _SIGNALS.get(how.split(" (")[0], how)
    line = last_meaningful_line(_read(work / f"rank-{rank}.err")) or how
    return Failure(phase if phase != "start" else "crash", name, f"rank {rank} of {n}: {line}", _hint(name, line))


def _hint(name: str, line: str) -> str:
    if name.startswith("exit"):
        return "that rank's workload ended its process (sys.exit/os._exit, or an error outside the measurement); srun ended the others"
    return crash_hint(name, line)


def _end(srun: subprocess.Popen) -> None:
    """srun cancels its step on SIGTERM (its tasks get it too); SIGKILL to its session if it does not go."""
    try:
        srun.send_signal(signal.SIGTERM)
        srun.wait(15)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(srun.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("", 0))
        return int(s.getsockname()[1])


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
