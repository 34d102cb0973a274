"""Trains like tinycnn, but the cluster's worker 1 exits in the middle of the measured rounds
(after its 12th step): its peer is left waiting in an all-reduce that never completes."""

import json
import os
from typing import Any

import tensorflow as tf
from _tiny import TinyCNN

STEPS_BEFORE_DYING = 12


def _task_index() -> int:
    return int(json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {}).get("index", 0))


class DiesInCluster(TinyCNN):
    name = "dies_in_cluster"

    def __init__(self) -> None:
        self.steps = 0

    def _count(self) -> float:
        self.steps += 1
        if _task_index() == 1 and self.steps > STEPS_BEFORE_DYING:
            os._exit(3)
        return 0.0

    def loss(self, labels: tf.Tensor, outputs: Any) -> tf.Tensor:
        tick = tf.numpy_function(self._count, [], tf.float64)
        return super().loss(labels, outputs) + tf.cast(tick, tf.float32)


WORKLOAD = DiesInCluster()
