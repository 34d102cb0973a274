"""The seeds' DeepCoNN placement: each tower on its own device (model parallelism); the layers
the towers share and the join stay on the first device."""

from __future__ import annotations

from typing import Any

from tfperf.workload import Towers


class TowersSplit:
    name = "towers_split"

    def assign(self, model: Any, workload: Any, devices: list[str]) -> dict[str, str]:
        if not isinstance(workload, Towers):
            raise ValueError(f"{workload.name} has no towers to split")
        assignment = {}
        for layer in model.layers:
            tower = workload.tower_of(layer.name)
            if tower is not None:
                assignment[layer.name] = devices[tower % len(devices)]
        return assignment


PLACEMENT = TowersSplit()
