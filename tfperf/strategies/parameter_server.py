"""Variables on one parameter device; every device computes gradients on its share of the
batch, and the parameter device aggregates them and applies the update (the seeds'
parameter_server, in one process: CentralStorageStrategy). The parameter device is the first
compute device, or the host CPU with the `ps_host` placement."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from tfperf.strategies import StrategySettings


def parameter_device(devices: list[str], settings: StrategySettings) -> str:
    return "/device:CPU:0" if settings.parameter_device == "host" else devices[0]


class ParameterServer:
    name = "parameter_server"
    remote_variables = True

    def create(self, devices: list[str], settings: StrategySettings) -> Any:
        if len(devices) < 2:
            raise ValueError(f"parameter_server needs at least 2 devices, got {len(devices)}")
        return tf.distribute.experimental.CentralStorageStrategy(
            compute_devices=devices, parameter_device=parameter_device(devices, settings))

    def describe(self, devices: list[str], settings: StrategySettings) -> dict[str, Any]:
        return {"replicas": len(devices),
                "parameter_device": parameter_device(devices, settings)}


STRATEGY = ParameterServer()
