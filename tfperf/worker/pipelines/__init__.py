"""Input pipelines: how a case's batches reach the training step.

Each pipeline is one module in this package defining `PIPELINE`, an object satisfying
`InputPipeline`; the registry is the set of modules present, so adding one edits no other file
(a matrix value without a module is skipped as not implemented yet). A pipeline builds a
`Source` that runs training rounds and can also be timed alone, so that each case says whether
it was input-bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tfperf.ground import registry

if TYPE_CHECKING:
    from tfperf.worker.training.loop import RoundResult, Trainer


@dataclass(frozen=True)
class PipelineContext:
    trainer: Trainer  # its workload, config, strategy and device-resident pool
    preprocess_on_device: bool  # the case's preprocess axis
    cache_dir: Path  # where generated input files live across cases and sessions
    file_layout: str  # "many_small" or "few_large" TFRecord files


class Source(Protocol):
    def round(self, steps: int) -> RoundResult:
        """`steps` training steps fed by this pipeline."""

    def examples_per_sec_alone(self, batches: int) -> float | None:
        """The pipeline's rate with no training attached (None: there is no pipeline)."""


class InputPipeline(Protocol):
    name: str

    def build(self, context: PipelineContext) -> Source:
        """Prepare the input (files, iterators) for one case."""




def available() -> set[str]:
    """Names of the implemented values, without importing TensorFlow."""
    return registry.names(__path__)


def load(name: str) -> InputPipeline:
    found: InputPipeline = registry.load(__name__, __path__, name, "PIPELINE", "input pipeline")
    return found
