"""Never finishes building: only the case's timeout can end it."""

import time
from typing import Any

from _tiny import TinyCNN

from tfperf.workload import ModelConfig


class Hangs(TinyCNN):
    name = "hangs"

    def build_model(self, config: ModelConfig) -> Any:
        time.sleep(3600)


WORKLOAD = Hangs()
