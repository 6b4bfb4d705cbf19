"""Env servers: one `PYTHON -m jitexp.engine.envserver` per other Python environment, starting that environment's workers.

multiprocessing keeps one forkserver per process (started with this interpreter), so a second
interpreter needs a process of its own. The driver starts `PYTHON -m jitexp.engine.envserver`; the
server says hello (jitexp version, protocol, a fingerprint of the records that cross the pipe),
then runs each `(target, task, timeout_s)` request with the same `processes.launch` in its own
interpreter (its own forkserver, fresh workers, phases, timeouts, crash results) and answers
with the pickled `ProcessResult`. Messages are length-prefixed pickles over the server's stdin
and its original stdout; fd 1 then points at stderr, so nothing else can write into the channel.

A server lives as long as the driver (one per environment, reused by every job of a sweep), in
a session of its own (Ctrl-C reaches the driver, which kills it), and dies with the driver. A
server that dies or stops answering makes that process an error row, not a hang.
"""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import json
import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import time
from typing import Any

from jitexp.engine.processes import Target, die_with_parent, exit_name, launch
from jitexp.errors import ConfigError, Failure, first_line, qualified_name
from jitexp.records import Cold, ConfigProblem, Extras, ModeResult, Noise, Payload, ProcessResult, Task

PROTOCOL = 1
PICKLE_PROTOCOL = 4  # readable by every Python jitexp supports, whichever side writes
START_TIMEOUT_S = 120.0  # the probe and the hello: importing jitexp (not JAX) in the other interpreter
ANSWER_GRACE_S = 120.0  # beyond timing.timeout_s: the env's forkserver start (imports JAX) and the worker's exit
_HEADER = struct.Struct(">Q")
_servers: dict[tuple[str, str], Server] = {}


def fingerprint() -> str:
    """A digest of the field names of every record that crosses the pipe: two jitexps must agree on it."""
    from jitexp import config

    classes = (
        config.ExperimentConfig,
        config.WorkloadConfig,
        config.ModeConfig,
        config.DeviceConfig,
        config.TimingConfig,
        Task,
        Payload,
        ProcessResult,
        ModeResult,
        Cold,
        Extras,
        Noise,
        ConfigProblem,
        Failure,
        Target,
    )
    text = ";".join(f"{c.__name__}:{','.join(f.name for f in dataclasses.fields(c))}" for c in classes)
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def hello() -> dict[str, Any]:
    """What a server says first (and the probe prints): enough for the driver to refuse a mismatch."""
    return {
        "protocol": PROTOCOL,
        "version": version(),
        "fingerprint": fingerprint(),
        "python": sys.version.split()[0],
    }


def version() -> str:
    """The installed jitexp's version ('unknown' when run from a source tree without metadata)."""
    from importlib import metadata

    try:
        return metadata.version("jitexp")
    except metadata.PackageNotFoundError:
        return "unknown"


def install_hint(python: str) -> str:
    """`PYTHON -m pip install SOURCE`: this driver's jitexp (its project folder when installed from one)."""
    from importlib import metadata

    source = f"jitexp=={version()}"
    try:
        direct = json.loads(metadata.distribution("jitexp").read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, ValueError):
        direct = {}
    url = str(direct.get("url", ""))
    if url.startswith("file://") and os.path.isdir(url[len("file://") :]):
        source = url[len("file://") :]
    return f"{python} -m pip install {source}"


_PROBE = """
import json, sys
print("jitexp-probe", sys.version.split()[0])
try:
    from jitexp.engine.envserver import hello
except Exception as exc:
    try:
        import jitexp
        print("jitexp-version", getattr(jitexp, "__version__", "?"))
    except Exception:
        pass
    print("jitexp-missing", type(exc).__name__ + ": " + (str(exc).splitlines() or [""])[0])
else:
    print("jitexp-hello", json.dumps(hello()))
"""


def check(key: str, path: str) -> None:
    """Refuse, in one ConfigError naming key and path, an interpreter that cannot serve: not there,
    not executable, not Python, without jitexp, or with a jitexp that differs from this one."""
    python = _absolute(path)
    if not os.path.exists(python):
        raise ConfigError(key, path, f"{python} does not exist; give the path of a Python interpreter")
    if os.path.isdir(python) or not os.access(python, os.X_OK):
        raise ConfigError(key, path, f"{python} is not an executable file; give the path of a Python interpreter")
    try:
        done = subprocess.run(
            [python, "-c", _PROBE],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT_S,
        )
    except OSError as exc:
        raise ConfigError(
            key, path, f"{python} cannot run: {exc.strerror or exc}; is it a Python interpreter?"
        ) from None
    except subprocess.TimeoutExpired:
        raise ConfigError(key, path, f"{python} did not answer within {START_TIMEOUT_S:g} s") from None
    said = dict(line.partition(" ")[::2] for line in done.stdout.splitlines() if line.startswith("jitexp-"))
    if "jitexp-probe" not in said:
        said_first = (done.stderr.strip().splitlines() or [""])[0][:80]
        if "import json" in said_first or "$'" in said_first or "jitexp-" in said_first:
            said_first = ""  # a program that echoes its arguments (ls: cannot access '...the probe...'): not helpful
        quoted = f": {said_first}" if said_first else ""
        raise ConfigError(
            key,
            path,
            f"{python} is not a Python interpreter (it did not run Python code given with -c; exit "
            f"{done.returncode}{quoted}); give the path of a python executable, e.g. a venv's bin/python",
        )
    if "jitexp-hello" not in said:
        found = f"has jitexp {said['jitexp-version']} without an env server" if "jitexp-version" in said else ""
        why = found or f"cannot import jitexp ({said.get('jitexp-missing', 'no answer')})"
        raise ConfigError(key, path, f"{python} {why}; install it there: {install_hint(python)}")
    incompatible(key, path, json.loads(said["jitexp-hello"]))


def incompatible(key: str, path: str, theirs: dict[str, Any]) -> None:
    """Raise when another interpreter's hello differs from this jitexp's (version, protocol or records)."""
    ours = hello()
    if all(theirs.get(k) == ours[k] for k in ("protocol", "version", "fingerprint")):
        return
    same = theirs.get("version") == ours["version"]
    detail = "the same version with other records" if same else f"jitexp {theirs.get('version')}"
    raise ConfigError(
        key,
        path,
        f"incompatible jitexp: {_absolute(path)} has {detail}, this one is jitexp {ours['version']}; "
        f"install this one there: {install_hint(_absolute(path))}",
    )


class Server:
    """The driver's handle on one environment's server: start (probe, hello), launch, close."""

    def __init__(self, key: str, path: str):
        self.key, self.path = key, path
        self.python = _absolute(path)
        self.proc: subprocess.Popen | None = None

    def start(self) -> Server:
        """Start the server and check its hello; a ConfigError (one line) when it cannot serve."""
        try:
            self.proc = subprocess.Popen(
                [self.python, "-m", "jitexp.engine.envserver"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
                start_new_session=True,  # Ctrl-C reaches the driver only; the driver kills the server
                env={**os.environ, "PYTHONPATH": os.pathsep.join(code_paths())},
            )
            kind, theirs = _receive(self._out(), time.monotonic() + START_TIMEOUT_S)
        except Exception:  # it did not start, or said something that is no hello
            self.kill()
            check(self.key, self.path)  # says precisely what is wrong with the interpreter
            raise ConfigError(self.key, self.path, f"{self.python} -m jitexp.engine.envserver did not start") from None
        if kind != "hello" or not isinstance(theirs, dict):
            self.kill()
            raise ConfigError(
                self.key, self.path, f"{self.python} -m jitexp.engine.envserver answered {kind!r}, not hello"
            )
        try:
            incompatible(self.key, self.path, theirs)
        except ConfigError:
            self.kill()
            raise
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def launch(self, target: Target, task: Task, timeout_s: float) -> ProcessResult:
        """`processes.launch(target, task, timeout_s)` in this environment; a dead or silent server is a failed result."""
        try:
            if not self.alive:
                raise EOFError
            _send(self._in(), (target, task, timeout_s))
            kind, value = _receive(self._out(), time.monotonic() + timeout_s + ANSWER_GRACE_S)
        except (EOFError, OSError, TimeoutError, pickle.UnpicklingError) as exc:
            self.kill()
            return ProcessResult(task.process, error=self._failure(isinstance(exc, TimeoutError), timeout_s))
        except BaseException:  # KeyboardInterrupt: the server and its worker go with it
            self.kill()
            raise
        if kind == "interrupt":
            raise KeyboardInterrupt
        if kind == "error":
            return ProcessResult(
                task.process,
                error=Failure("crash", "EnvServerError", str(value), "a bug in jitexp's env server: please report it"),
            )
        return value

    def _failure(self, timed_out: bool, timeout_s: float) -> Failure:
        where = f"the env server of {self.key} ({self.python})"
        if timed_out:
            return Failure(
                "timeout",
                "Timeout",
                f"{where} gave no answer within timing.timeout_s={timeout_s:g} s + {ANSWER_GRACE_S:g} s",
                "raise timing.timeout_s, or use a smaller size",
            )
        code = self.proc.returncode if self.proc is not None else None
        return Failure(
            "crash",
            exit_name(code),
            f"{where} exited with {exit_name(code)} before answering",
            "the environment's server process died (its stderr is above); the next job starts a new one",
        )

    def kill(self) -> None:
        """Kill the server's session (it, its forkserver) at once; its workers die with the forkserver."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()

    def close(self) -> None:
        """Ask the server to stop (end of its input), then kill what is left of it."""
        if self.proc is None:
            return
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        try:
            self.proc.wait(5.0)
        except subprocess.TimeoutExpired:
            pass
        self.kill()

    def _in(self) -> int:
        assert self.proc is not None and self.proc.stdin is not None
        return self.proc.stdin.fileno()

    def _out(self) -> int:
        assert self.proc is not None and self.proc.stdout is not None
        return self.proc.stdout.fileno()


def server(key: str, path: str) -> Server:
    """The running server of one environment (`key` is its config key, envs.NAME), started on first use."""
    found = _servers.get((key, _absolute(path)))
    if found is None or not found.alive:
        found = _servers[(key, _absolute(path))] = Server(key, path).start()
    return found


@atexit.register
def close_all() -> None:
    """Stop every server this process started."""
    while _servers:
        _servers.popitem()[1].close()


def code_paths() -> list[str]:
    """The driver's sys.path entries that hold the user's code, not an installation: the folders a
    workload may import from (the server's own interpreter supplies the standard library and packages)."""
    import site

    installs = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    sites = {os.path.realpath(p) for p in [*site.getsitepackages(), site.getusersitepackages()]}
    out = []
    for entry in sys.path:
        real = os.path.realpath(entry) if entry else ""
        inside = any(real == p or real.startswith(p + os.sep) for p in installs)
        if real and os.path.isdir(real) and real not in sites and not inside:
            out.append(entry)
    return list(dict.fromkeys(out))


def _absolute(path: str) -> str:
    # not realpath: a venv's python is a symlink whose own path selects the venv
    return os.path.abspath(os.path.expanduser(path))


def _send(fd: int, message: Any) -> None:
    data = pickle.dumps(message, protocol=PICKLE_PROTOCOL)
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int, deadline: float | None = None) -> Any:
    header = _read(fd, _HEADER.size, deadline)
    return pickle.loads(_read(fd, _HEADER.unpack(header)[0], deadline))


def _read(fd: int, n: int, deadline: float | None) -> bytes:
    chunks, left = [], n
    while left:
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def main() -> None:
    """The server: hello, then one answer per request until the driver closes the channel."""
    channel_in, channel_out = os.dup(0), os.dup(1)  # not inherited by the forkserver or the workers
    os.dup2(2, 1)  # print() from here on, or from a worker, goes to stderr, never into the channel
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    die_with_parent()  # a killed driver takes its servers along (and they their forkservers)
    _send(channel_out, ("hello", hello()))
    while True:
        try:
            target, task, timeout_s = _receive(channel_in)
        except EOFError:
            return
        try:
            reply: tuple[str, Any] = ("result", launch(target, task, timeout_s))
        except KeyboardInterrupt:  # a worker reported an interrupt: the driver stops
            reply = ("interrupt", None)
        except Exception as exc:
            reply = ("error", f"{qualified_name(type(exc))}: {first_line(exc)}")
        _send(channel_out, reply)


if __name__ == "__main__":
    main()
