"""A session's connection to a zygote (tfperf.processes.zygote): ask it for children, hear
when they end. The zygote is the session's own (started here, ended with the connection) or
shared (tfperf.processes.shared_zygotes: it outlives the connection).

No TensorFlow here: the pytest process never imports it.
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# The zygote imports TensorFlow before it answers: as long as a worker's own start.
READY_TIMEOUT_S = 120.0


class Zygote:
    """`process` is the zygote's process where this session started it for itself: closing
    the connection then ends it. A shared zygote (no `process`) serves on."""

    def __init__(self, control: socket.socket, pid: int,
                 process: subprocess.Popen[bytes] | None = None) -> None:
        self._control = control
        self._process = process
        self.pid = pid
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

    def close(self) -> None:
        self._control.close()  # a session's own zygote sees the end of its socket and returns
        if self._process is None:
            return
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def own(env: Mapping[str, str], log_path: Path, python: str = sys.executable) -> Zygote:
    """A zygote of this session's own, which ends when the connection closes or we die."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log, theirs:
        process = subprocess.Popen(
            [python, "-m", "tfperf.processes.zygote", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),), env=dict(env), stdin=subprocess.DEVNULL,
            stdout=log, stderr=log, start_new_session=True)
    return Zygote(ours, process.pid, process)


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
