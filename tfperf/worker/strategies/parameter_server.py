"""Variables on parameter devices; replicas compute gradients on their share of the data, and
the parameter side aggregates them and applies the update (the seeds' parameter_server).

In one process (workers 1) this is CentralStorageStrategy: the parameter device is the first
compute device, or the host CPU with the `ps_host` placement. Across processes it is
ParameterServerStrategy: a chief (the process that reports) schedules steps on worker tasks
through a ClusterCoordinator, and the variables live on ps tasks. Its workers step
asynchronously, each on its own batches: a scheduled step is one replica's batch.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from tfperf.worker.strategies import StrategySettings


def parameter_device(devices: list[str], settings: StrategySettings) -> str:
    return "/device:CPU:0" if settings.parameter_device == "host" else devices[0]


class ParameterServer:
    name = "parameter_server"
    remote_variables = True

    def create(self, devices: list[str], settings: StrategySettings) -> Any:
        if settings.workers > 1:
            if settings.resolver is None:
                raise ValueError("parameter_server across processes needs a cluster resolver")
            return tf.distribute.experimental.ParameterServerStrategy(settings.resolver)
        if len(devices) < 2:
            raise ValueError(f"parameter_server needs at least 2 devices, got {len(devices)}")
        return tf.distribute.experimental.CentralStorageStrategy(
            compute_devices=devices, parameter_device=parameter_device(devices, settings))

    def describe(self, devices: list[str], settings: StrategySettings) -> dict[str, Any]:
        if settings.workers > 1:
            return {"replicas": 1, "workers": settings.workers, "ps": "ps task"}
        return {"replicas": len(devices),
                "parameter_device": parameter_device(devices, settings)}

    def coordinator(self, strategy: Any) -> Any:
        if not isinstance(strategy, tf.distribute.experimental.ParameterServerStrategy):
            return None
        return tf.distribute.experimental.coordinator.ClusterCoordinator(strategy)


STRATEGY = ParameterServer()
