"""Start a case's processes: one worker, or every task of a multi-process case's cluster.

A cluster answers the runner like one worker: its first task reports (the chief, or worker 0),
the others are watched. Commands go to every task that runs the training program, so that
their collectives meet; a task that dies fails the case within seconds, named, instead of
leaving its peers waiting on it until the timeout. Whichever task's news comes first, the
failure names the task that failed of its own accord, with how and in which phase; a peer's
error about the connection it lost is a consequence, reported beside it. Every task is ended
when the case ends, however it ends.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from tfperf.ground.failures import CaseFailure
from tfperf.processes import cluster, protocol, scratch
from tfperf.processes.runtime import CURRENT, Runtime
from tfperf.processes.worker_process import Worker

T = TypeVar("T")


# What a task reports when a peer went away: a consequence of another task's failure, never
# its cause (case-insensitive, in the reported error's first line).
_CONSEQUENCES = ("UnavailableError", "AbortedError", "CancelledError", "DeadlineExceededError",
                 "socket closed", "connection reset", "failed to connect", "is aborted")
# How long, after a task reported only a consequence, its cause is waited for: the task that
# died is seen within a zygote's reap interval, well inside this.
SETTLE_S = 10.0
POLL_S = 0.05


def is_consequence(failure: CaseFailure) -> bool:
    text = failure.message.splitlines()[0].lower() if failure.message else ""
    return failure.cause == "error" and any(m.lower() in text for m in _CONSEQUENCES)


@dataclass(frozen=True)
class TaskFailure:
    task: str
    at: float  # time.monotonic() when it failed (ended, or reported)
    failure: CaseFailure


def blame(failures: list[TaskFailure]) -> CaseFailure:
    """The case's failure: the first task that failed of its own accord (died, or reported an
    error that is not a consequence), its peers' consequences beside it. Only consequences:
    the first of them, said to be one."""
    causes = sorted((f for f in failures if not is_consequence(f.failure)), key=lambda f: f.at)
    others = sorted((f for f in failures if is_consequence(f.failure)), key=lambda f: f.at)
    if causes:
        first, others = causes[0], causes[1:] + others
        message = f"task {first.task} of the cluster: {first.failure.message}"
    else:
        first, others = others[0], others[1:]
        message = (f"task {first.task} of the cluster: {first.failure.message}; no task was "
                   f"seen failing of its own accord within {SETTLE_S:g} s")
    for other in others:
        message += f"; then task {other.task}: {other.failure.message}"
    return CaseFailure(first.failure.cause, message, first.failure.log_tail,
                       first.failure.phase, first.failure.log_path)


class Cluster:
    """The tasks of one multi-process case; a context manager, like Worker."""

    def __init__(self, tasks: list[tuple[cluster.Task, Worker]],
                 compilations: Path | None = None) -> None:
        self.tasks = tasks
        self.primary = tasks[0][1]
        # Tasks that run the training program hear every command; servers hear none.
        self.trainers = [worker for task, worker in tasks if task.runs == "worker"]
        # Where the servers count their XLA compilations: removed with the cluster.
        self.compilations = compilations
        self.failures: dict[str, TaskFailure] = {}
        self.verdict: CaseFailure | None = None  # the case's failure, once blamed

    def __enter__(self) -> Cluster:
        try:
            # Servers first: the chief connects to them as it starts.
            for _task, worker in sorted(self.tasks, key=lambda t: t[0].runs == "worker"):
                worker.__enter__()
                worker.watch = self._watcher(worker)
        except BaseException:
            self.kill()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.kill()
        if self.compilations is not None:
            shutil.rmtree(self.compilations, ignore_errors=True)

    def kill(self) -> None:
        for _, worker in self.tasks:
            worker.kill()

    @property
    def pids(self) -> list[int]:
        return [worker.pid for _, worker in self.tasks]

    def allow(self, timeout_s: float) -> None:
        """A new deadline for every task, `timeout_s` from now."""
        for _, worker in self.tasks:
            worker.allow(timeout_s)

    def _watcher(self, awaited: Worker) -> Callable[[], None]:
        def watch() -> None:
            if any(worker is not awaited and not worker.alive for _, worker in self.tasks):
                raise self._blame()
        return watch

    def _note_the_dead(self) -> None:
        """Record each task found gone: what it said last (its FAILED) or why it is gone."""
        for task, worker in self.tasks:
            if task.name in self.failures or worker.alive:
                continue
            worker.watch = None
            try:
                while True:  # messages it sent before it went, then its FAILED or its exit
                    worker.receive()
            except CaseFailure as failure:
                at = worker.ended_at if worker.ended_at is not None else time.monotonic()
                self.failures[task.name] = TaskFailure(task.name, at, failure)

    def _blame(self, task: cluster.Task | None = None, failure: CaseFailure | None = None
               ) -> CaseFailure:
        """The case's failure, whichever task's news came first: wait (a while, within the
        case's time) for a cause while only consequences are known, then end every task."""
        if self.verdict is not None:
            return self.verdict
        if task is not None and failure is not None:
            self.failures[task.name] = TaskFailure(task.name, time.monotonic(), failure)
        deadline = min([time.monotonic() + SETTLE_S, *(w.deadline for _, w in self.tasks)])
        while True:
            self._note_the_dead()
            known = self.failures.values()
            settled = len(known) == len(self.tasks) or \
                any(not is_consequence(f.failure) for f in known)
            if settled or time.monotonic() >= deadline:
                break
            time.sleep(POLL_S)
        self.kill()
        self.verdict = blame(list(self.failures.values()))
        return self.verdict

    def _all(self, call: Callable[[Worker], T], first: Callable[[Worker], None] | None = None
             ) -> T:
        """`first` on every task that trains, then `call` on the reporting task and on every
        other task that trains; the reporting task's answer. A failure names the task that
        failed first of its own accord (see blame)."""
        names = {id(worker): task for task, worker in self.tasks}
        current = self.primary
        try:
            for current in self.trainers if first else ():
                first(current)  # type: ignore[misc]
            current = self.primary
            answer = call(current)
            for current in self.trainers[1:]:
                call(current)
        except CaseFailure as failure:
            if self.verdict is not None:  # a watcher blamed it already
                raise self.verdict from None
            raise self._blame(names[id(current)], failure) from None
        return answer

    def wait_ready(self) -> dict[str, Any]:
        return self._all(Worker.wait_ready)

    def _command(self, phase: str, command: str, answer: str, **payload: Any) -> dict[str, Any]:
        """`command` to every task that trains, then every task's `answer`."""

        def send(worker: Worker) -> None:
            worker.phase = phase
            worker.send(protocol.encode(command, **payload))

        return self._all(lambda worker: worker.expect(answer), first=send)

    def run_round(self, inject_seconds: float = 0.0, inject_fraction: float = 0.0
                  ) -> dict[str, Any]:
        return self._command("measuring", protocol.ROUND, protocol.ROUND_DONE,
                             inject_seconds=inject_seconds, inject_fraction=inject_fraction)

    def yardstick(self, repeat: int = 1) -> protocol.Burst:
        # Every task that trains times its burst at once, as they train at once. `repeat`
        # (test-only, --perf-yardstick-fault): the burst runs that many times its work and
        # reports one's, as a burst the machine disturbed would read.
        return protocol.Burst.of(self._command("measuring", protocol.YARDSTICK,
                                               protocol.YARDSTICK_DONE, repeat=repeat))

    def profile(self, logdir: Path, summarise: bool = False) -> dict[str, Any]:
        # Every task that trains runs the round (their collectives meet); each writes its own
        # folder under logdir.
        return self._command("profiling", protocol.PROFILE, protocol.PROFILED,
                             logdir=str(logdir), summarise=summarise)

    def finish(self) -> dict[str, Any]:
        return self._command("finishing", protocol.FINISH, protocol.FINISHED)


def launch(spec: protocol.WorkerSpec, env: Mapping[str, str], timeout_s: float, log_path: Path,
           mode: str, runtime: Runtime = CURRENT) -> Worker | Cluster:
    """The processes of one case, not started yet (enter the result to start them). In a
    joined cluster (`mode` tf_config or slurm) this machine runs its own task only."""
    workers = int(spec.case.get("workers", "1"))
    if workers == 1 or mode != "local":
        return Worker(spec.to_json(), env, timeout_s, log_path, runtime=runtime)
    tasks = cluster.tasks(spec.case["strategy"], workers)
    addresses = cluster.loopback_spec(tasks)
    compilations = scratch.make("cluster")
    started = []
    for task in tasks:
        task_env = {**env, "TF_CONFIG": cluster.tf_config(addresses, task),
                    protocol.XLA_COMPILATIONS_ENV: str(compilations)}
        path = log_path if task is tasks[0] else log_path.with_suffix(
            f".{task.type}-{task.index}.log")
        if task.runs == "worker":
            started.append((task, Worker(spec.to_json(), task_env, timeout_s, path,
                                         runtime=runtime)))
        else:
            args = ("local", str(workers), spec.case["device_kind"], spec.case["device_count"])
            started.append((task, Worker(None, task_env, timeout_s, path,
                                         module="tfperf.worker.cluster.server", args=args,
                                         runtime=runtime)))
    return Cluster(started, compilations)
