"""Start a case's processes: one worker, or every task of a multi-process case's cluster.

A cluster answers the runner like one worker: its first task reports (the chief, or worker 0),
the others are watched. Commands go to every task that runs the training program, so that
their collectives meet; a task that dies fails the case within half a second, named, instead
of leaving its peers waiting on it until the timeout. Every task is ended when the case ends,
however it ends.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from tfperf import cluster, protocol
from tfperf.failures import CaseFailure
from tfperf.runner import Worker

T = TypeVar("T")


class Cluster:
    """The tasks of one multi-process case; a context manager, like Worker."""

    def __init__(self, tasks: list[tuple[cluster.Task, Worker]]) -> None:
        self.tasks = tasks
        self.primary = tasks[0][1]
        # Tasks that run the training program hear every command; servers hear none.
        self.trainers = [worker for task, worker in tasks if task.runs == "worker"]
        self.death: CaseFailure | None = None  # the first task found dead, once diagnosed

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

    def kill(self) -> None:
        for _, worker in self.tasks:
            worker.kill()

    def _watcher(self, awaited: Worker) -> Callable[[], None]:
        def watch() -> None:
            for task, worker in self.tasks:
                if worker is not awaited and not worker.alive:
                    raise self._died(task, worker)
        return watch

    def _died(self, task: cluster.Task, worker: Worker) -> CaseFailure:
        """What a task that is gone said last (its FAILED message) or why it is gone."""
        if self.death is not None:
            return self.death
        worker.watch = None
        try:
            while True:  # messages it sent before it went, then its FAILED or its exit
                worker.receive()
        except CaseFailure as failure:
            gone = failure
        self.kill()
        self.death = CaseFailure(gone.cause, f"task {task.name} of the cluster: {gone.message}",
                                 gone.log_tail)
        return self.death

    def _first_death(self) -> CaseFailure | None:
        for task, worker in self.tasks[1:]:
            if not worker.alive:
                return self._died(task, worker)
        return None

    def _all(self, call: Callable[[Worker], T], first: Callable[[Worker], None] | None = None
             ) -> T:
        """`first` on every task that trains, then `call` on the reporting task and on every
        other task that trains; the reporting task's answer. A failure blamed on the cluster
        names the task that died first."""
        try:
            for worker in self.trainers if first else ():
                first(worker)  # type: ignore[misc]
            answer = call(self.primary)
            for worker in self.trainers[1:]:
                call(worker)
        except CaseFailure as failure:
            died = self._first_death()
            self.kill()
            raise (died or failure) from None
        return answer

    def wait_ready(self) -> dict[str, Any]:
        return self._all(Worker.wait_ready)

    def _command(self, phase: str, command: str, answer: str, **payload: Any) -> dict[str, Any]:
        """`command` to every task that trains, then every task's `answer`."""

        def send(worker: Worker) -> None:
            worker.phase = phase
            worker.send(protocol.encode(command, **payload))

        return self._all(lambda worker: worker.expect(answer), first=send)

    def run_round(self, inject_seconds: float = 0.0) -> dict[str, Any]:
        return self._command("measuring", protocol.ROUND, protocol.ROUND_DONE,
                             inject_seconds=inject_seconds)

    def yardstick(self) -> float:
        # Every task that trains times its burst at once, as they train at once.
        return float(self._command("measuring", protocol.YARDSTICK,
                                   protocol.YARDSTICK_DONE)["rate"])

    def profile(self, logdir: Path) -> dict[str, Any]:
        # Every task that trains runs the round (their collectives meet); each writes its own
        # folder under logdir.
        return self._command("profiling", protocol.PROFILE, protocol.PROFILED,
                             logdir=str(logdir))

    def finish(self) -> dict[str, Any]:
        return self._command("finishing", protocol.FINISH, protocol.FINISHED)


def launch(spec: protocol.WorkerSpec, env: Mapping[str, str], timeout_s: float, log_path: Path,
           mode: str) -> Worker | Cluster:
    """The processes of one case, not started yet (enter the result to start them). In a
    joined cluster (`mode` tf_config or slurm) this machine runs its own task only."""
    workers = int(spec.case.get("workers", "1"))
    if workers == 1 or mode != "local":
        return Worker(spec.to_json(), env, timeout_s, log_path)
    tasks = cluster.tasks(spec.case["strategy"], workers)
    addresses = cluster.loopback_spec(tasks)
    started = []
    for task in tasks:
        task_env = {**env, "TF_CONFIG": cluster.tf_config(addresses, task)}
        path = log_path if task is tasks[0] else log_path.with_suffix(
            f".{task.type}-{task.index}.log")
        if task.runs == "worker":
            started.append((task, Worker(spec.to_json(), task_env, timeout_s, path)))
        else:
            args = ("local", str(workers), spec.case["device_kind"], spec.case["device_count"])
            started.append((task, Worker(None, task_env, timeout_s, path,
                                         module="tfperf.cluster_server", args=args)))
    return Cluster(started)
