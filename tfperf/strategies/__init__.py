"""Variable strategies: where variables live and how gradients are aggregated.

Each strategy is one module in this package defining `STRATEGY`, an object satisfying
`VariableStrategy`. The registry is the set of modules present: adding a strategy edits no
other file, and a matrix value without a module is skipped as not implemented yet.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Protocol


class VariableStrategy(Protocol):
    name: str

    def create(self, devices: list[str]) -> Any:
        """A tf.distribute.Strategy over `devices` (TensorFlow device names)."""


def available() -> set[str]:
    """Names of the implemented strategies, without importing TensorFlow."""
    return {m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")}


def load(name: str) -> VariableStrategy:
    if name not in available():
        raise KeyError(f"variable strategy {name!r} is not implemented")
    strategy: VariableStrategy = importlib.import_module(f"{__name__}.{name}").STRATEGY
    return strategy
