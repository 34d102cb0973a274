"""Did side B train to the same numbers as side A? The verdict beside the speed verdict.

Each side trains the case's workload, in the case's XLA mode, data format and precision, for
STEPS steps on one device, as the XLA equivalence check's arms do (size tiny, batch 8: where
its tolerances were measured, tfperf/numerics/tolerances.py), in its own TensorFlow and
environment. Side A starts from its seeded initial weights on its seeded batches and writes
both; side B starts from exactly those (checked bit for bit), so any difference is what side
B's TensorFlow, settings or workloads did with them. Their losses at every step, first-step
gradients and final weights compare within the precision's measured tolerance:
`numerics same`, or `numerics differ` with what, where and against which tolerance (the case
fails `numerics_differ`).

The seed is the session's own, so each session draws new weights and batches. One device and
one replica, whatever the case's strategy: a multi-device reduction sums in an order of its
own, which the tolerances were not measured for.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from tfperf.cases.matrix import Case
from tfperf.equivalence.arms import ArmResult, ArmWorkers
from tfperf.equivalence.check import MAX_STEPS
from tfperf.ground.failures import CaseFailure
from tfperf.ground.vocabulary import DIFFER as DIFFER
from tfperf.ground.vocabulary import SAME as SAME
from tfperf.ground.vocabulary import SIDE_A, SIDE_B, SideName
from tfperf.ground.vocabulary import NumericsStatus as NumericsStatus
from tfperf.numerics import compare
from tfperf.numerics.compare import ArmSpec
from tfperf.numerics.tolerances import Tolerance, tolerance
from tfperf.processes.runtime import Runtime

SIZE, BATCH, STEPS = "tiny", 8, MAX_STEPS


@dataclass(frozen=True)
class NumericsVerdict:
    status: NumericsStatus
    problems: list[str]  # what is beyond the tolerance, one line each
    loss: float  # the largest relative difference of a step's loss
    loss_step: int
    gradients: float  # norm-wise relative, first step
    gradients_at: str
    weights: float  # norm-wise relative, after the last step
    weights_at: str
    tolerance: dict[str, float]
    seed: int
    steps: int = STEPS
    batch_size: int = BATCH
    perturb: float = 0.0  # side B's injected change (test-only), relative
    xla_executions: dict[str, int] = field(default_factory=dict)

    def describe(self) -> str:
        where = (f"{self.steps} steps of batch {self.batch_size} from side A's weights and "
                 f"batches, seed {self.seed}")
        if self.status == DIFFER:
            return f"numerics differ ({where}): {'; '.join(self.problems)}"
        limit = self.tolerance
        return (f"numerics same ({where}): loss {self.loss:.2g} (step {self.loss_step}), "
                f"first-step gradients {self.gradients:.2g}, final weights "
                f"{self.weights:.2g}; tolerance {limit['loss']:.2g} / "
                f"{limit['gradients']:.2g} / {limit['weights']:.2g}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def judge(a: compare.Trajectory, b: compare.Trajectory, limit: Tolerance,
          seed: int, perturb: float = 0.0, xla_executions: Mapping[str, int] | None = None
          ) -> NumericsVerdict:
    """Side B's trajectory against side A's; a CaseFailure (configuration) if side B did not
    start from exactly side A's weights and batches, for then the comparison proves nothing."""
    shapes = [[(x.dtype.str, x.shape) for x in t.initial] for t in (a, b)]
    if shapes[0] != shapes[1]:
        raise CaseFailure("configuration", f"the sides built different models: side A has "
                          f"{len(a.names)} variables, side B {len(b.names)}, first apart: "
                          + next((f"{x} vs {y}" for x, y in zip(a.names, b.names, strict=False)
                                  if x != y), "their shapes or dtypes"))
    # Variables pair by position: another Keras may name them otherwise.
    b = replace(b, names=a.names)
    if not (compare.same_start(a, b) and compare.same_batches(a, b)):
        raise CaseFailure("configuration", "side B's numerics arm did not start from exactly "
                          "side A's initial weights and batches: the comparison proves nothing")
    found = compare.differences(a, b, ("side A", "side B"))
    problems = compare.problems(found, limit)
    return NumericsVerdict(DIFFER if problems else SAME, problems, found.loss, found.loss_step,
                           found.gradients, found.gradients_at, found.weights, found.weights_at,
                           asdict(limit), seed, len(a.losses), perturb=perturb,
                           xla_executions=dict(xla_executions or {}))


class NumericsCheck:
    """The session's arms: one runner per side and device kind, whose workers (one per XLA
    mode) live across the session's cases, so TensorFlow is imported once per side."""

    def __init__(self, runtimes: Mapping[SideName, Runtime], work_dir: Path, log_dir: Path,
                 timeout_s: float) -> None:
        self.runtimes = runtimes
        self.work_dir = work_dir
        self.log_dir = log_dir
        self.timeout_s = timeout_s
        self._runners: dict[tuple[SideName, bool], ArmWorkers] = {}

    def _runner(self, side: SideName, gpu: bool) -> ArmWorkers:
        key = (side, gpu)
        if key not in self._runners:
            folder = self.work_dir / f"{side}-{'gpu' if gpu else 'cpu'}"
            folder.mkdir(parents=True, exist_ok=True)
            self._runners[key] = ArmWorkers(folder, self.log_dir, self.timeout_s, gpu,
                                           self.runtimes[side], f"ab-numerics-side-{side}")
        return self._runners[key]

    def compare(self, case: Case, workloads: Mapping[SideName, Path], seed: int,
                perturb_tolerances: float = 0.0) -> NumericsVerdict:
        """Train side A, then side B from A's file; judge. `perturb_tolerances` (test-only)
        scales side B's loss up by that many of the case's loss tolerances."""
        gpu = case.device_kind == "gpu"
        limit = tolerance(case.workload, case.precision)
        perturb = perturb_tolerances * limit.loss
        spec = compare.ArmSpec(case.workload, SIZE, BATCH, case.data_format, case.precision,
                               seed, STEPS, case.xla,
                               "/device:GPU:0" if gpu else "/device:CPU:0")
        a = self._arm(SIDE_A, gpu, spec, workloads[SIDE_A], None)
        b = self._arm(SIDE_B, gpu, replace(spec, perturb=perturb), workloads[SIDE_B], a.path)
        return judge(a.trajectory, b.trajectory, limit, seed, perturb,
                     {SIDE_A: a.xla_executions, SIDE_B: b.xla_executions})

    def _arm(self, side: SideName, gpu: bool, spec: ArmSpec, workload: Path,
             initial: Path | None) -> ArmResult:
        """One side's arm; its failure names the side."""
        try:
            return self._runner(side, gpu).run(spec, workload, initial)
        except CaseFailure as failure:
            raise CaseFailure(failure.cause, f"side {side}'s numerics arm: {failure.message}",
                              failure.log_tail, failure.phase, failure.log_path) from None

    def close(self) -> None:
        for runner in self._runners.values():
            runner.close()
        self._runners.clear()


def lines(case: Mapping[str, Any]) -> list[str]:
    """The verdict, as an A/B session file keeps it (none for a case judged before numerics
    were, or that failed before them)."""
    kept = case.get("numerics")
    return [NumericsVerdict(**kept).describe()] if kept else []
