"""Deliberate numerical faults, for proving that the XLA equivalence check can fail.

Test-only: the equivalence property injects one into its XLA arm when asked
(`--perf-xla-fault`), and the A/B numerics check a scaled loss into side B's arm
(`--perf-inject-numerics`), never in a measured case. Each is a change a real compiler bug could
make: a gradient off by a factor, a term of the loss lost, a constant changed, a NaN.
"""

from __future__ import annotations

from typing import Any

import keras
import tensorflow as tf

from tfperf.numerics.compare import FAULTS
from tfperf.workload import ModelConfig, Workload

# As described in tfperf.numerics.compare.FAULTS; large enough to stand out from every dtype's
# tolerance (tfperf/numerics/tolerances.py).
GRADIENT_SCALE = 1.25
EPSILON_FACTOR = 100.0


def _all_layers(layer: Any) -> list[Any]:
    found = [layer]
    for child in getattr(layer, "layers", []):
        found += _all_layers(child)
    return found


class FaultyWorkload:
    """A workload with one fault injected; everything else is the wrapped workload's."""

    def __init__(self, workload: Workload, fault: str) -> None:
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; valid: {', '.join(FAULTS)}")
        self._workload = workload
        self.fault = fault

    def __getattr__(self, name: str) -> Any:
        return getattr(self._workload, name)

    def build_model(self, config: ModelConfig) -> keras.Model:
        model = self._workload.build_model(config)
        if self.fault == "epsilon":
            for layer in _all_layers(model):
                if hasattr(layer, "epsilon"):
                    layer.epsilon *= EPSILON_FACTOR
        return model

    def loss(self, labels: tf.Tensor, outputs: Any) -> tf.Tensor:
        loss = tf.cast(self._workload.loss(labels, outputs), tf.float32)
        if self.fault == "scale_gradient":
            # Same value, gradient times GRADIENT_SCALE.
            return loss + (GRADIENT_SCALE - 1.0) * (loss - tf.stop_gradient(loss))
        if self.fault == "drop_term":
            keep = tf.concat([tf.ones_like(loss[:-1]), tf.zeros_like(loss[-1:])], axis=0)
            return loss * keep
        if self.fault == "nan":
            return loss + float("nan")
        return loss


class ScaledLoss:
    """A workload whose loss, and so every gradient, is multiplied by 1 + `by`: a change of a
    size the A/B numerics check's injection sets in tolerances."""

    def __init__(self, workload: Workload, by: float) -> None:
        self._workload = workload
        self.by = by

    def __getattr__(self, name: str) -> Any:
        return getattr(self._workload, name)

    def loss(self, labels: tf.Tensor, outputs: Any) -> tf.Tensor:
        # In float64: a change of one tolerance (1e-6 of the loss for a small fp32 model) is
        # a few float32 ulps, which a float32 product would round away unevenly.
        loss = tf.cast(self._workload.loss(labels, outputs), tf.float64)
        return tf.cast(loss * (1.0 + self.by), tf.float32)
