"""Zygotes shared by every session that names one folder in TFPERF_ZYGOTES.

A session's own zygote imports TensorFlow once for the session's workers (3-7 s of CPU on two
cores). Where many short sessions run one after another or side by side (the harness's
self-tests, a soak, sessions that start sessions), each would import it again: with
TFPERF_ZYGOTES naming a folder, the first session to need a zygote for its settings starts
one listening on a socket in that folder, and every later session with the same settings
connects to it instead. Settings are the Python and the environment the zygote imports in
(warm_start's key); a zygote ends once idle for a while (zygote.SHARED_IDLE_S) or once its
folder is gone. The folder is the user's own, as its sockets let anyone who can reach them
start processes: make it with mode 0700 (tempfile.mkdtemp does).

No TensorFlow here: the pytest process never imports it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from filelock import FileLock

from tfperf.processes import zygote_client
from tfperf.processes.zygote_client import Zygote

FOLDER_ENV = "TFPERF_ZYGOTES"
# Unix sockets' paths are at most 107 bytes (sun_path): the folder must leave room for a name.
_NAME_LENGTH = 24
_MAX_PATH = 107
_started: list[subprocess.Popen[bytes]] = []  # ours to reap, so none lingers as a zombie


class FolderError(ValueError):
    pass


def folder(env: Mapping[str, str]) -> Path | None:
    """The folder the session's environment names, or None."""
    named = env.get(FOLDER_ENV, "")
    if not named:
        return None
    path = Path(named)
    if not path.is_dir():
        raise FolderError(f"{FOLDER_ENV}={named}: no such folder; name an existing folder of "
                          "your own (mode 0700), or unset it for a zygote per session")
    if len(str(path.resolve())) + 1 + _NAME_LENGTH + len(".sock") > _MAX_PATH:
        raise FolderError(f"{FOLDER_ENV}={named}: too long for a socket's path; name a folder of "
                          f"at most {_MAX_PATH - _NAME_LENGTH - 6} characters")
    return path.resolve()


def name(python: str, env: Mapping[str, str]) -> str:
    """The file name of the zygote for this Python and environment (as warm_start keys them)."""
    text = json.dumps([python, sorted(env.items())])
    return hashlib.sha256(text.encode()).hexdigest()[:_NAME_LENGTH]


def connect(where: Path, key: str, env: Mapping[str, str], python: str) -> Zygote:
    """A connection to the folder's zygote named `key`, started first if none serves."""
    path = where / f"{key}.sock"
    with FileLock(where / f"{key}.lock"):
        client = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            client.connect(str(path))
            return Zygote(client, int((where / f"{key}.pid").read_text()))
        except (ConnectionRefusedError, FileNotFoundError, ValueError):
            client.close()  # none yet, or one that ended: start one
        path.unlink(missing_ok=True)
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as listener:
            listener.bind(str(path))
            listener.listen()
            with (where / f"{key}.log").open("ab") as log:
                process = subprocess.Popen(
                    [python, "-m", "tfperf.processes.zygote", "--listen",
                     str(listener.fileno()), str(where)],
                    pass_fds=(listener.fileno(),), env=dict(env), stdin=subprocess.DEVNULL,
                    stdout=log, stderr=log, start_new_session=True)
        _started.append(process)
        (where / f"{key}.pid").write_text(str(process.pid))
        client = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        client.connect(str(path))  # queued until the zygote has imported and accepts
        return Zygote(client, process.pid)


def pids(where: Path) -> set[int]:
    """The pids of the folder's zygotes that still run."""
    for process in _started:
        process.poll()
    found = set()
    for pid_file in where.glob("*.pid"):
        with contextlib.suppress(OSError, ValueError):
            pid = int(pid_file.read_text())
            if zygote_client.running(pid) and b"tfperf.processes.zygote" in \
                    Path(f"/proc/{pid}/cmdline").read_bytes():
                found.add(pid)
    return found


def end_all(where: Path, timeout_s: float = 10.0) -> None:
    """End the folder's zygotes and remove the folder."""
    running = pids(where)
    for pid in running:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while running and time.monotonic() < deadline:
        time.sleep(0.05)
        running = pids(where)
    shutil.rmtree(where, ignore_errors=True)
    for process in _started:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=0)
    _started.clear()
