"""One device, no distribution: TensorFlow's default strategy, which adds nothing to the step."""

from __future__ import annotations

from typing import Any

import tensorflow as tf


class Single:
    name = "single"

    def create(self, devices: list[str]) -> Any:
        if len(devices) != 1:
            raise ValueError(f"single runs on one device, got {len(devices)}")
        return tf.distribute.get_strategy()


STRATEGY = Single()
