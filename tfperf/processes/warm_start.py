"""Start worker processes from a zygote (tfperf.processes.zygote) that has imported TensorFlow already.

The runner's side: one zygote per pytest session and runtime, started at the first worker and
ended with the session; or, where TFPERF_ZYGOTES names a folder, one shared by every session
with the same settings (shared_zygotes), connected to at the first worker. `start` gives a
process object with what the runner uses of subprocess.Popen (pid, stdin, stdout, poll, wait,
returncode), or None where no zygote can serve (not Linux, or the zygote failed to start or
died): the caller then spawns as before. Each child is as isolated as a spawned worker: its
own process, process group, environment, working directory and log; only the import work is
shared.

No TensorFlow here: the pytest process never imports it.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from tfperf.processes import protocol, shared_zygotes, zygote_client
from tfperf.processes.runtime import CURRENT, Runtime
from tfperf.processes.zygote_client import Zygote


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
                ended = None if zygote_client.running(self.pid) else (-9, time.monotonic())
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


_session: dict[str, Any] = {}
# One zygote per Python and environment it imports in (the session's, with what the runtime's
# side adds): what a zygote imported, and with which settings, is what its children get.
ZygoteKey = tuple[str, frozenset[tuple[str, str]]]
_zygotes: dict[ZygoteKey, Zygote] = {}
# Variables a zygote does not read while it imports: a shared zygote (shared_zygotes) serves
# sessions that differ from it only in these. (Keras reads its keras.json under HOME at import;
# no self-test writes one, and every child gets its own session's HOME.)
# Each session's own values of the others are read later, by the session or in the child: its
# id (a bisection's every step has one, and each step imported TensorFlow again for it), where
# its job writes its summary, pytester's colours, a cluster's TF_CONFIG (read when a resolver
# is made; a TF_CONFIG that is not JSON imports as well) and where a joined cluster's tasks
# count their XLA compilations.
_NOT_READ_AT_IMPORT = frozenset({"HOME", "USERPROFILE", "PWD", "OLDPWD", "TFPERF_SESSION_ID",
                                 "GITHUB_STEP_SUMMARY", "PY_COLORS", "TF_CONFIG",
                                 protocol.XLA_COMPILATIONS_ENV})
_NOT_READ_PREFIX = "PYTEST_"  # pytest's own: the running test, pytester's temporary root


def shared_pids(env: Mapping[str, str] = os.environ) -> set[int]:
    """The pids of the shared zygotes that the environment's TFPERF_ZYGOTES names (not their
    children's): they outlive the sessions that began them."""
    where = shared_zygotes.folder(env)
    return shared_zygotes.pids(where) if where else set()


def begin(env: Mapping[str, str], log_path: Path) -> None:
    """The session's zygotes are started (or, shared, connected to) at the first `start` of
    each runtime (Linux only). A folder in TFPERF_ZYGOTES that cannot hold sockets stops the
    session with one line."""
    end()
    if sys.platform.startswith("linux"):
        _session.update(env=dict(env), log_path=log_path, shared=shared_zygotes.folder(env))


def end() -> None:
    _session.clear()
    while _zygotes:
        _zygotes.popitem()[1].close()


def _key(python: str, env: Mapping[str, str]) -> ZygoteKey:
    return python, frozenset((k, v) for k, v in env.items() if k not in _NOT_READ_AT_IMPORT
                             and not k.startswith(_NOT_READ_PREFIX))


def _zygote(runtime: Runtime) -> tuple[ZygoteKey, Zygote, Path]:
    """The runtime's zygote for this session, and where its log is."""
    log_path: Path = _session["log_path"]
    if runtime != CURRENT:
        log_path = log_path.with_name(f"zygote-{len(_zygotes)}.log")
    base = runtime.environ(_session["env"])
    key = _key(runtime.python, base)
    if (zygote := _zygotes.get(key)) is not None:
        return key, zygote, log_path
    shared: Path | None = _session["shared"]
    if shared is not None:
        name = shared_zygotes.name(runtime.python, dict(key[1]))
        zygote = shared_zygotes.connect(shared, name, base, runtime.python)
        log_path = shared / f"{name}.log"
    else:
        zygote = zygote_client.own(base, log_path, runtime.python)
    _zygotes[key] = zygote
    return key, zygote, log_path


def start(module: str, args: tuple[str, ...], env: Mapping[str, str], log: IO[bytes],
          runtime: Runtime = CURRENT) -> ForkedProcess | None:
    """A child of the runtime's zygote running `python -m module args`, or None."""
    if "env" not in _session:
        return None
    log_path: Path = _session["log_path"]
    try:
        _, zygote, log_path = _zygote(runtime)
        return ForkedProcess(zygote, module, args, env, log)
    except (OSError, TimeoutError, ConnectionError) as error:
        # Spawn from now on; the reason goes to the zygote's log for whoever wonders.
        with contextlib.suppress(OSError), log_path.open("a") as note:
            note.write(f"tfperf.processes.warm_start: zygote unusable, spawning instead: {error!r}\n")
        end()
        return None
