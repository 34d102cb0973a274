"""The workload protocol and the discovery of workload modules.

A workload is one module in the workloads folder that defines `WORKLOAD`, an object satisfying
`Workload`. The suite finds it by itself: adding a workload edits no other file. Modules whose
names start with an underscore are helpers, not workloads.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from tfperf.ground.failures import in_one_line
from tfperf.ground.tiers import Tier as Tier  # re-exported: a workload names its tier

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class ModelConfig:
    """What a workload is told about the case it builds for."""

    size: str  # "tiny" or "full"
    batch_size: int
    data_format: str  # "NHWC" or "NCHW"
    seed: int


@runtime_checkable
class Workload(Protocol):
    """Build the model, make learnable data, say what the loss is.

    The harness owns everything else (devices, strategy, XLA, the training loop, timing and
    FLOP counting from the traced graph), so a workload stays a page of model code.
    """

    name: str
    data_formats: tuple[str, ...]
    precisions: tuple[str, ...]
    towers: bool  # two towers that the towers_split placement can put on different devices
    tier: Tier  # the lowest tier that runs this workload
    # Default batch per device, by size; a "size:precision" key overrides it for one precision.
    batch_sizes: Mapping[str, int]
    # True for the reference workload: the smoke tier varies each of its axes one value at a
    # time; for the others it runs only their default case (see matrix.Case.tier).
    smoke_matrix: bool

    def build_model(self, config: ModelConfig) -> Any:
        """A Keras model; called inside the strategy's scope."""

    def optimizer(self, config: ModelConfig) -> Any:
        """A fresh Keras optimizer with the workload's hyperparameters; the harness wraps it
        for loss scaling where the precision needs it."""

    def make_batches(self, config: ModelConfig, count: int) -> tuple[np.ndarray, np.ndarray]:
        """`count` batches of learnable synthetic data: (features, labels), batch axis second."""

    def loss(self, labels: Any, outputs: Any) -> Any:
        """Per-example loss in float32, shape (batch,)."""


@runtime_checkable
class MemoryBound(Protocol):
    """A workload whose speed is bounded by memory traffic, not matrix products: it is judged
    by achieved bytes/s against the device's copy rate instead of MFU."""

    def bytes_per_example(self, config: ModelConfig) -> float:
        """The bytes a fully fused training step must move (read plus write) per example."""


@runtime_checkable
class Towers(Protocol):
    """A workload with independent towers that the towers_split placement puts on different
    devices."""

    def tower_of(self, layer_name: str) -> int | None:
        """The tower a layer belongs to (0, 1, ...), or None for shared layers and the join."""


@runtime_checkable
class Preprocessed(Protocol):
    """A workload whose data is stored in a compact form (uint8 images) and turned into model
    input by preprocessing that the case places on the host or the device."""

    def encode(self, features: np.ndarray) -> np.ndarray:
        """make_batches' features in the form written to TFRecord files."""

    def preprocess(self, stored: Any) -> Any:
        """TensorFlow ops from the stored form to model input (float32)."""


@dataclass(frozen=True)
class WorkloadInfo:
    """What the matrix needs to know about a workload, without touching TensorFlow state."""

    name: str
    path: Path
    data_formats: tuple[str, ...]
    precisions: tuple[str, ...]
    towers: bool
    tier: Tier
    batch_sizes: Mapping[str, int]
    smoke_matrix: bool
    preprocessing: bool  # follows Preprocessed
    # A workload's `version`: raised when a change makes its earlier runs incomparable (its
    # objective, its data), so that its history restarts instead of judging the new against
    # the old. Version 1 adds nothing to a run's fingerprint (runs kept before still match).
    version: int = 1

    def batch_size(self, size: str, precision: str) -> int:
        return self.batch_sizes.get(f"{size}:{precision}", self.batch_sizes[size])


class WorkloadError(Exception):
    """A workload module that cannot be used; the message names the file."""


def load_module(path: Path) -> Workload:
    """Import a workload module by path and return its WORKLOAD."""
    # Workloads may share helper modules (underscore names) from their own folder.
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    module_name = f"tfperf_workloads.{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise WorkloadError(f"{path}: not an importable Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        # As Python's own import does: no half-run module left to be found by its name.
        del sys.modules[module_name]
        # One line that names the file, where a traceback would bury it.
        raise WorkloadError(f"{path}: cannot be imported: {in_one_line(error)}") from error
    workload = getattr(module, "WORKLOAD", None)
    if workload is None:
        raise WorkloadError(f"{path}: defines no WORKLOAD")
    if not isinstance(workload, Workload):
        raise WorkloadError(f"{path}: WORKLOAD does not follow tfperf.workload.Workload")
    return workload


def discover(directory: Path) -> dict[str, WorkloadInfo]:
    """Every workload module in `directory`, by workload name."""
    if not directory.is_dir():
        raise WorkloadError(f"workloads folder {directory} does not exist")
    found: dict[str, WorkloadInfo] = {}
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        workload = load_module(path)
        if workload.name in found:
            raise WorkloadError(
                f"{path}: workload name {workload.name!r} is taken by {found[workload.name].path}"
            )
        found[workload.name] = WorkloadInfo(
            name=workload.name,
            path=path.resolve(),
            data_formats=tuple(workload.data_formats),
            precisions=tuple(workload.precisions),
            towers=bool(workload.towers),
            tier=workload.tier,
            batch_sizes=dict(workload.batch_sizes),
            smoke_matrix=bool(workload.smoke_matrix),
            preprocessing=isinstance(workload, Preprocessed),
            version=int(getattr(workload, "version", 1)),
        )
    if not found:
        raise WorkloadError(f"no workload modules in {directory}")
    return found
