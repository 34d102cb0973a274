"""Keras layers the workloads share, written for speed where Keras' own are slow."""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

import keras
import tensorflow as tf

_PENDING: contextvars.ContextVar[list[tuple[Any, tf.Tensor]] | None] = contextvars.ContextVar(
    "pending_updates", default=None)


@contextlib.contextmanager
def deferred_updates() -> Iterator[list[tuple[Any, tf.Tensor]]]:
    """Collect the (variable, new value) updates that layers make during a forward pass
    instead of assigning them. The training step computes forward and gradients in a nested,
    possibly XLA-compiled function; under MirroredStrategy or CentralStorageStrategy an
    aggregated assignment inside it is a cross-replica merge, which neither allows. The step
    returns the values and assigns them outside."""
    pending: list[tuple[Any, tf.Tensor]] = []
    token = _PENDING.set(pending)
    try:
        yield pending
    finally:
        _PENDING.reset(token)


def _update(variable: Any, value: tf.Tensor) -> None:
    pending = _PENDING.get()
    if pending is None:
        variable.assign(value)
    else:
        pending.append((variable, value))


class FusedBatchNorm(keras.layers.Layer):  # type: ignore[misc]
    """Batch normalisation on TensorFlow's fused kernel.

    Keras 3's BatchNormalization composes moments and arithmetic from separate ops; on a 2-core
    CPU that costs ResNet-20 about a third of its step time (see ../shared/TF-NOTES.md). The
    fused kernel also updates the moving averages itself (`exponential_avg_factor`), so training
    is one forward and one backward kernel per layer.
    """

    def __init__(self, data_format: str, momentum: float = 0.9, epsilon: float = 1e-3,
                 zero_gamma: bool = False, **kwargs: Any) -> None:
        # The kernel takes float32 statistics whatever the activations' dtype: under a mixed
        # policy the variables must not be cast to the compute dtype when read.
        super().__init__(autocast=False, **kwargs)
        self.data_format = data_format
        self.momentum = momentum
        self.epsilon = epsilon
        # A residual branch's last batch norm may start at zero, so each block starts as the
        # identity (Goyal et al. 2017): deep ResNets then train stably from the first step.
        self.gamma_initializer = "zeros" if zero_gamma else "ones"
        self.axis = 1 if data_format == "NCHW" else -1

    def build(self, input_shape: tuple[int, ...]) -> None:
        channels = (int(input_shape[self.axis]),)
        # Statistics and parameters in float32 under every mixed policy (the kernel's scale
        # and offset must be float32 for float16 inputs); float64 only for the reference.
        dtype = "float64" if self.compute_dtype == "float64" else "float32"
        self.gamma = self.add_weight(shape=channels, initializer=self.gamma_initializer,
                                     name="gamma", dtype=dtype)
        self.beta = self.add_weight(shape=channels, initializer="zeros", name="beta", dtype=dtype)
        # Assigned outside the compiled step (see deferred_updates), where every strategy can
        # aggregate the replicas' updates: the mean of their batch statistics.
        self.moving_mean = self.add_weight(
            shape=channels, initializer="zeros", trainable=False, name="moving_mean", dtype=dtype,
            aggregation="mean",
        )
        self.moving_variance = self.add_weight(
            shape=channels, initializer="ones", trainable=False, name="moving_variance",
            dtype=dtype, aggregation="mean",
        )

    def call(self, x: tf.Tensor, training: bool = False) -> tf.Tensor:
        if x.dtype == tf.float64:
            return self._float64(x, training)
        # The kernel takes float32 statistics for any activation dtype; the explicit casts hold
        # even where Keras would hand the layer its variables in the compute dtype.
        gamma, beta = tf.cast(self.gamma, tf.float32), tf.cast(self.beta, tf.float32)
        moving_mean = tf.cast(self.moving_mean, tf.float32)
        moving_variance = tf.cast(self.moving_variance, tf.float32)
        if training:
            y, mean, variance = tf.compat.v1.nn.fused_batch_norm(
                x, gamma, beta,
                mean=moving_mean, variance=moving_variance,
                epsilon=self.epsilon, data_format=self.data_format, is_training=True,
                exponential_avg_factor=1.0 - self.momentum,
            )
            _update(self.moving_mean, mean)
            _update(self.moving_variance, variance)
            return y
        y, _, _ = tf.compat.v1.nn.fused_batch_norm(
            x, gamma, beta,
            mean=moving_mean, variance=moving_variance,
            epsilon=self.epsilon, data_format=self.data_format, is_training=False,
        )
        return y

    def _float64(self, x: tf.Tensor, training: bool) -> tf.Tensor:
        """The same maths unfused: the fused kernel has no float64, and a float64 run is the
        reference that XLA equivalence tolerances are measured against."""
        axes = [0, 2, 3] if self.axis == 1 else [0, 1, 2]
        shape = [1, -1, 1, 1] if self.axis == 1 else [1, 1, 1, -1]
        if training:
            mean, variance = tf.nn.moments(x, axes)
            count = tf.cast(tf.size(x) // tf.size(mean), tf.float64)
            factor = 1.0 - self.momentum
            # The fused kernel keeps the unbiased variance in its moving average.
            _update(self.moving_mean, (1 - factor) * self.moving_mean + factor * mean)
            _update(self.moving_variance, (1 - factor) * self.moving_variance
                    + factor * variance * count / (count - 1))
        else:
            mean, variance = tf.convert_to_tensor(self.moving_mean), self.moving_variance
        scale = tf.reshape(self.gamma * tf.math.rsqrt(variance + self.epsilon), shape)
        return (x - tf.reshape(mean, shape)) * scale + tf.reshape(self.beta, shape)


class MaxPool2D(keras.layers.Layer):  # type: ignore[misc]
    """Max pooling in the case's own layout. Keras 3's pooling transposes channels-first
    tensors to channels-last and back at every call; TensorFlow's kernel takes NCHW itself, so
    an NCHW case stays NCHW from input to loss."""

    def __init__(self, size: int, stride: int, data_format: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.size, self.stride, self.data_format = size, stride, data_format

    def call(self, x: tf.Tensor) -> tf.Tensor:
        return tf.nn.max_pool2d(x, self.size, self.stride, "SAME", data_format=self.data_format)


def keras_data_format(data_format: str) -> str:
    return "channels_first" if data_format == "NCHW" else "channels_last"


def output_dtype() -> str:
    """The dtype for logits: the policy's variable dtype (float32 under mixed precision, so
    the loss is computed in full precision; float64 for the float64 reference)."""
    return str(keras.mixed_precision.global_policy().variable_dtype)
