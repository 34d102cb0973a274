"""Every op on the case's device(s) as the strategy places them: no model parallelism."""

from __future__ import annotations

from typing import Any


class Default:
    name = "default"

    def assign(self, model: Any, workload: Any, devices: list[str]) -> dict[str, str]:
        return {}


PLACEMENT = Default()
