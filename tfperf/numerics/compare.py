"""XLA equivalence, host side: what one training arm is asked to do and how two arms compare.

An arm trains a workload from given initial weights on given batches for a few steps and
saves, as .npz (read without pickle), the loss at every step, the gradients at the first step
and the weights after the last. Two arms agree when every loss, every variable's gradient and
every variable's final value differ by less than the dtype's tolerance (tfperf/numerics/tolerances.py),
as a norm-wise relative error, and nothing is NaN or infinite.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from tfperf.numerics.tolerances import Tolerance

# Test-only numerical faults (tfperf/worker/xla_arms/numeric_faults.py), for proving that
# the check can fail.
FAULTS = {
    "scale_gradient": "gradients scaled by 1.25, loss value unchanged",
    "drop_term": "the last example's term dropped from the loss",
    "epsilon": "normalisation epsilons multiplied by 100",
    "nan": "the loss made NaN",
}


@dataclass(frozen=True)
class ArmSpec:
    """One training arm; JSON-able so that it crosses to the worker and into a repro command."""

    workload: str
    size: str
    batch_size: int
    data_format: str
    precision: str
    seed: int
    steps: int
    xla: str  # off, auto or jit
    device: str = "/device:CPU:0"
    # Examples reversed within each batch: the same maths in another order (the noise floor).
    permute: bool = False
    fault: str | None = None  # tfperf.worker.xla_arms.numeric_faults; test-only
    # Test-only: the loss (and so every gradient) multiplied by 1 + perturb: the A/B numerics
    # check's injected change (--perf-inject-numerics).
    perturb: float = 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> ArmSpec:
        return cls(**json.loads(text))

    def reference(self) -> ArmSpec:
        """The non-XLA arm this one is compared with."""
        return replace(self, xla="off", fault=None, permute=False, perturb=0.0)


@dataclass
class Trajectory:
    losses: np.ndarray
    names: list[str]
    initial: list[np.ndarray]
    gradients: list[np.ndarray]
    weights: list[np.ndarray]
    # The batches it trained on (features, labels; batch axis second), as made: another arm
    # started from this one's weights trains on exactly these.
    batches: tuple[np.ndarray, np.ndarray]

    @classmethod
    def load(cls, path: Path) -> Trajectory:
        with np.load(path, allow_pickle=False) as data:
            count = int(data["count"])
            return cls(
                losses=data["losses"],
                names=[str(n) for n in data["names"]],
                initial=[data[f"initial_{i}"] for i in range(count)],
                gradients=[data[f"gradient_{i}"] for i in range(count)],
                weights=[data[f"weight_{i}"] for i in range(count)],
                batches=(data["batch_features"], data["batch_labels"]),
            )


def save(path: Path, losses: list[float], names: list[str], initial: list[np.ndarray],
         gradients: list[np.ndarray], weights: list[np.ndarray],
         batches: tuple[np.ndarray, np.ndarray]) -> None:
    arrays = {"losses": np.asarray(losses, dtype=np.float64), "names": np.asarray(names),
              "count": np.asarray(len(names)), "batch_features": batches[0],
              "batch_labels": batches[1]}
    for i, (start, grad, end) in enumerate(zip(initial, gradients, weights, strict=True)):
        arrays[f"initial_{i}"] = start
        arrays[f"gradient_{i}"] = grad
        arrays[f"weight_{i}"] = end
    np.savez(path, **arrays)  # type: ignore[arg-type]


def _identical(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    """Bit for bit: the same dtypes, shapes and bytes (NaN payloads included)."""
    return len(a) == len(b) and all(x.dtype == y.dtype and x.shape == y.shape
                                    and x.tobytes() == y.tobytes() for x, y in zip(a, b, strict=True))


def same_start(a: Trajectory, b: Trajectory) -> bool:
    """Whether two arms started from exactly the same weights."""
    return a.names == b.names and _identical(a.initial, b.initial)


def same_batches(a: Trajectory, b: Trajectory) -> bool:
    """Whether two arms trained on exactly the same batches."""
    return _identical(list(a.batches), list(b.batches))


def relative_error(candidate: np.ndarray, reference: np.ndarray) -> float:
    """||candidate - reference|| / ||reference||, in float64; an all-zero reference compares
    absolutely."""
    a = np.asarray(candidate, dtype=np.float64)
    b = np.asarray(reference, dtype=np.float64)
    scale = float(np.linalg.norm(b))
    return float(np.linalg.norm(a - b)) / (scale if scale > 0 else 1.0)


@dataclass
class Differences:
    """Norm-wise relative errors over the whole model (all variables as one vector, so that a
    variable whose gradient is a sum that nearly cancels cannot dominate), with the variable
    that contributes most named for diagnosis."""

    loss: float = 0.0
    loss_step: int = 0
    gradients: float = 0.0
    gradients_at: str = ""
    weights: float = 0.0
    weights_at: str = ""
    non_finite: list[str] = field(default_factory=list)


def _non_finite(label: str, trajectory: Trajectory) -> list[str]:
    found = []
    if not np.all(np.isfinite(trajectory.losses)):
        step = int(np.argmin(np.isfinite(trajectory.losses)))
        found.append(f"{label} loss is {trajectory.losses[step]} at step {step + 1}")
    for kind, arrays in (("gradient", trajectory.gradients), ("weight", trajectory.weights)):
        for name, array in zip(trajectory.names, arrays, strict=True):
            if not np.all(np.isfinite(array)):
                found.append(f"{label} {kind} of {name} is not finite")
                break
    return found


def _model_error(names: list[str], candidate: list[np.ndarray],
                 reference: list[np.ndarray]) -> tuple[float, str]:
    squared = [float(np.sum((np.asarray(a, np.float64) - np.asarray(b, np.float64)) ** 2))
               for a, b in zip(candidate, reference, strict=True)]
    scale = float(np.sqrt(sum(float(np.sum(np.asarray(b, np.float64) ** 2)) for b in reference)))
    worst = int(np.argmax(squared)) if squared else 0
    error = float(np.sqrt(sum(squared))) / (scale if scale > 0 else 1.0)
    return error, names[worst] if names else ""


def differences(reference: Trajectory, candidate: Trajectory,
                labels: tuple[str, str] = ("reference", "XLA arm")) -> Differences:
    if reference.names != candidate.names:
        raise ValueError(f"the arms built different models: {reference.names[:3]}... vs "
                         f"{candidate.names[:3]}...")
    found = Differences(non_finite=_non_finite(labels[0], reference)
                        + _non_finite(labels[1], candidate))
    if found.non_finite:
        return found
    for step, (a, b) in enumerate(zip(candidate.losses, reference.losses, strict=True)):
        error = relative_error(np.asarray(a), np.asarray(b))
        if error > found.loss:
            found.loss, found.loss_step = error, step + 1
    found.gradients, found.gradients_at = _model_error(
        reference.names, candidate.gradients, reference.gradients)
    found.weights, found.weights_at = _model_error(
        reference.names, candidate.weights, reference.weights)
    return found


def problems(found: Differences, tolerance: Tolerance) -> list[str]:
    """What is beyond the tolerance, one line each; empty when the arms agree."""
    lines = list(found.non_finite)
    if found.loss > tolerance.loss:
        lines.append(f"loss differs by {found.loss:.3g} (relative) at step {found.loss_step}; "
                     f"tolerance {tolerance.loss:.3g}")
    if found.gradients > tolerance.gradients:
        lines.append(f"first-step gradients differ by {found.gradients:.3g} (norm-wise "
                     f"relative, most in {found.gradients_at}); tolerance "
                     f"{tolerance.gradients:.3g}")
    if found.weights > tolerance.weights:
        lines.append(f"final weights differ by {found.weights:.3g} (norm-wise relative, most "
                     f"in {found.weights_at}); tolerance {tolerance.weights:.3g}")
    return lines
