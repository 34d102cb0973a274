"""Learnable synthetic images that image workloads share."""

from __future__ import annotations

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
