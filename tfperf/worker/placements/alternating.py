"""The seeds' exaggerated placement: each layer on the other device, in the order the model
runs them, so nearly every activation and gradient crosses between devices."""

from __future__ import annotations

from typing import Any


class Alternating:
    name = "alternating"

    def assign(self, model: Any, workload: Any, devices: list[str]) -> dict[str, str]:
        layers = [layer for layer in model.layers if type(layer).__name__ != "InputLayer"]
        return {layer.name: devices[i % len(devices)] for i, layer in enumerate(layers)}


PLACEMENT = Alternating()
