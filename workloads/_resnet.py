"""ResNet building blocks the ResNet workloads share (a helper module, not a workload).

Convolutions carry no bias (the batch norm after them has its own offset); batch norm is the
fused kernel (tfperf.worker.model.layers.FusedBatchNorm); every tensor stays in the case's data
format from input to pooling, so an NCHW case never transposes per step.
"""

from __future__ import annotations

from typing import Any

import keras
import numpy as np
import tensorflow as tf

from tfperf.worker.model.layers import FusedBatchNorm, keras_data_format, output_dtype
from tfperf.worker.model.learnable_images import ImageBytes, learnable_images
from tfperf.workload import ModelConfig, Tier


def conv(filters: int, kernel: int, stride: int, data_format: str) -> keras.layers.Conv2D:
    return keras.layers.Conv2D(
        filters, kernel, stride, padding="same", use_bias=False,
        data_format=keras_data_format(data_format), kernel_initializer="he_normal",
    )


def conv_bn(x: Any, filters: int, kernel: int, stride: int, data_format: str,
            relu: bool = True, zero_gamma: bool = False) -> Any:
    y = FusedBatchNorm(data_format, zero_gamma=zero_gamma)(
        conv(filters, kernel, stride, data_format)(x))
    return keras.layers.ReLU()(y) if relu else y


def _channels(x: Any, data_format: str) -> int:
    return int(x.shape[1 if data_format == "NCHW" else -1])


def _shortcut(x: Any, filters: int, stride: int, data_format: str) -> Any:
    # A 1x1 projection where the shape changes, as tf_cnn_benchmarks' ResNets do.
    if stride != 1 or _channels(x, data_format) != filters:
        return conv_bn(x, filters, 1, stride, data_format, relu=False)
    return x


def basic_block(x: Any, filters: int, stride: int, data_format: str,
                zero_residual: bool = False) -> Any:
    """Two 3x3 convolutions: the CIFAR ResNets (He et al. 2016, section 4.2)."""
    y = conv_bn(x, filters, 3, stride, data_format)
    y = conv_bn(y, filters, 3, 1, data_format, relu=False, zero_gamma=zero_residual)
    return keras.layers.ReLU()(y + _shortcut(x, filters, stride, data_format))


def bottleneck_block(x: Any, filters: int, stride: int, data_format: str) -> Any:
    """1x1 reduce, 3x3, 1x1 expand (x4). v1.5: the stride sits on the 3x3 convolution, not
    the first 1x1, as NVIDIA's and tf_cnn_benchmarks' ResNet-50 v1.5 do."""
    y = conv_bn(x, filters, 1, 1, data_format)
    y = conv_bn(y, filters, 3, stride, data_format)
    # The residual branch starts at zero: ResNet-50 at small batches trains stably then.
    y = conv_bn(y, 4 * filters, 1, 1, data_format, relu=False, zero_gamma=True)
    return keras.layers.ReLU()(y + _shortcut(x, 4 * filters, stride, data_format))


def classifier(x: Any, classes: int, data_format: str) -> Any:
    x = keras.layers.GlobalAveragePooling2D(data_format=keras_data_format(data_format))(x)
    # Logits in full precision whatever the policy, so the loss is too.
    return keras.layers.Dense(classes, dtype=output_dtype())(x)


def image_shape(size: int, data_format: str) -> tuple[int, int, int]:
    return (3, size, size) if data_format == "NCHW" else (size, size, 3)


def cifar_resnet(name: str, depth: int, data_format: str, classes: int = 10,
                 zero_residual: bool = False) -> keras.Model:
    """ResNet-(6n+2) for 32x32 images: a 3x3 stem, three stages of n basic blocks with 16, 32
    and 64 filters, global average pooling, a dense classifier. With `zero_residual` each
    block's branch starts at zero (its last batch norm's gamma, Goyal et al. 2017)."""
    blocks = (depth - 2) // 6
    inputs = keras.Input(image_shape(32, data_format))
    x = conv_bn(inputs, 16, 3, 1, data_format)
    for filters, stride in ((16, 1), (32, 2), (64, 2)):
        for block in range(blocks):
            x = basic_block(x, filters, stride if block == 0 else 1, data_format,
                            zero_residual)
    return keras.Model(inputs, classifier(x, classes, data_format), name=name)


class CifarResNet(ImageBytes):
    """A CIFAR ResNet workload (10 classes, SGD with momentum) of a given depth."""

    data_formats = ("NHWC", "NCHW")
    precisions = ("fp32", "mixed_bf16", "mixed_fp16")
    towers = False
    tier = Tier.SMOKE
    classes = 10

    def __init__(self, name: str, depth: int, batch_sizes: dict[str, int],
                 smoke_matrix: bool, zero_residual: bool = False) -> None:
        self.name = name
        self.depth = depth
        self.batch_sizes = batch_sizes
        self.smoke_matrix = smoke_matrix
        self.zero_residual = zero_residual

    def build_model(self, config: ModelConfig) -> keras.Model:
        return cifar_resnet(self.name, self.depth, config.data_format, self.classes,
                            self.zero_residual)

    def optimizer(self, config: ModelConfig) -> keras.optimizers.Optimizer:
        return keras.optimizers.SGD(0.05, momentum=0.9)

    def make_batches(self, config: ModelConfig, count: int) -> tuple[np.ndarray, np.ndarray]:
        return learnable_images(config, count, self.classes, 32)

    def loss(self, labels: tf.Tensor, outputs: tf.Tensor) -> tf.Tensor:
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, outputs)
