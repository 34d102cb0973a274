"""Trains normally but its loss is NaN."""

from typing import Any

import tensorflow as tf
from _tiny import TinyCNN


class NanLoss(TinyCNN):
    name = "nan_loss"

    def loss(self, labels: tf.Tensor, outputs: Any) -> tf.Tensor:
        return super().loss(labels, outputs) * float("nan")


WORKLOAD = NanLoss()
