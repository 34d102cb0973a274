"""A warm interpreter that forks workers, run as `python -m tfperf.processes.zygote FD` by warm_start.

Importing TensorFlow and Keras is 4.5-7 s of every worker's start on two cores, more than
the measured rounds of a smoke case. This process imports them once per session and forks a
child for each worker: the child is a process of its own (own process group, environment,
working directory, stdin, stdout and log) that runs its module as `python -m` would.

Forking after the import is safe because the import starts no TensorFlow runtime: no
thread pool, no device, no XLA flag parsed. Every setting a case varies is read later, when
the child first runs an op: TF_XLA_FLAGS, XLA_FLAGS, TF_CONFIG, CUDA_VISIBLE_DEVICES,
logical devices. This process never runs an op, so it never reads them itself.

FD is one end of a SOCK_SEQPACKET socket pair. Each request is a JSON object (module, args,
env, cwd) carrying three file descriptors (the child's stdin, stdout and stderr); the answer
is `{"pid": PID}`. When a child ends, `{"exit": PID, "code": CODE, "at": SECONDS}` follows,
CODE as subprocess gives it (negative: killed by that signal), SECONDS on time.monotonic's
clock, which every process on the machine shares. The zygote ends when the socket closes
or its parent dies.
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
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """A killed session (SIGKILL leaves no time to close the socket) must not leave us."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _child(request: dict[str, Any], fds: list[int], grouped: int) -> None:
    """Become the requested process; never returns. `grouped` is closed once the child leads
    its own process group."""
    code = 1
    try:
        os.setsid()  # its own process group: the runner ends it and all it starts
        os.close(grouped)
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


def _reap(control: socket.socket) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        # When, on the clock every process shares: a cluster's first death is named by it.
        control.send(json.dumps({"exit": pid, "code": os.waitstatus_to_exitcode(status),
                                 "at": time.monotonic()}).encode())


def serve(control: socket.socket) -> None:
    while True:
        _reap(control)
        if not select.select([control], [], [], REAP_INTERVAL_S)[0]:
            continue
        message, fds, _, _ = socket.recv_fds(control, 1 << 20, 3)
        if not message:
            return  # the runner closed its end: the session is over
        request = json.loads(message)
        sys.stdout.flush()
        sys.stderr.flush()
        grouped, told = os.pipe()
        pid = os.fork()
        if pid == 0:
            control.close()
            os.close(grouped)
            _child(request, fds, told)
        os.close(told)
        # The pid is answered once the child leads its own process group, so that ending
        # the group right away ends the child (killpg would find no such group before).
        os.read(grouped, 1)
        os.close(grouped)
        for fd in fds:
            os.close(fd)
        control.send(json.dumps({"pid": pid}).encode())


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].isdigit():
        print("usage: python -m tfperf.processes.zygote FD (started by tfperf.processes.warm_start)",
              file=sys.stderr)
        return 2
    _die_with_parent()
    control = socket.socket(fileno=int(argv[0]))
    from tfperf.processes.process_setup import without_plotting

    without_plotting()
    for module in PRELOAD:
        importlib.import_module(module)
    control.send(json.dumps({"ready": True}).encode())
    serve(control)
    # Nothing of ours to tear down, and the interpreter's own shutdown with TensorFlow loaded
    # takes about a second, which the session would wait for at its end.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
