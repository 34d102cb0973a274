"""Batches already on the device, cycled inside the step's graph loop: no input cost at all,
so the figure is the model's own speed (tf_cnn_benchmarks' synthetic data)."""

from __future__ import annotations

from tfperf.worker.pipelines import PipelineContext
from tfperf.worker.training.loop import RoundResult, Trainer


class SyntheticSource:
    def __init__(self, trainer: Trainer) -> None:
        self.trainer = trainer

    def round(self, steps: int) -> RoundResult:
        return self.trainer.run_round(steps)

    def examples_per_sec_alone(self, batches: int) -> float | None:
        return None


class Synthetic:
    name = "synthetic"

    def build(self, context: PipelineContext) -> SyntheticSource:
        return SyntheticSource(context.trainer)


PIPELINE = Synthetic()
