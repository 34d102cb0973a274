"""Exhausts memory in build_model: asks the allocator for a tensor larger than the machine."""

from typing import Any

import tensorflow as tf
from _tiny import TinyCNN

from tfperf.workload import ModelConfig


class ExhaustsMemory(TinyCNN):
    name = "exhausts_memory"

    def build_model(self, config: ModelConfig) -> Any:
        # 4 TiB of float32: more than any CI machine has; the allocator refuses it.
        hoard = tf.ones([1 << 40], tf.float32)
        return hoard


WORKLOAD = ExhaustsMemory()
