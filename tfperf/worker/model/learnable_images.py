"""Learnable synthetic images that image workloads share."""

from __future__ import annotations

from typing import Any

import numpy as np

from tfperf.workload import ModelConfig


def learnable_images(config: ModelConfig, count: int, classes: int, size: int,
                     noise: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """`count` batches of size x size x 3 images: one fixed random template per class plus noise.
    Separable, so a model's loss must fall on them; laid out as the config's data format."""
    rng = np.random.default_rng(config.seed)
    templates = rng.standard_normal((classes, size, size, 3), dtype=np.float32)
    labels = rng.integers(0, classes, size=(count, config.batch_size), dtype=np.int32)
    images = templates[labels] + noise * rng.standard_normal(
        (*labels.shape, size, size, 3), dtype=np.float32)
    if config.data_format == "NCHW":
        images = np.ascontiguousarray(images.transpose(0, 1, 4, 2, 3))
    return images, labels


# uint8 storage of the learnable images (values of a few standard deviations around 0).
_PIXEL_SCALE = 32.0
_PIXEL_ZERO = 128.0


class ImageBytes:
    """Preprocessing for image workloads (tfperf.workload.Preprocessed): images are stored as
    uint8, as CIFAR and ImageNet records are, and preprocessing casts and rescales them."""

    def encode(self, features: np.ndarray) -> np.ndarray:
        return np.clip(np.rint(features * _PIXEL_SCALE + _PIXEL_ZERO), 0, 255).astype(np.uint8)

    def preprocess(self, stored: Any) -> Any:
        import tensorflow as tf

        return (tf.cast(stored, tf.float32) - _PIXEL_ZERO) / _PIXEL_SCALE
