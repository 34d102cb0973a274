"""Keras layers the workloads share, written for speed where Keras' own are slow."""

from __future__ import annotations

from typing import Any

import keras
import tensorflow as tf


class FusedBatchNorm(keras.layers.Layer):  # type: ignore[misc]
    """Batch normalisation on TensorFlow's fused kernel.

    Keras 3's BatchNormalization composes moments and arithmetic from separate ops; on a 2-core
    CPU that costs ResNet-20 about a third of its step time (see ../shared/TF-NOTES.md). The
    fused kernel also updates the moving averages itself (`exponential_avg_factor`), so training
    is one forward and one backward kernel per layer.
    """

    def __init__(self, data_format: str, momentum: float = 0.9, epsilon: float = 1e-3,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_format = data_format
        self.momentum = momentum
        self.epsilon = epsilon
        self.axis = 1 if data_format == "NCHW" else -1

    def build(self, input_shape: tuple[int, ...]) -> None:
        channels = (int(input_shape[self.axis]),)
        self.gamma = self.add_weight(shape=channels, initializer="ones", name="gamma")
        self.beta = self.add_weight(shape=channels, initializer="zeros", name="beta")
        self.moving_mean = self.add_weight(
            shape=channels, initializer="zeros", trainable=False, name="moving_mean"
        )
        self.moving_variance = self.add_weight(
            shape=channels, initializer="ones", trainable=False, name="moving_variance"
        )

    def call(self, x: tf.Tensor, training: bool = False) -> tf.Tensor:
        # The kernel wants float32 scale and offset whatever the activations' dtype.
        gamma = tf.cast(self.gamma, tf.float32)
        beta = tf.cast(self.beta, tf.float32)
        if training:
            y, mean, variance = tf.compat.v1.nn.fused_batch_norm(
                x, gamma, beta,
                mean=self.moving_mean, variance=self.moving_variance,
                epsilon=self.epsilon, data_format=self.data_format, is_training=True,
                exponential_avg_factor=1.0 - self.momentum,
            )
            self.moving_mean.assign(mean)
            self.moving_variance.assign(variance)
            return y
        y, _, _ = tf.compat.v1.nn.fused_batch_norm(
            x, gamma, beta,
            mean=self.moving_mean, variance=self.moving_variance,
            epsilon=self.epsilon, data_format=self.data_format, is_training=False,
        )
        return y


def keras_data_format(data_format: str) -> str:
    return "channels_first" if data_format == "NCHW" else "channels_last"
