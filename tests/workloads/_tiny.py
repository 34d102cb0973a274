"""A tiny CNN that trains in milliseconds; the faulty workloads derive from it."""

from __future__ import annotations

from typing import Any

import keras
import numpy as np
import tensorflow as tf

from tfperf.worker.model.layers import FusedBatchNorm, keras_data_format, output_dtype
from tfperf.worker.model.learnable_images import ImageBytes, learnable_images
from tfperf.workload import ModelConfig, Tier

CLASSES = 4


class TinyCNN(ImageBytes):
    name = "tinycnn"
    data_formats = ("NHWC", "NCHW")
    precisions = ("fp32", "mixed_bf16", "mixed_fp16")
    towers = False
    tier = Tier.SMOKE
    batch_sizes = {"tiny": 32, "full": 32}
    smoke_matrix = True

    def build_model(self, config: ModelConfig) -> keras.Model:
        fmt = keras_data_format(config.data_format)
        shape = (3, 8, 8) if config.data_format == "NCHW" else (8, 8, 3)
        inputs = keras.Input(shape)
        x = keras.layers.Conv2D(8, 3, padding="same", use_bias=False, data_format=fmt)(inputs)
        x = keras.layers.ReLU()(FusedBatchNorm(config.data_format)(x))
        x = keras.layers.GlobalAveragePooling2D(data_format=fmt)(x)
        # Logits in full precision whatever the policy.
        return keras.Model(inputs, keras.layers.Dense(CLASSES, dtype=output_dtype())(x))

    def optimizer(self, config: ModelConfig) -> keras.optimizers.Optimizer:
        return keras.optimizers.SGD(0.05, momentum=0.9)

    def make_batches(self, config: ModelConfig, count: int) -> tuple[np.ndarray, np.ndarray]:
        return learnable_images(config, count, CLASSES, 8, noise=0.5)

    def loss(self, labels: tf.Tensor, outputs: Any) -> tf.Tensor:
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, outputs)
