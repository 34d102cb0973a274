"""ResNet-20 for 32x32x3 images and 10 classes: the CIFAR-10 network of the seeds.

He et al. (2016), section 4.2: a 3x3 stem, three stages of three basic blocks with 16, 32 and
64 filters, global average pooling and a dense classifier. Stage changes use 1x1 projection
shortcuts, as tf_cnn_benchmarks' CIFAR ResNets do.
"""

from __future__ import annotations

from typing import Any

import keras
import numpy as np
import tensorflow as tf

from tfperf.layers import FusedBatchNorm, keras_data_format, output_dtype
from tfperf.synthetic import learnable_images
from tfperf.tiers import Tier
from tfperf.workload import ModelConfig

CLASSES = 10
STAGES = ((16, 1), (32, 2), (64, 2))
BLOCKS_PER_STAGE = 3


def _conv(filters: int, kernel: int, stride: int, data_format: str) -> keras.layers.Conv2D:
    # No bias: the batch norm that follows has its own offset.
    return keras.layers.Conv2D(
        filters, kernel, stride, padding="same", use_bias=False,
        data_format=keras_data_format(data_format), kernel_initializer="he_normal",
    )


def _block(x: Any, filters: int, stride: int, data_format: str) -> Any:
    channel_axis = 1 if data_format == "NCHW" else -1
    shortcut = x
    y = _conv(filters, 3, stride, data_format)(x)
    y = keras.layers.ReLU()(FusedBatchNorm(data_format)(y))
    y = _conv(filters, 3, 1, data_format)(y)
    y = FusedBatchNorm(data_format)(y)
    if stride != 1 or x.shape[channel_axis] != filters:
        shortcut = FusedBatchNorm(data_format)(_conv(filters, 1, stride, data_format)(x))
    return keras.layers.ReLU()(y + shortcut)


def image_shape(data_format: str) -> tuple[int, int, int]:
    return (3, 32, 32) if data_format == "NCHW" else (32, 32, 3)


class ResNet20:
    name = "resnet20"
    data_formats = ("NHWC", "NCHW")
    precisions = ("fp32", "mixed_bf16", "mixed_fp16")
    towers = False
    tier = Tier.SMOKE
    batch_sizes = {"tiny": 64, "full": 128}

    def build_model(self, config: ModelConfig) -> keras.Model:
        fmt = config.data_format
        inputs = keras.Input(image_shape(fmt))
        x = _conv(16, 3, 1, fmt)(inputs)
        x = keras.layers.ReLU()(FusedBatchNorm(fmt)(x))
        for filters, stride in STAGES:
            for block in range(BLOCKS_PER_STAGE):
                x = _block(x, filters, stride if block == 0 else 1, fmt)
        x = keras.layers.GlobalAveragePooling2D(data_format=keras_data_format(fmt))(x)
        # Logits in full precision whatever the policy, so the loss is too.
        logits = keras.layers.Dense(CLASSES, dtype=output_dtype())(x)
        return keras.Model(inputs, logits, name=self.name)

    def make_batches(self, config: ModelConfig, count: int) -> tuple[np.ndarray, np.ndarray]:
        return learnable_images(config, count, CLASSES, 32)

    def loss(self, labels: tf.Tensor, outputs: tf.Tensor) -> tf.Tensor:
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, outputs)


WORKLOAD = ResNet20()
