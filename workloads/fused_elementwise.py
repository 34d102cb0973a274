"""The seeds' XLA fusion example, `reduce_sum(x + y * z)`, as a training step that updates x.

Without XLA TensorFlow runs the slices, the multiply, the add and the sum as separate kernels
and writes each result to memory. The seeds' point is that XLA fuses them into one pass over y
and z. XLA:CPU in TensorFlow 2.21 fuses the slices, the multiply and the add into one loop but
hands the sum to a kernel of its own (YNNPACK), so `x + y * z` is written once and read back:
about 160 MiB moved a tiny step for the 84 MiB counted below, which would hold the CPU's
fraction of the copy rate near 52% even with every kernel at the copy rate (the plan is in the
files `XLA_FLAGS=--xla_dump_to=DIR` writes). The step is memory-bound, so it is judged by
achieved bytes/s against the device's copy rate measured in the same session, not by MFU (it
has no matrix products).

Each example is one row of y and z; x is the trainable vector they are combined with. The
objective is the sum of squares of `x + y * z`: bounded below, so that its loss falls towards a
floor as SGD moves x to minus the rows' mean product, instead of running to minus infinity as
the plain sum did (416 to -1.22e7 in a session: issue 52). The square is one more elementwise
operation in the same fused loop. Version 2: runs of the unbounded objective are not its
history.
"""

from __future__ import annotations

from typing import Any

import keras
import numpy as np
import tensorflow as tf

from tfperf.workload import ModelConfig, Tier

FLOAT32_BYTES = 4
# Elements per row: large enough that every tensor leaves the caches (tiny: 4 MiB a row).
ELEMENTS = {"tiny": 1 << 20, "full": 1 << 22}


class AddMultiply(keras.layers.Layer):  # type: ignore[misc]
    """x + y * z for a trainable x and inputs (y, z) stacked on axis 1."""

    def build(self, input_shape: tuple[int, ...]) -> None:
        self.x = self.add_weight(shape=(int(input_shape[-1]),), initializer="zeros", name="x")

    def call(self, yz: tf.Tensor) -> tf.Tensor:
        return self.x + yz[:, 0] * yz[:, 1]


class FusedElementwise:
    name = "fused_elementwise"
    version = 2  # 2: a bounded objective (1: the plain sum)
    data_formats = ("NHWC",)  # no layout to choose: the matrix's default value
    precisions = ("fp32", "mixed_bf16", "mixed_fp16")
    towers = False
    tier = Tier.SMOKE
    batch_sizes = {"tiny": 8, "full": 32}
    smoke_matrix = False

    def build_model(self, config: ModelConfig) -> keras.Model:
        inputs = keras.Input((2, ELEMENTS[config.size]))
        return keras.Model(inputs, AddMultiply(name="add_multiply")(inputs), name=self.name)

    def optimizer(self, config: ModelConfig) -> keras.optimizers.Optimizer:
        return keras.optimizers.SGD(0.05, momentum=0.9)

    def make_batches(self, config: ModelConfig, count: int) -> tuple[np.ndarray, np.ndarray]:
        rng = np.random.default_rng(config.seed)
        # Centred on 1, so that the products have a mean for x to learn (about 1), and the
        # loss falls by more than half from its first steps (E[(yz)^2] 1.56 to Var(yz) 0.56).
        yz = 1 + 0.5 * rng.standard_normal((count, config.batch_size, 2, ELEMENTS[config.size]),
                                           dtype=np.float32)
        return yz, np.zeros((count, config.batch_size), np.float32)  # no labels

    def loss(self, labels: Any, outputs: tf.Tensor) -> tf.Tensor:
        # Per element, so that SGD's step on each of x's elements is of order one.
        return tf.reduce_sum(tf.square(tf.cast(outputs, tf.float32)), axis=-1)

    def bytes_per_example(self, config: ModelConfig) -> float:
        """The bytes the step needs, as MFU counts the model's FLOPs and not what the kernels
        execute: one fused pass reads the example's y and z; per step, x is read by the
        forward pass and by SGD with momentum, which also reads and writes its velocity and
        writes x: about five vectors a step, shared by the batch."""
        elements = ELEMENTS[config.size]
        return FLOAT32_BYTES * elements * (2 + 5 / config.batch_size)


WORKLOAD = FusedElementwise()
