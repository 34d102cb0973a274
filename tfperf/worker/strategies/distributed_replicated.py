"""Several worker processes, each replicating over its own devices, gradients all-reduced
across all of them (MultiWorkerMirroredStrategy): `replicated` across machines.

Every worker runs the same training program; the cluster resolver says where the others are.
The all-reduce is part of the case: NCCL on GPUs, the collective ring otherwise.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from tfperf.worker.strategies import StrategySettings
from tfperf.worker.strategies.replicated import algorithm

# MultiWorkerMirroredStrategy's collectives: NCCL or the ring (no hierarchical copy).
_IMPLEMENTATIONS = ("auto", "nccl", "ring")


class DistributedReplicated:
    name = "distributed_replicated"
    remote_variables = False

    def create(self, devices: list[str], settings: StrategySettings) -> Any:
        if settings.resolver is None or settings.workers < 2:
            raise ValueError("distributed_replicated needs a cluster of at least 2 workers")
        if settings.all_reduce not in _IMPLEMENTATIONS:
            raise ValueError(f"distributed_replicated: no all-reduce {settings.all_reduce!r}; "
                             f"valid: {', '.join(_IMPLEMENTATIONS)}")
        chosen = algorithm(devices, settings)
        implementation = {"nccl": tf.distribute.experimental.CommunicationImplementation.NCCL,
                          "ring": tf.distribute.experimental.CommunicationImplementation.RING}
        # Must run before TensorFlow's runtime starts: it configures the collectives.
        return tf.distribute.MultiWorkerMirroredStrategy(
            cluster_resolver=settings.resolver,
            communication_options=tf.distribute.experimental.CommunicationOptions(
                implementation=implementation[chosen]))

    def describe(self, devices: list[str], settings: StrategySettings) -> dict[str, Any]:
        return {"replicas": settings.workers * len(devices), "workers": settings.workers,
                "all_reduce": algorithm(devices, settings)}


STRATEGY = DistributedReplicated()
