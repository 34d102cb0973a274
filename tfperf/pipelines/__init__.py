"""Input pipelines: how a case's batches reach the training step.

Each pipeline is one module in this package defining `PIPELINE`, an object satisfying
`InputPipeline`; the registry is the set of modules present, so adding one edits no other file
(a matrix value without a module is skipped as not implemented yet). A pipeline builds a
`Source` that runs training rounds and can also be timed alone, so that each case says whether
it was input-bound.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from tfperf.training import RoundResult, Trainer


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


FILE_LAYOUTS = ("many_small", "few_large")


def available() -> set[str]:
    """Names of the implemented pipelines, without importing TensorFlow."""
    return {m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")}


def load(name: str) -> InputPipeline:
    if name not in available():
        raise KeyError(f"input pipeline {name!r} is not implemented")
    pipeline: InputPipeline = importlib.import_module(f"{__name__}.{name}").PIPELINE
    return pipeline
