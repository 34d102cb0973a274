"""Its loss does not depend on the weights, so it cannot fall."""

from typing import Any

import tensorflow as tf
from _tiny import TinyCNN


class FlatLoss(TinyCNN):
    name = "flat_loss"

    def loss(self, labels: tf.Tensor, outputs: Any) -> tf.Tensor:
        return 0.0 * tf.reduce_sum(outputs, axis=-1) + 1.0


WORKLOAD = FlatLoss()
