"""XLA equivalence, parent side: run arms in long-lived workers, one per XLA mode.

Each mode has its own worker, so that an example's reference (`off`) and its XLA arm can train
at the same time where they share CPU cores: an XLA arm spends most of its time compiling on
one core while the reference trains. Not on a GPU, where two TensorFlow processes would each
claim all of its memory. `auto` arms need TF_XLA_FLAGS set before TensorFlow starts, which a
worker of its own gives them anyway. A worker that fails is ended and replaced by the next
request's, so one broken arm cannot poison the next example.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from tfperf.cases import xla_modes
from tfperf.numerics.compare import ArmSpec, Trajectory
from tfperf.processes import protocol
from tfperf.processes.runtime import CURRENT, Runtime
from tfperf.processes.worker_process import Worker


@dataclass
class ArmResult:
    spec: ArmSpec
    path: Path
    xla_executions: int
    xla_compilations: int

    @cached_property
    def trajectory(self) -> Trajectory:
        """Read once: the check compares the initial weights, then everything."""
        return Trajectory.load(self.path)


@dataclass
class PendingArm:
    """An arm sent to its worker and not answered yet."""

    spec: ArmSpec
    path: Path
    worker: Worker


class ArmWorkers:
    def __init__(self, work_dir: Path, log_dir: Path, timeout_s: float, gpu: bool,
                 runtime: Runtime = CURRENT, log_name: str = "xla-equivalence") -> None:
        self.runtime = runtime  # the TensorFlow under test
        self.log_name = log_name  # each mode's worker logs to LOG_NAME-MODE.log
        self.gpu = gpu
        # Whether two arms may train at once (see the module's note).
        self.concurrent = not gpu
        self.work_dir = work_dir
        self.log_dir = log_dir
        self.timeout_s = timeout_s
        self._workers: dict[str, Worker] = {}
        self._count = 0

    def _worker(self, mode: str) -> Worker:
        worker = self._workers.get(mode)
        if worker is None or not worker.alive:
            env = xla_modes.environment("auto" if mode == "auto" else "off", dict(os.environ))
            if not self.gpu:
                env["CUDA_VISIBLE_DEVICES"] = ""  # CPU arms must not touch a GPU
            worker = Worker(None, env, self.timeout_s, self.log_dir / f"{self.log_name}-{mode}.log",
                            module="tfperf.worker.xla_arms.arm_server", runtime=self.runtime)
            worker.__enter__()
            self._workers[mode] = worker
        return worker

    def _end(self, mode: str) -> None:
        worker = self._workers.pop(mode, None)
        if worker is not None:
            worker.kill()

    def submit(self, spec: ArmSpec, workload_path: Path, initial: Path | None = None
               ) -> PendingArm:
        """Send one arm to its mode's worker; `wait` for it. One arm per mode at a time."""
        self._count += 1
        out = self.work_dir / f"arm-{self._count:05d}.npz"
        worker = self._worker(spec.xla)
        worker.allow(self.timeout_s)
        worker.phase = f"training the {spec.xla} arm"
        try:
            worker.send(protocol.encode(protocol.ARM, spec=spec.to_json(), workload_path=str(workload_path),
                                        out=str(out), initial=str(initial) if initial else None))
        except BaseException:
            self._end(spec.xla)
            raise
        return PendingArm(spec, out, worker)

    def wait(self, pending: PendingArm) -> ArmResult:
        """The arm's result; a CaseFailure (crash, timeout, error) ends its worker."""
        try:
            done = pending.worker.expect(protocol.ARM_DONE)
        except BaseException:
            self._end(pending.spec.xla)
            raise
        return ArmResult(pending.spec, pending.path, int(done["xla_executions"]),
                         int(done["xla_compilations"]))

    def abandon(self, pending: PendingArm) -> None:
        """End an arm's worker without waiting for its answer (its example failed already)."""
        self._end(pending.spec.xla)

    def run(self, spec: ArmSpec, workload_path: Path, initial: Path | None = None) -> ArmResult:
        """Train one arm and wait for it."""
        return self.wait(self.submit(spec, workload_path, initial))

    def close(self) -> None:
        for worker in self._workers.values():
            worker.kill()
        self._workers.clear()
