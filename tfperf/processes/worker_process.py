"""The parent's side of a worker: start it, talk to it with deadlines, end it whatever happens.

The worker runs in its own process group, so ending it ends anything it started. Every read
has the case's remaining time as its deadline; when the deadline passes the group is killed
and the case fails as a timeout. When the worker goes away without a FAILED message, its exit
status and the end of its log say why.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

from tfperf.ground.failures import CaseFailure, cause_of
from tfperf.processes import crash_stack, protocol, scratch, warm_start
from tfperf.processes.runtime import CURRENT, Runtime

# Enough for a crash's whole stack: a worker forked from a zygote has about 20 frames, the case's
# own on top and the zygote's and runpy's 10 below them (15 cut off the frame that crashed once
# the worker's phases became functions of their own).
LOG_TAIL_LINES = 25
# How often a cluster's other tasks are checked while one is awaited: a dead task fails the
# case this soon, instead of its peers waiting on it until the case's timeout.
WATCH_INTERVAL_S = 0.5
# Markers in a worker's log that mean memory ran out, whoever noticed first.
_OOM_MARKERS = ("ResourceExhaustedError", "OOM when allocating", "std::bad_alloc", "MemoryError",
                "Out of memory", "failed to allocate")


# TensorFlow's start-up notices, which say nothing about why a case failed.
_NOISE = ("absl::InitializeLog", "port.cc:", "cpu_feature_guard.cc", "To enable the following",
          "rebuild TensorFlow with")


def _tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    kept = [line for line in text.splitlines()
            if line.strip() and not any(noise in line for noise in _NOISE)]
    return "\n".join(kept[-lines:])


def _end(path: Path) -> str:
    """What a worker's log says of how it went away: the stack faulthandler wrote as it
    crashed, trimmed (crash_stack), else its last lines. A cluster's chief dumps more threads
    than the tail holds, and the log's folder may be gone when the failure is read."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    stack = crash_stack.trimmed("\n".join(
        line for line in text.splitlines() if not any(noise in line for noise in _NOISE)))
    return stack if stack is not None else _tail(path)


class Worker:
    """One worker process; use as a context manager so it always ends.

    `module` is what runs (`python -m module`); `hello` is its first stdin line (a case's
    WorkerSpec). The deadline covers the whole life of a one-case worker; a long-lived worker
    serving many requests sets a fresh one per request with `allow`.
    """

    def __init__(self, hello: str | None, env: Mapping[str, str], timeout_s: float,
                 log_path: Path, module: str = "tfperf.worker", args: tuple[str, ...] = (),
                 runtime: Runtime = CURRENT) -> None:
        self.hello = hello
        self.module = module
        self.args = args
        # Called while waiting for a message: a cluster checks its other tasks here.
        self.watch: Callable[[], None] | None = None
        # A crash leaves its stack in the log, native signals included (a forked worker's
        # zygote enables the same).
        self.env = {**runtime.environ(env), "PYTHONFAULTHANDLER": "1"}
        self.runtime = runtime
        self.deadline = time.monotonic() + timeout_s
        self.timeout_s = timeout_s
        self.log_path = log_path
        self.phase = "starting"
        self.ended_at: float | None = None  # time.monotonic() when it was gone, once seen
        self._buffer = b""
        self._process: subprocess.Popen[bytes] | warm_start.ForkedProcess | None = None
        self._scratch: Path | None = None

    def __enter__(self) -> Worker:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._scratch = scratch.make("worker")
        self.env[protocol.SCRATCH_ENV] = str(self._scratch)
        with self.log_path.open("wb") as log:
            # Forked from the session's zygote, with TensorFlow imported already; spawned
            # where there is none.
            self._process = warm_start.start(self.module, self.args, self.env, log,
                                             self.runtime) or \
                subprocess.Popen(
                    [self.runtime.python, "-m", self.module, *self.args],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    env=self.env,
                    start_new_session=True,
                )
        if self.hello is not None:
            self.send(self.hello)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.kill()

    def allow(self, timeout_s: float) -> None:
        """A new deadline, `timeout_s` from now."""
        self.timeout_s = timeout_s
        self.deadline = time.monotonic() + timeout_s

    @property
    def alive(self) -> bool:
        process = self._process
        if process is None:
            return False
        if process.poll() is None:
            return True
        if self.ended_at is None:
            # A forked worker's zygote says when it reaped it; a spawned one, when first seen.
            self.ended_at = getattr(process, "ended_at", None) or time.monotonic()
        return False

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    @property
    def pids(self) -> list[int]:
        return [self.pid]

    def kill(self) -> None:
        process = self._process
        if process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)

    def send(self, line: str) -> None:
        assert self._process is not None and self._process.stdin is not None
        try:
            self._process.stdin.write(line.encode() + b"\n")
            self._process.stdin.flush()
        except BrokenPipeError:
            raise self._gone() from None

    def _gone(self) -> CaseFailure:
        """The worker closed its channel without a FAILED message: find out why."""
        assert self._process is not None
        try:
            code = self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()  # and waited for
            code = self._process.wait()
        tail = _end(self.log_path)
        where = f"while {self.phase}"
        log = f" (log: {self.log_path})"
        found = (self.phase, str(self.log_path))
        if code < 0:
            name = signal.Signals(-code).name
            if -code == signal.SIGKILL:
                return CaseFailure("out_of_memory", f"worker killed by SIGKILL {where}, as the "
                                   f"kernel's OOM killer does{log}", tail, *found)
            return CaseFailure("crash", f"worker killed by {name} {where}{log}", tail, *found)
        if any(marker in tail for marker in _OOM_MARKERS):
            return CaseFailure("out_of_memory", f"worker ran out of memory {where}{log}", tail,
                               *found)
        return CaseFailure("crash", f"worker exited with code {code} {where}{log}", tail, *found)

    def receive(self) -> dict[str, Any]:
        """The next message, or a CaseFailure (timeout, crash, or the worker's own report).
        A phase the worker enters is noted on the way, not returned."""
        while True:
            message = self._next()
            if message["kind"] != protocol.PHASE:
                break
            self.phase = message["phase"]
        if message["kind"] == protocol.FAILED:
            phase = message.get("phase") or self.phase
            raise CaseFailure(cause_of(message["failure"]), f"{message['message']} (while {phase})",
                              _tail(self.log_path), phase, str(self.log_path))
        return message

    def _next(self) -> dict[str, Any]:
        assert self._process is not None and self._process.stdout is not None
        stdout = self._process.stdout
        while b"\n" not in self._buffer:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise CaseFailure(
                    "timeout", f"no answer within the case's {self.timeout_s:g} s limit "
                    f"while {self.phase}; the worker was killed (log: {self.log_path})",
                    _tail(self.log_path), self.phase, str(self.log_path))
            if self.watch is not None:
                self.watch()
            with selectors.DefaultSelector() as selector:
                selector.register(stdout, selectors.EVENT_READ)
                if not selector.select(min(remaining, WATCH_INTERVAL_S)):
                    continue
            chunk = os.read(stdout.fileno(), 65536)
            if not chunk:
                raise self._gone()
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return protocol.parse(line.decode())

    def expect(self, kind: str) -> dict[str, Any]:
        message = self.receive()
        if message["kind"] != kind:
            raise CaseFailure("error", f"worker said {message['kind']!r}, expected {kind!r}")
        return message

    def wait_ready(self) -> dict[str, Any]:
        self.phase = "building"  # the worker tells each phase after it (protocol.PHASE)
        return self.expect(protocol.READY)

    def run_round(self, inject_seconds: float = 0.0, inject_fraction: float = 0.0
                  ) -> dict[str, Any]:
        self.phase = "measuring"
        self.send(protocol.encode(protocol.ROUND, inject_seconds=inject_seconds,
                                  inject_fraction=inject_fraction))
        return self.expect(protocol.ROUND_DONE)

    def yardstick(self, repeat: int = 1) -> protocol.Burst:
        self.phase = "measuring"
        self.send(protocol.encode(protocol.YARDSTICK, repeat=repeat))
        return protocol.Burst.of(self.expect(protocol.YARDSTICK_DONE))

    def profile(self, logdir: Path, summarise: bool = False) -> dict[str, Any]:
        """One more round under the profiler, into logdir; `summarise`: the answer holds the
        worker's summary of its trace, op by op (an A/B's where-report)."""
        self.phase = "profiling"
        self.send(protocol.encode(protocol.PROFILE, logdir=str(logdir), summarise=summarise))
        return self.expect(protocol.PROFILED)

    def finish(self) -> dict[str, Any]:
        self.phase = "finishing"
        self.send(protocol.encode(protocol.FINISH))
        return self.expect(protocol.FINISHED)
