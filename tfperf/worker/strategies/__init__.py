"""Variable strategies: where variables live and how gradients are aggregated.

Each strategy is one module in this package defining `STRATEGY`, an object satisfying
`VariableStrategy`. The registry is the set of modules present: adding a strategy edits no
other file, and a matrix value without a module is skipped as not implemented yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from tfperf.ground import registry


@dataclass(frozen=True)
class StrategySettings:
    """What a case says about its strategy beyond the devices."""

    # replicated: the all-reduce algorithm; auto is NCCL on GPUs and the collective ring on CPU.
    all_reduce: str = "auto"
    # parameter_server: "device" (the first compute device) or "host" (the CPU).
    parameter_device: str = "device"
    # Worker processes, and the cluster resolver that says where they are (None: one process).
    workers: int = 1
    resolver: Any = None


class VariableStrategy(Protocol):
    name: str
    # Variables live on a device other than the replicas' (XLA then needs their values).
    remote_variables: bool

    def create(self, devices: list[str], settings: StrategySettings) -> Any:
        """A tf.distribute.Strategy over `devices` (TensorFlow device names)."""

    def describe(self, devices: list[str], settings: StrategySettings) -> dict[str, Any]:
        """What the case ran with, for its results: replicas and the strategy's own choices."""


@runtime_checkable
class Coordinated(Protocol):
    """A strategy whose steps a coordinator schedules on remote workers (no strategy.run in
    this process's own loop): ParameterServerStrategy across processes."""

    def coordinator(self, strategy: Any) -> Any:
        """The tf.distribute ClusterCoordinator for `strategy`, or None where it has none."""


def available() -> set[str]:
    """Names of the implemented values, without importing TensorFlow."""
    return registry.names(__path__)


def load(name: str) -> VariableStrategy:
    found: VariableStrategy = registry.load(__name__, __path__, name, "STRATEGY", "variable strategy")
    return found
