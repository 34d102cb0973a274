"""A warm interpreter that forks workers, started by warm_start as
`python -m tfperf.processes.zygote FD` (a session's own) or `--listen FD FOLDER` (shared).

Importing TensorFlow and Keras is 4.5-7 s of every worker's start on two cores, more than
the measured rounds of a smoke case. This process imports them once and forks a child for
each worker: the child is a process of its own (own process group, environment, working
directory, stdin, stdout and log) that runs its module as `python -m` would.

Forking after the import is safe because the import starts no TensorFlow runtime: no
thread pool, no device, no XLA flag parsed. Every setting a case varies is read later, when
the child first runs an op: TF_XLA_FLAGS, XLA_FLAGS, TF_CONFIG, CUDA_VISIBLE_DEVICES,
logical devices. This process never runs an op, so it never reads them itself.

A session's own zygote: FD is one end of a SOCK_SEQPACKET socket pair, and the zygote ends
when the socket closes or its parent dies. A shared one: FD is a listening SOCK_SEQPACKET
socket in FOLDER, and each session that connects is a client of its own; it ends once no
client has been connected for SHARED_IDLE_S, or once FOLDER is gone.

Each client first hears `{"ready": true}`. Each request is a JSON object (module, args, env,
cwd) carrying three file descriptors (the child's stdin, stdout and stderr); the answer is
`{"pid": PID}`. When a child ends, its client hears `{"exit": PID, "code": CODE, "at":
SECONDS}`, CODE as subprocess gives it (negative: killed by that signal), SECONDS on
time.monotonic's clock, which every process on the machine shares.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import importlib
import json
import os
import runpy
import select
import signal
import socket
import sys
import time
import traceback
from pathlib import Path
from typing import Any

# What a worker, a cluster task and an equivalence arm import before their first step. Not
# the entry modules themselves: runpy runs those afresh as __main__.
PRELOAD = ("tensorflow", "keras", "numpy", "tfperf.workload", "tfperf.numerics.compare",
           *(f"tfperf.worker.{name}" for name in (
               "training.loop", "training.pool", "telemetry.step_flops", "telemetry.yardsticks",
               "proofs.case_checks", "telemetry.reported", "proofs.topology", "proofs.xla_proof",
               "proofs.xla_trace", "pipelines.synthetic", "pipelines.tfrecord", "pipelines.feed",
               "placements", "strategies", "cluster.resolvers", "proofs.transfers", "case.phases",
               "case.build", "case.warm_up", "case.serve")))
REAP_INTERVAL_S = 0.1
# A shared zygote that no session has been connected to for this long ends.
SHARED_IDLE_S = 300.0
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """A killed session (SIGKILL leaves no time to close the socket) must not leave us."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _child(request: dict[str, Any], fds: list[int], grouped: int, theirs: list[int]) -> None:
    """Become the requested process; never returns. `grouped` is closed once the child leads
    its own process group; `theirs` are the zygote's sockets, which the child must not hold
    (a shared zygote's listener held by a child would take connections nobody serves)."""
    code = 1
    try:
        os.setsid()  # its own process group: the runner ends it and all it starts
        os.close(grouped)
        for fd in theirs:
            os.close(fd)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        # A crash leaves its stack in the child's log (stderr), native signals included, as
        # PYTHONFAULTHANDLER does for a spawned worker.
        faulthandler.enable(all_threads=True)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [request["module"], *request["args"]]
        sys.path[0] = request["cwd"]  # as `python -m` puts the working directory first
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        if isinstance(done.code, str):
            print(done.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _send(client: socket.socket, message: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):  # a client that went away hears nothing more
        client.send(json.dumps(message).encode())


class Zygote:
    """The clients (sessions) this process serves and the children each asked for."""

    def __init__(self, listener: socket.socket | None) -> None:
        self.listener = listener
        self.clients: list[socket.socket] = []
        # Each child's pid -> the client that asked for it (None once that client is gone).
        self.owners: dict[int, socket.socket | None] = {}
        self.idle_since = time.monotonic()

    def reap(self) -> None:
        while self.owners:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            owner = self.owners.pop(pid, None)
            if owner is not None:
                # When, on the clock every process shares: a cluster's first death is named by it.
                _send(owner, {"exit": pid, "code": os.waitstatus_to_exitcode(status),
                              "at": time.monotonic()})

    def accept(self) -> None:
        assert self.listener is not None
        client, _ = self.listener.accept()
        self.clients.append(client)
        _send(client, {"ready": True})

    def fork(self, client: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        grouped, told = os.pipe()
        pid = os.fork()
        if pid == 0:
            theirs = [s.fileno() for s in self.clients]
            if self.listener is not None:
                theirs.append(self.listener.fileno())
            os.close(grouped)
            _child(request, fds, told, theirs)
        os.close(told)
        # The pid is answered once the child leads its own process group, so that ending
        # the group right away ends the child (killpg would find no such group before).
        os.read(grouped, 1)
        os.close(grouped)
        for fd in fds:
            os.close(fd)
        self.owners[pid] = client
        _send(client, {"pid": pid})

    def hear(self, client: socket.socket) -> None:
        try:
            message, fds, _, _ = socket.recv_fds(client, 1 << 20, 3)
        except OSError:
            message, fds = b"", []
        if message:
            self.fork(client, json.loads(message), fds)
            return
        # The session closed its end: its children are its runner's to end, not ours.
        self.clients.remove(client)
        client.close()
        for pid in [pid for pid, owner in self.owners.items() if owner is client]:
            self.owners[pid] = None
        if not self.clients:
            self.idle_since = time.monotonic()

    def done(self, folder: Path | None) -> bool:
        if self.listener is None:
            return not self.clients  # a session's own: over with its session
        # With no session connected, a child's end has nobody to be told to: its runner ended
        # it, or ends it, without us.
        if self.clients:
            return False
        return not (folder and folder.is_dir()) or \
            time.monotonic() - self.idle_since > SHARED_IDLE_S


def serve(zygote: Zygote, folder: Path | None = None) -> None:
    while not zygote.done(folder):
        zygote.reap()
        waiting = [*zygote.clients, *([zygote.listener] if zygote.listener else [])]
        for ready in select.select(waiting, [], [], REAP_INTERVAL_S)[0]:
            if ready is zygote.listener:
                zygote.accept()
            elif ready in zygote.clients:
                zygote.hear(ready)


USAGE = ("usage: python -m tfperf.processes.zygote FD | --listen FD FOLDER "
         "(started by tfperf.processes.warm_start)")


def main(argv: list[str]) -> int:
    shared = argv[:1] == ["--listen"]
    own = len(argv) == 1 and argv[0].isdigit()
    if not (own or (shared and len(argv) == 3 and argv[1].isdigit())):
        print(USAGE, file=sys.stderr)
        return 2
    if not shared:
        _die_with_parent()
    from tfperf.processes.process_setup import without_plotting

    without_plotting()
    for module in PRELOAD:
        importlib.import_module(module)
    if shared:
        # Shared by the sessions that name its folder: it outlives the one that started it,
        # and ends once idle, or once its folder is gone (the self-tests remove theirs).
        zygote = Zygote(socket.socket(fileno=int(argv[1])))
        serve(zygote, Path(argv[2]))
    else:
        zygote = Zygote(None)
        zygote.clients.append(control := socket.socket(fileno=int(argv[0])))
        _send(control, {"ready": True})
        serve(zygote)
    # Nothing of ours to tear down, and the interpreter's own shutdown with TensorFlow loaded
    # takes about a second, which the session would wait for at its end.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
