"""One measuring process as N SLURM tasks: `python -m jitexp.worker.rank FOLDER`, started by `srun`
(jitexp.engine.slurm_tasks).

Each task calls `jax.distributed.initialize()`, which reads SLURM's environment (its rank, the task count, rank 0's
node; inside an allocation the driver also sets the port, JAX_COORDINATOR_PORT), then runs the plain worker's
measurement over one global mesh. Every rank must run the same calls, since each call of the sharded step holds a
cross-process collective: rank 0's calibration, untimed-call counts and stop decisions are broadcast
(worker.distributed's `agree`), and a failure on any rank ends it (`_stop`) so that srun ends the others. Rank 0
writes the result.

The top of the worker: it imports worker.entry, and no module of worker/ imports it (no import circle).
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import signal
import sys
import traceback
from pathlib import Path
from typing import Any, NoReturn

import jax

from jitexp.errors import ConfigError, PhaseError, failure_of
from jitexp.records import STEP_PHASE as PHASE
from jitexp.records import STEP_RESULT as RESULT
from jitexp.records import STEP_STOPPED
from jitexp.records import STEP_TASK as TASK
from jitexp.worker import channel, entry, sharding

# a rank that outlives the driver's limit by this much ends itself (faulthandler prints where it hung)
GRACE_S = 30.0


class PhaseFile:
    """Rank 0's channel.conn: the phase it enters, in a file the driver reads after a crash or a timeout."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def send(self, message: tuple[str, Any]) -> None:
        kind, value = message
        if kind == "phase":
            self.path.write_text(value)


def _stopped(result: Any) -> str:
    """Why a rank's measurement ended before the others' could (a setup error, a config problem), or ""."""
    if result.config_error is not None:
        problem = result.config_error
        return str(ConfigError(problem.key, problem.value, problem.expected))
    return result.error.line() if result.error is not None else ""


def _stop(why: str) -> NoReturn:
    """End this rank with jitexp's own exit code and why as its last line; srun then ends the other ranks."""
    print(why, file=sys.stderr, flush=True)
    os._exit(STEP_STOPPED)


def main(folder: str) -> None:
    """Join the job's processes, measure as a plain worker does, and (rank 0) write the result."""
    work = Path(folder)
    task = pickle.loads((work / TASK).read_bytes())
    sys.path[:] = task.sys_path
    os.chdir(task.cwd)
    faulthandler.enable()  # a rank that crashes leaves "Fatal Python error: ..." in its own stderr file
    faulthandler.dump_traceback_later(task.cfg.timing.timeout_s + GRACE_S, exit=True)
    if task.cfg.device.platform in ("cpu", "auto"):  # auto: the CPU where the node has no GPU; unused on a GPU
        jax.config.update("jax_cpu_collectives_implementation", "gloo")  # CPU collectives across processes
    sharding.request_devices(task.cfg.device)  # before the backend starts: device.count per process
    jax.distributed.initialize()
    # initialize() takes SIGTERM for its preemption notice; srun ends a step's other tasks with it (a rank died, or
    # the driver's timeout), and a rank must then go at once, not after SLURM's KillWait
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    rank = jax.process_index()
    if rank == 0:
        channel.conn = PhaseFile(work / PHASE)
    try:
        result = entry.measure_process(task)
    except PhaseError as exc:  # a mode failed on this rank: with every call a collective, the step ends
        _stop(failure_of(exc.phase, exc.cause).line())
    except Exception as exc:  # raised while sampling (measure_rounds with agree), or jitexp's own bug
        traceback.print_exc()
        _stop(failure_of("execute", exc).line())
    if rank == 0:
        (work / (RESULT + ".part")).write_bytes(pickle.dumps(result))
        (work / (RESULT + ".part")).rename(work / RESULT)
    stopped = _stopped(result)
    if stopped:  # this rank left the measurement early: the others may wait in a collective it never enters
        _stop(stopped)  # the driver reads rank 0's result when it wrote one
    jax.distributed.shutdown()  # every rank leaves together: none sees its peers vanish mid-call
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # skip interpreter teardown: XLA's threads and the distributed client are already done


if __name__ == "__main__":
    main(sys.argv[1])
