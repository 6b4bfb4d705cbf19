"""Fresh worker processes from a forkserver: `launch(target, task)` runs target in one, collects its result.

One forkserver per jitexp process, reused by every job of a sweep. It preloads the target's
module (the worker, and so JAX) but never creates a backend: forking a process whose XLA client
threads exist is unsafe. A worker costs ~0.2 s instead of ~2 s for a cold `import jax`.
This module never imports the worker: the runner names it (like optimum-benchmark's
`launch(worker, worker_args)`).
Environment variables (JAX_*, XLA_FLAGS) are read when the server starts.

A worker runs in its own process group (Ctrl-C reaches the driver, which kills the group), dies
with the forkserver (so a killed driver leaves no orphan), writes its stderr to a file the
driver reads, and reports each phase it enters, so a timeout or a crash names the phase.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import re
import signal
import sys
import tempfile
import time
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from jitexp.errors import Failure
from jitexp.records import GO_FIELDS, ProcessResult, Task

_context: Any = None


@dataclass(frozen=True)
class Target:
    """A function by module and name, imported only where it is called (in the worker process)."""

    module: str
    name: str

    def __call__(self, task: Task, conn: Any) -> None:
        getattr(importlib.import_module(self.module), self.name)(task, conn)


class Launcher(Protocol):
    """Where a task runs: `launch(target, task, timeout_s)` gives its ProcessResult, a failure included
    (optimum-benchmark's launch(worker, args)). FreshProcess (isolate=process), InProcess (isolate=none) and an
    env's server (envserver.Server, `envs`) are the three."""

    def launch(self, target: Target, task: Task, timeout_s: float) -> ProcessResult: ...


class FreshProcess:
    """isolate=process: each task in a fresh worker from the forkserver (`launch`)."""

    def launch(self, target: Target, task: Task, timeout_s: float) -> ProcessResult:
        return launch(target, task, timeout_s)


class InProcess:
    """isolate=none: the target module's in-process entry (`measure_process(task)`) called in this process,
    loaded by name: JAX enters the driver's process by the user's choice, not by an import of the driver's."""

    def launch(self, target: Target, task: Task, timeout_s: float) -> ProcessResult:
        return importlib.import_module(target.module).measure_process(task)


WORKER = Target("jitexp.worker.entry", "entry")  # what a fresh process runs (imported there, never here)
FROZEN = "jitexp.worker.frozen"  # preloaded last: gc.freeze() over the server's imports


def context(preload: list[str]) -> Any:
    """The forkserver context, configured once (the first caller's preload list wins). JITEXP_WORKER_OFF=preload
    (issue 61's elimination arms, worker.factors) preloads nothing: each worker imports JAX itself after the fork."""
    global _context
    if _context is None:
        _context = multiprocessing.get_context("forkserver")
        bare = "preload" in os.environ.get("JITEXP_WORKER_OFF", "").replace(" ", "").split(",")
        _context.set_forkserver_preload([FROZEN] if bare else [*preload, FROZEN])
    return _context


def start_server(module: str) -> Any:
    """Start the forkserver now, preloading `module` (its `import jax`, ~0.5 s, begins at once): for the preflight's
    Child, and before the first `launch`. Idempotent; returns the context (see `context`)."""
    from multiprocessing import forkserver, resource_tracker

    ctx = context([module])
    resource_tracker.ensure_running()  # first: its spawn unblocks SIGINT, which would open _ctrl_c_ignored's window
    with _main_left_alone(), _ctrl_c_ignored():
        forkserver.ensure_running()
    return ctx


@contextmanager
def _ctrl_c_ignored() -> Iterator[None]:
    """SIGINT ignored while the forkserver is spawned, so that it starts with it ignored: a terminal's Ctrl-C
    reaches every process of its group, and the server ignores it only once its preload (`import jax`, ~0.5 s) is
    done; before, it printed a KeyboardInterrupt traceback of its own beside the driver's one line. Its workers keep
    it ignored (each in a process group of its own, killed by the driver). Blocked too meanwhile, so that a Ctrl-C in
    this window stays pending for the driver (Linux never discards a blocked signal) and reaches it as soon as the
    server is spawned. Only the main thread may set it."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a Ctrl-C meanwhile is a KeyboardInterrupt now


def stop_server() -> None:
    """Stop the forkserver if one runs (killed: it may still be importing its preload), so that the next start
    begins a fresh one with the environment of that moment. For a server started before the job was known."""
    from multiprocessing import forkserver

    server: Any = forkserver._forkserver  # private: multiprocessing offers no public stop
    with server._lock:
        if server._forkserver_pid is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(server._forkserver_pid, signal.SIGKILL)
        server._stop_unlocked()


def launch(target: Target, task: Task, timeout_s: float) -> ProcessResult:
    """Run `target(task, conn)` in a fresh process; a crash or a timeout comes back as a failed result.

    Ctrl-C (KeyboardInterrupt here) kills the worker's process group and is re-raised.
    """
    return start(target, task).wait(timeout_s)


def start(target: Target, task: Task) -> Running:
    """Fork `target(task, conn)` in a fresh process now; `Running.wait` collects its result. A `task.gated` worker
    does its imports, then waits for `Running.go` before it opens the device (engine.handover)."""
    # the server spawned with Ctrl-C ignored here too (jitexp.measure, a job without the preflight's early start):
    # spawned by ctx.Process's start instead, it printed a KeyboardInterrupt traceback of its own from its preload
    ctx = start_server(target.module)
    task.sys_path = list(sys.path)
    task.cwd = os.getcwd()
    fd, task.stderr_path = tempfile.mkstemp(prefix="jitexp-worker-", suffix=".stderr")
    os.close(fd)
    receive, send = ctx.Pipe(duplex=task.gated)  # a gated worker also reads its go from the driver
    proc = ctx.Process(target=_entry, args=(target, task, send), daemon=True)
    try:
        with _main_left_alone():
            proc.start()
    except BaseException:
        _kill(proc)
        receive.close()
        read_and_remove(task.stderr_path)
        raise
    finally:
        send.close()
    return Running(task, proc, receive)


class Running:
    """A started worker: `go` releases a gated one (with the task it is to run), `wait` collects its result and
    waits for it to exit (a device it held is free then), `kill` ends it unused."""

    def __init__(self, task: Task, proc: Any, conn: Any) -> None:
        self.task, self.proc, self.conn = task, proc, conn
        self.done = False
        self.launched = time.monotonic()  # forked; a gated worker's launch is its go

    def go(self, task: Task) -> None:
        """Let a gated worker open the device and run `task` (its process, modes, calls and extras replace the ones
        it was started with); nothing for a worker that was not gated."""
        if not self.task.gated:
            return
        for name in GO_FIELDS:
            setattr(self.task, name, getattr(task, name))
        self.launched = time.monotonic()
        try:
            self.conn.send(("go", {name: getattr(task, name) for name in GO_FIELDS}))
        except OSError:  # it died while it waited: wait() reports how
            pass

    def kill(self) -> None:
        """End the worker unused (a prepared one the job did not need)."""
        if self.done:
            return
        self.done = True
        _kill(self.proc)
        self.proc.join()
        self.conn.close()
        read_and_remove(self.task.stderr_path)

    def wait(
        self,
        timeout_s: float,
        on_open: Callable[[str], None] | None = None,
        on_phase: Callable[[str], None] | None = None,
    ) -> ProcessResult:
        """The worker's result, or its crash or timeout as a failed result; returns once the process has exited.
        `on_open(platform)` is called when the worker says it has opened its device, `on_phase(name)` at each phase."""
        got = _Received()
        try:
            self._receive(got, timeout_s, on_open, on_phase)
        except BaseException:
            _kill(self.proc)
            raise
        finally:
            stderr = self._reap(got.outcome)
        if got.result is not None:
            driver_phases(got.result, self.launched, got.received, time.monotonic())
            if stderr.strip() and self.task.process == 0 and got.result.clean:
                sys.stderr.write(stderr)  # warnings stay visible, once per job; a failure's own log is its row
            return got.result
        return ProcessResult(self.task.process, error=self._failure(got, timeout_s, stderr))

    def _receive(
        self,
        got: _Received,
        timeout_s: float,
        on_open: Callable[[str], None] | None,
        on_phase: Callable[[str], None] | None,
    ) -> None:
        """The worker's messages into `got` until its result, its end (it died before sending one) or the timeout."""
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self.conn.poll(remaining):
                got.outcome = "timeout"
                return
            try:
                kind, value = self.conn.recv()
            except EOFError:  # the worker died before it sent its result
                return
            if kind == "interrupt":
                raise KeyboardInterrupt
            if kind not in ("phase", "step", "opened"):
                got.result, got.outcome, got.received = value, "ok", time.monotonic()
                return
            if kind == "phase":
                got.phase = value
            if on_phase is not None:  # a step is a phase of the worker's clock: for the status line only
                on_phase(f"opened {value}" if kind == "opened" else value)
            if kind == "opened" and on_open is not None:
                on_open(value)

    def _reap(self, outcome: str) -> str:
        """The worker's end: killed unless it sent its result, joined, its pipe closed; its stderr, read and removed."""
        self.done = True
        if outcome != "ok":
            _kill(self.proc)
        self.proc.join(10.0)  # a worker that hangs on its way out (client shutdown) is not waited for
        _kill(self.proc)
        self.proc.join()
        self.conn.close()
        return read_and_remove(self.task.stderr_path)

    def _failure(self, got: _Received, timeout_s: float, stderr: str) -> Failure:
        """A worker without a result: its timeout, or its crash named by its exit code and last line of stderr."""
        if got.outcome == "timeout":
            return Failure(
                "timeout" if got.phase == "start" else got.phase,
                "Timeout",
                f"no result after timing.timeout_s={timeout_s:g} s",
                "raise timing.timeout_s, or use a smaller size",
            )
        name = exit_name(self.proc.exitcode)
        line = last_meaningful_line(stderr) or f"the worker process exited with code {self.proc.exitcode}"
        return Failure(got.phase if got.phase != "start" else "crash", name, line, crash_hint(name, line))


@dataclass
class _Received:
    """What a worker has sent so far: its phase, its result and when it came, and how the wait ended."""

    phase: str = "start"
    result: ProcessResult | None = None
    outcome: str = "crash"  # "ok" once the result came, "timeout" when none came in time
    received: float | None = None


def driver_phases(result: ProcessResult, launched: float, received: float | None, exited: float) -> None:
    """Add what only the driver sees to a worker's phases (all CLOCK_MONOTONIC): `start` from its launch (a fork and
    imports, or a prepared worker's go) until it began, `transfer` of its result, and `exit` until the process was
    gone (a device it held is free then)."""
    if result.began is not None:
        result.phases["start"] = result.began - launched
    if received is not None:
        if result.ended is not None:
            result.phases["transfer"] = received - result.ended
        result.phases["exit"] = exited - received
    result.driver_wall_s = exited - launched


class Child:
    """A process from the forkserver (preloading `preload`) that runs the calls sent to it one after another, with
    this process's sys.path and working directory, its imports kept from one call to the next: for imports the
    driver should not pay for (preflight importing the user's functions, once for a whole sweep). `start` starts
    the server and the child (the first `call` does, if not yet); `close` ends the child."""

    def __init__(self, preload: str) -> None:
        self.preload = preload
        self._proc: Any = None
        self._conn: Any = None
        self.dead = False

    def start(self) -> None:
        if self._proc is not None or self.dead:
            return
        ctx = start_server(self.preload)
        mine, theirs = ctx.Pipe()
        proc = ctx.Process(target=_serve, args=(list(sys.path), os.getcwd(), theirs), daemon=True)
        try:
            with _main_left_alone():
                proc.start()  # waits for the server's preload (~0.5 s of `import jax` the first time)
        except BaseException as exc:  # the server died on its way up, or Ctrl-C while it loads
            mine.close()
            self.dead = True
            if not isinstance(exc, Exception):
                raise
            return
        finally:
            theirs.close()
        self._proc, self._conn = proc, mine

    def call(self, module: str, name: str, *args: Any) -> tuple[bool, Any]:
        """(True, `module.name(*args)`), or (False, None) when the child could not start, died or raised before it
        returned (it is not started again): the caller runs the call itself to see why."""
        self.start()
        if self.dead:
            return False, None
        try:
            self._conn.send((module, name, args))
            return True, self._conn.recv()
        except (EOFError, OSError):
            self.close()
            self.dead = True
            return False, None

    def close(self) -> None:
        """End the child: it returns when its end of the pipe closes (what the user's module printed is flushed
        then); killed if it has not after 5 s."""
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        self._conn.close()
        proc.join(5.0)
        _kill(proc)
        proc.join()


def _serve(path: list[str], cwd: str, conn: Any) -> None:
    _detach()
    sys.path[:] = path
    os.chdir(cwd)
    while True:
        try:
            module, name, args = conn.recv()
        except EOFError:  # the driver closed its end
            return
        conn.send(getattr(importlib.import_module(module), name)(*args))


@contextmanager
def _main_left_alone() -> Iterator[None]:
    """Start a worker without multiprocessing re-running the driver's __main__ in it.

    A worker needs only jitexp's modules (a jitexp.measure function arrives cloudpickled), but
    multiprocessing re-imports the caller's main script in every child: a script without a main
    guard ran again there, and a program read from stdin failed with FileNotFoundError '<stdin>'.
    """
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")  # no __file__, no __spec__: nothing to re-import
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def _entry(target: Target, task: Task, conn: Any) -> None:
    """Worker-process start: detached (`_detach`), stderr to the task's file."""
    _detach()
    try:
        fd = os.open(task.stderr_path, os.O_WRONLY | os.O_TRUNC)
    except FileNotFoundError:  # the driver stopped (Ctrl-C) as this worker forked, and removed the file: nothing to do
        os._exit(1)
    os.dup2(fd, 2)
    os.close(fd)
    import faulthandler

    faulthandler.enable()  # a segfault or abort leaves "Fatal Python error: ..." in the stderr file
    target(task, conn)  # its module was preloaded by the forkserver: no import cost here


def _detach() -> None:
    """A forkserver child's start: a process group of its own (Ctrl-C reaches the driver, which kills the group),
    the server no longer kept alive by it, and death with the server."""
    os.setpgid(0, 0)
    _release_forkserver()
    die_with_parent()


def _release_forkserver() -> None:
    # Every forkserver child inherits the "alive" pipe's write end, which keeps the server running
    # while the child lives; a hung worker would then outlive a killed driver. Closing it lets the
    # server exit with the driver, and die_with_parent takes the worker along (CPython internals).
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    fd = getattr(server, "_forkserver_alive_fd", None)
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass
        server._forkserver_alive_fd = None  # type: ignore[union-attr]


def die_with_parent() -> None:
    """SIGKILL this process when its parent exits (a worker's forkserver, an env server's driver); Linux only."""
    # PR_SET_PDEATHSIG: the forkserver exits when the driver dies; harmless where prctl is missing.
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _kill(proc: Any) -> None:
    if proc.pid is None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if proc.is_alive():
        proc.kill()


def read_and_remove(path: str | os.PathLike) -> str:
    """A worker's stderr file as text ("" when unreadable), the file removed."""
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""
    finally:
        Path(path).unlink(missing_ok=True)


def last_meaningful_line(text: str) -> str:
    """What a dying worker said last: a fatal error, else an exception line, else the last line."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    for line in lines:  # XLA's own fatal check (glog's `F1204 18:40:13.73 123 file.cc:161] why`) says why it aborted
        if _XLA_FATAL.match(line):
            return line.split("] ", 1)[-1]
    for line in reversed(lines):
        if line.startswith("Fatal Python error"):
            return line
    skip = ("Traceback", "Current thread", "Thread 0x", "Extension modules", "Stack (most recent", "  ", "\t")
    for line in reversed(lines):
        if not line.startswith(skip):
            return line
    return lines[-1].strip() if lines else ""


def exit_name(code: int | None) -> str:
    """A process exit code as text: the signal's name (SIGKILL) for a negative code, else `exit N`."""
    if code is not None and code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit {code}"


_XLA_FATAL = re.compile(r"F\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ \S+:\d+\] ")


def crash_hint(name: str, line: str = "") -> str:
    if "Termination timeout" in line and "rendezvous" in line:
        return (
            "a device's share of an XLA CPU collective never arrived: XLA's CPU client had fewer than 2 x "
            "device.count threads (the worker raises PJRT_NPROC to that before the client starts; a client started "
            "earlier in the same process keeps its threads, as with isolate=none after another job), or that share "
            "ran behind the others for longer than XLA's limit "
            "(XLA_FLAGS=--xla_cpu_collective_call_terminate_timeout_seconds=N, default 40)"
        )
    if name == "SIGKILL":
        return "killed from outside, often by the out-of-memory killer: use a smaller size"
    if name in ("SIGSEGV", "SIGBUS", "SIGABRT", "SIGILL", "SIGFPE"):
        return "the process crashed in native code; run with isolate=none under a debugger to see where"
    return "the workload ended the process (sys.exit/os._exit); run with isolate=none to see where"
