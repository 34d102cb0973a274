"""XLA equivalence, parent side: run arms in long-lived workers, one per XLA environment.

`off` and `jit` arms share a plain process (jit_compile is chosen per function); `auto` arms
need TF_XLA_FLAGS set before TensorFlow starts, so they get their own. A worker that fails is
ended and replaced by the next request's, so one broken arm cannot poison the next example.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from tfperf import protocol, xla_modes
from tfperf.equivalence import ArmSpec, Trajectory
from tfperf.runner import Worker
from tfperf.trajectory_worker import ARM, ARM_DONE


@dataclass
class ArmResult:
    spec: ArmSpec
    path: Path
    xla_executions: int
    xla_compilations: int

    def trajectory(self) -> Trajectory:
        return Trajectory.load(self.path)


class ArmRunner:
    def __init__(self, work_dir: Path, log_dir: Path, timeout_s: float, gpu: bool) -> None:
        self.gpu = gpu
        self.work_dir = work_dir
        self.log_dir = log_dir
        self.timeout_s = timeout_s
        self._workers: dict[str, Worker] = {}
        self._count = 0

    def _environment_of(self, spec: ArmSpec) -> str:
        return "auto" if spec.xla == "auto" else "plain"

    def _worker(self, key: str) -> Worker:
        worker = self._workers.get(key)
        if worker is None or not worker.alive:
            env = xla_modes.environment("auto" if key == "auto" else "off", dict(os.environ))
            if not self.gpu:
                env["CUDA_VISIBLE_DEVICES"] = ""  # CPU arms must not touch a GPU
            worker = Worker(None, env, self.timeout_s, self.log_dir / f"xla-equivalence-{key}.log",
                            module="tfperf.trajectory_worker")
            worker.__enter__()
            self._workers[key] = worker
        return worker

    def run(self, spec: ArmSpec, workload_path: Path, initial: Path | None = None) -> ArmResult:
        """Train one arm; a CaseFailure (crash, timeout, error) ends its worker."""
        self._count += 1
        out = self.work_dir / f"arm-{self._count:05d}.npz"
        key = self._environment_of(spec)
        worker = self._worker(key)
        worker.allow(self.timeout_s)
        worker.phase = f"training the {spec.xla} arm"
        try:
            worker.send(protocol.encode(ARM, spec=spec.to_json(), workload_path=str(workload_path),
                                        out=str(out), initial=str(initial) if initial else None))
            done = worker.expect(ARM_DONE)
        except BaseException:
            worker.kill()
            del self._workers[key]
            raise
        return ArmResult(spec, out, int(done["xla_executions"]), int(done["xla_compilations"]))

    def close(self) -> None:
        for worker in self._workers.values():
            worker.kill()
        self._workers.clear()
