"""Fails in build_model with an exception the worker can report."""

from typing import Any

from _tiny import TinyCNN

from tfperf.workload import ModelConfig


class Raises(TinyCNN):
    name = "raises"

    def build_model(self, config: ModelConfig) -> Any:
        raise RuntimeError("deliberate failure in build_model")


WORKLOAD = Raises()
