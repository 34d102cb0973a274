"""A workload that compiles part of its loss with XLA itself: an `xla=off` case of it runs XLA
all the same, which the suite must catch rather than report as a non-XLA figure."""

from typing import Any

import tensorflow as tf
from _tiny import TinyCNN


@tf.function(jit_compile=True)  # type: ignore[untyped-decorator]
def _compiled_cross_entropy(labels: tf.Tensor, logits: tf.Tensor) -> tf.Tensor:
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


class HiddenXla(TinyCNN):
    name = "hidden_xla"

    def loss(self, labels: tf.Tensor, outputs: Any) -> tf.Tensor:
        return _compiled_cross_entropy(labels, outputs)


WORKLOAD = HiddenXla()
