"""How long a case will take, before it runs: from its own history where it has some, else
from a stated model. And the runner a plan is made for, which need not be this machine.

History: the median wall time (start to finish) of the case's past runs on this machine key.

The model, per case: start-up + compile + (warm-up and measured rounds) x steps x step time +
the yardstick bursts, where step time = FLOPs of a step / the device's effective training rate.

- FLOPs per example of each workload at full size: counted from its traced step graph, as the
  suite counts them for MFU (see `flops_census`); a workload not counted yet is taken at
  ResNet-50's.
- Effective training rate: what ResNet-50 v1.5 (224x224, 12.3 GFLOP per trained image: 3 x
  4.1 GFLOP forward) reaches on the device, from NVIDIA's published TensorFlow training
  throughput on one GPU (DeepLearningExamples, TensorFlow/Classification/ConvNets/resnet50v1.5,
  20.06 container, with XLA): A100 40GB 909 img/s TF32 and 2,375 img/s mixed precision; V100
  16GB 412 and 1,270. H100 is not in those tables: it is assumed at twice the A100 (an
  assumption, not a measurement). Several devices are assumed to scale at 90% (the tables show
  7.3-7.7x on 8 GPUs). Other workloads are assumed to reach ResNet-50's FLOP/s: their estimate
  is the FLOPs they do at ResNet-50's pace.
- A 2-core CPU (this project's CI machines): about 70 GFLOP/s effective in fp32 (ResNet-20
  tiny trains at 590 img/s with 0.12 GFLOP per image on them).
- Start-up 20 s (a worker: TensorFlow's import, the model, the input) plus 10 s a further
  worker task; compile 10 s without XLA, 40 s with it; each of the tier's measured rounds
  is preceded by a yardstick burst of 0.1 s.
- An A/B case (tfperf.ab) keeps no history of wall times and is modelled at its longest: its
  duets' workers start at once (one start-up) and each warms up, then MAX pairs of two turns,
  each turn rounds of about the turn's length, after a yardstick burst every
  `--perf-ab-yardstick-every` pairs, and every duet that
  takes over in a relay starts (its share of the start-up) and warms up while the others
  wait. It errs long: on the 2-core AVX-512 EPYC resnet20 tiny is modelled at 7 minutes for
  448 pairs, where an A/A case that said `same` at 448 took 183 s, its 24 relays 60 s.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from tfperf.cases.matrix import Case
from tfperf.ground.gpu_models import RESNET50_IMAGES_PER_SEC
from tfperf.ground.machine import Machine
from tfperf.ground.tiers import Measurement
from tfperf.options.ab_settings import ABSettings
from tfperf.storage.session_files import Run

RESNET50_FLOPS_PER_EXAMPLE = 12.3e9
CPU_FLOPS_PER_SEC = 70e9
SCALING = 0.9
STARTUP_S = 20.0
TASK_STARTUP_S = 10.0
COMPILE_S = {"off": 10.0, "auto": 40.0, "jit": 40.0}
YARDSTICK_S = 0.1


def _gpu_model(machine: Machine) -> str | None:
    if not machine.gpus:
        return None
    name = machine.gpus[0].name.upper()
    return next((m for m in RESNET50_IMAGES_PER_SEC if m in name), "A100")


@dataclass(frozen=True)
class Estimator:
    machine: Machine
    measurement: Measurement
    batch_size: Callable[[Case], int]  # per device, at the tier's size
    flops_per_example: Mapping[str, float]  # per workload (see flops_census)
    history_s: Mapping[str, list[float]]  # case id -> past wall times on this machine key
    ab: ABSettings | None = None  # an A/B session's settings, None in any other session

    def device_rate(self, case: Case) -> float:
        """Training FLOP/s of one of the case's devices."""
        model = _gpu_model(self.machine)
        if case.device_kind == "cpu" or model is None:
            return CPU_FLOPS_PER_SEC
        fp32, mixed = RESNET50_IMAGES_PER_SEC[model]
        rate = fp32 if case.precision == "fp32" else mixed
        return rate * RESNET50_FLOPS_PER_EXAMPLE

    def modelled(self, case: Case) -> float:
        m = self.measurement
        devices = case.device_count * case.workers
        # No count, or none to count (a memory-bound workload has no matrix products): taken
        # at ResNet-50's, which overestimates rather than overrun the budget.
        per_example = self.flops_per_example.get(case.workload) or RESNET50_FLOPS_PER_EXAMPLE
        examples = self.batch_size(case) * devices
        step_s = per_example * examples / (self.device_rate(case) * devices *
                                           (SCALING if devices > 1 else 1.0))
        if case.virtual:  # logical devices share one physical device
            step_s *= case.device_count
        start = STARTUP_S + TASK_STARTUP_S * (case.workers - 1) + COMPILE_S[case.xla]
        if self.ab is not None:
            ab = self.ab
            warmup_s = 2 * m.warmup_rounds * m.steps_per_round * step_s  # a duet's
            turn_s = max(ab.turn_s, m.steps_per_round * step_s)
            # The duets that take over, each started and warmed up while the others wait. The
            # first start-up starts every duet's workers at once; a relay starts one duet's.
            relays = ab.relays(ab.max_pairs)
            return (start + ab.duets * warmup_s + relays * (start / ab.duets + warmup_s)
                    + ab.max_pairs * 2 * (turn_s + YARDSTICK_S / ab.yardstick_every))
        steps = (m.warmup_rounds + m.rounds) * m.steps_per_round
        return start + steps * step_s + m.rounds * YARDSTICK_S

    def seconds(self, case: Case) -> tuple[float, str]:
        """The estimate and where it comes from: `history` or `model`."""
        past = self.history_s.get(case.id) if self.ab is None else None
        if past:
            return statistics.median(past), "history"
        return self.modelled(case), "model"


def wall_times(runs: Iterable[Run]) -> dict[str, list[float]]:
    """Past wall times per case id, from the runs kept on this runner."""
    found: dict[str, list[float]] = {}
    for run in runs:
        if run.wall_s:
            found.setdefault(run.case_id, []).append(run.wall_s)
    return found
