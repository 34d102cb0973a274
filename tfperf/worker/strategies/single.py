"""One device, no distribution: TensorFlow's default strategy, which adds nothing to the step."""

from __future__ import annotations

from typing import Any

import tensorflow as tf

from tfperf.worker.strategies import StrategySettings


class Single:
    name = "single"
    remote_variables = False

    def create(self, devices: list[str], settings: StrategySettings) -> Any:
        # Several devices only under a model-parallel placement, which spreads one replica.
        return tf.distribute.get_strategy()

    def describe(self, devices: list[str], settings: StrategySettings) -> dict[str, Any]:
        return {"replicas": 1}


STRATEGY = Single()
