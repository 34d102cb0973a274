"""Start worker processes from a zygote (tfperf.processes.zygote) that has imported TensorFlow already.

The runner's side: one zygote per pytest session, started at the first worker and ended
with the session (or kept for the process's next session, where it asks:
keep_between_sessions). `start` gives a process object with what the runner uses of
subprocess.Popen (pid, stdin, stdout, poll, wait, returncode), or None where no zygote can
serve (not Linux, or the zygote failed to start or died): the caller then spawns as before.
Each child is as isolated as a spawned worker: its own process, process group, environment,
working directory and log; only the import work is shared.

No TensorFlow here: the pytest process never imports it.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from tfperf.processes.runtime import CURRENT, Runtime

# The zygote imports TensorFlow before it answers: as long as a worker's own start.
READY_TIMEOUT_S = 120.0


class Zygote:
    def __init__(self, env: Mapping[str, str], log_path: Path, python: str = sys.executable
                 ) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("wb") as log, theirs:
            self._process = subprocess.Popen(
                [python, "-m", "tfperf.processes.zygote", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), env=dict(env), stdin=subprocess.DEVNULL,
                stdout=log, stderr=log, start_new_session=True)
        self._control = ours
        self._exits: dict[int, tuple[int, float]] = {}  # pid -> exit code, when
        self._ready = False

    def _receive(self, timeout: float) -> dict[str, Any] | None:
        if not select.select([self._control], [], [], timeout)[0]:
            return None
        data = self._control.recv(1 << 16)
        if not data:
            raise ConnectionError("the zygote closed its socket")
        message: dict[str, Any] = json.loads(data)
        if "exit" in message:
            self._exits[int(message["exit"])] = (int(message["code"]), float(message["at"]))
        return message

    def _await(self, key: str, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while (remaining := deadline - time.monotonic()) > 0:
            message = self._receive(remaining)
            if message is not None and key in message:
                return message
        raise TimeoutError(f"the zygote gave no {key!r} within {timeout:g} s")

    def spawn(self, module: str, args: tuple[str, ...], env: Mapping[str, str],
              fds: tuple[int, int, int]) -> int:
        if not self._ready:
            self._await("ready", READY_TIMEOUT_S)
            self._ready = True
        request = {"module": module, "args": list(args), "env": dict(env), "cwd": os.getcwd()}
        socket.send_fds(self._control, [json.dumps(request).encode()], list(fds))
        return int(self._await("pid", READY_TIMEOUT_S)["pid"])

    def exit(self, pid: int) -> tuple[int, float] | None:
        """The child's exit code and when it ended, once it has."""
        while pid not in self._exits and self._receive(0) is not None:
            pass
        return self._exits.get(pid)

    @property
    def pid(self) -> int:
        return self._process.pid

    def alive(self) -> bool:
        return self._process.poll() is None

    def close(self) -> None:
        self._control.close()  # the zygote sees the end of its socket and returns
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


class ForkedProcess:
    """A zygote's child, with the parts of subprocess.Popen that the runner uses."""

    def __init__(self, zygote: Zygote, module: str, args: tuple[str, ...],
                 env: Mapping[str, str], log: IO[bytes]) -> None:
        self._zygote = zygote
        child_in, stdin = os.pipe()
        stdout, child_out = os.pipe()
        try:
            self.pid = zygote.spawn(module, args, env, (child_in, child_out, log.fileno()))
        except BaseException:
            for fd in (stdin, stdout):
                os.close(fd)
            raise
        finally:
            os.close(child_in)
            os.close(child_out)
        self.stdin: IO[bytes] | None = os.fdopen(stdin, "wb")
        self.stdout: IO[bytes] | None = os.fdopen(stdout, "rb")
        self.returncode: int | None = None
        self.ended_at: float | None = None  # time.monotonic() when it ended, as reaped

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                ended = self._zygote.exit(self.pid)
            except ConnectionError:  # the zygote is gone: so is the record of the exit
                ended = None if _running(self.pid) else (-9, time.monotonic())
            if ended is not None:
                self.returncode, self.ended_at = ended
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0.0)
            time.sleep(0.02)
        assert self.returncode is not None
        return self.returncode


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


_session: dict[str, Any] = {}
# One zygote per Python and environment it imports in (the session's, with what the runtime's
# side adds): what a zygote imported, and with which settings, is what its children get.
ZygoteKey = tuple[str, frozenset[tuple[str, str]]]
_zygotes: dict[ZygoteKey, Zygote] = {}
# A process that runs many sessions one after another (the self-tests' in-process suites) may
# keep its zygotes between them: each session otherwise imports TensorFlow again, 4.5 s of CPU.
_keep = {"between_sessions": False}
KEPT_LIMIT = 3
# Variables a zygote does not read while it imports, which differ between such sessions: a kept
# zygote serves a session that differs from it only in these. (Keras reads its keras.json under
# HOME at import; no self-test writes one, and every child gets its own session's HOME.)
_NOT_READ_AT_IMPORT = frozenset({"HOME", "USERPROFILE", "PWD", "OLDPWD"})
_NOT_READ_PREFIX = "PYTEST_"  # pytest's own: the running test, pytester's temporary root


def keep_between_sessions(keep: bool) -> bool:
    """Keep zygotes when a session ends, for the next session of this process; False ends them
    with the session again (the default). Returns the previous setting. Kept zygotes end with
    close_all(), or with this process."""
    was = _keep["between_sessions"]
    _keep["between_sessions"] = keep
    return was


def kept_pids() -> set[int]:
    """The zygotes' own pids (not their children's): kept ones outlive the session that began them."""
    return {z.pid for z in _zygotes.values()}


def begin(env: Mapping[str, str], log_path: Path) -> None:
    """The session's zygotes are started at the first `start` of each runtime (Linux only)."""
    end()
    for key in [key for key, zygote in _zygotes.items() if not zygote.alive()]:
        _zygotes.pop(key).close()
    if sys.platform.startswith("linux"):
        _session.update(env=dict(env), log_path=log_path)


def end() -> None:
    _session.clear()
    if not _keep["between_sessions"]:
        close_all()
    # Each holds TensorFlow in memory (about 0.5 GB): the most recently used are kept.
    while len(_zygotes) > KEPT_LIMIT:
        _zygotes.pop(next(iter(_zygotes))).close()


def close_all() -> None:
    while _zygotes:
        _zygotes.popitem()[1].close()


def _key(python: str, env: Mapping[str, str]) -> ZygoteKey:
    return python, frozenset((k, v) for k, v in env.items() if k not in _NOT_READ_AT_IMPORT
                             and not k.startswith(_NOT_READ_PREFIX))


def start(module: str, args: tuple[str, ...], env: Mapping[str, str], log: IO[bytes],
          runtime: Runtime = CURRENT) -> ForkedProcess | None:
    """A child of the runtime's zygote running `python -m module args`, or None."""
    if "env" not in _session:
        return None
    log_path: Path = _session["log_path"]
    if runtime != CURRENT:
        log_path = log_path.with_name(f"zygote-{len(_zygotes)}.log")
    base = runtime.environ(_session["env"])
    zygote = _zygotes.pop(key := _key(runtime.python, base), None)
    if zygote is None:
        zygote = Zygote(base, log_path, runtime.python)
    _zygotes[key] = zygote  # last: the most recently used
    try:
        return ForkedProcess(zygote, module, args, env, log)
    except (OSError, TimeoutError, ConnectionError) as error:
        # Spawn from now on; the reason goes to the zygote's log for whoever wonders.
        with contextlib.suppress(OSError), log_path.open("a") as note:
            note.write(f"tfperf.processes.warm_start: zygote unusable, spawning instead: {error!r}\n")
        _zygotes.pop(key).close()
        end()
        return None
