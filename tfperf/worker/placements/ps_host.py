"""parameter_server with its variables on the host CPU: a choice of the strategy (see
tfperf.worker.strategies.parameter_server); the model's layers stay where the strategy runs them."""

from __future__ import annotations

from typing import Any


class PsHost:
    name = "ps_host"

    def assign(self, model: Any, workload: Any, devices: list[str]) -> dict[str, str]:
        return {}


PLACEMENT = PsHost()
