"""A copy of the variables on every device, gradients all-reduced (MirroredStrategy).

The all-reduce algorithm is part of the case: NCCL on GPUs, hierarchical copy, reduction to one
device, or the collective ring (the default on CPU, where NCCL has no kernel).
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from tfperf.worker.strategies import StrategySettings


def algorithm(devices: list[str], settings: StrategySettings) -> str:
    if settings.all_reduce != "auto":
        return settings.all_reduce
    return "nccl" if all("GPU" in d.upper() for d in devices) else "ring"


def _cross_device_ops(name: str) -> Any:
    if name == "ring":
        return None  # MirroredStrategy's own choice on CPU: the collective ring
    return {
        "nccl": tf.distribute.NcclAllReduce,
        "hierarchical_copy": tf.distribute.HierarchicalCopyAllReduce,
        "one_device": tf.distribute.ReductionToOneDevice,
    }[name]()


class Replicated:
    name = "replicated"
    remote_variables = False

    def create(self, devices: list[str], settings: StrategySettings) -> Any:
        if len(devices) < 2:
            raise ValueError(f"replicated needs at least 2 devices, got {len(devices)}")
        chosen = algorithm(devices, settings)
        if chosen == "nccl" and not all("GPU" in d.upper() for d in devices):
            raise ValueError("all-reduce nccl needs GPUs (NCCL has no CPU kernel); valid on CPU: "
                             "ring, hierarchical_copy, one_device")
        return tf.distribute.MirroredStrategy(devices, cross_device_ops=_cross_device_ops(chosen))

    def describe(self, devices: list[str], settings: StrategySettings) -> dict[str, Any]:
        return {"replicas": len(devices), "all_reduce": algorithm(devices, settings)}


STRATEGY = Replicated()
