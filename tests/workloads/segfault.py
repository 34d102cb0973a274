"""Kills its own process with a real segmentation fault: nothing can be reported."""

import ctypes
from typing import Any

from _tiny import TinyCNN

from tfperf.workload import ModelConfig


class Segfault(TinyCNN):
    name = "segfault"

    def build_model(self, config: ModelConfig) -> Any:
        return ctypes.string_at(0)  # reads address 0


WORKLOAD = Segfault()
