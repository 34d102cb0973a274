"""Why a case ran at the speed it did, in the seeds' terms: was it starved by its input?

The seeds' rule of thumb is "if GPU utilization is below 80%, the application may be input
pipeline bounded". A case is `input_bound` when the rule holds and the pipeline alone (timed
without training, in the same worker) is slower than the step alone consumes batches.
"""

from __future__ import annotations

from typing import Any

BUSY_PERCENT = 80.0  # the seeds' limit on device utilisation


def _utilisation(telemetry: dict[str, Any]) -> float | None:
    """Mean SM utilisation over the case's GPUs during the measured rounds, if NVML had it."""
    means = [figures["sm_utilization_percent"]["mean"] for figures in telemetry.values()
             if isinstance(figures, dict)
             and isinstance(figures.get("sm_utilization_percent"), dict)]
    return sum(means) / len(means) if means else None


def input_bound(device_kind: str, pipeline: float | None, step: float | None,
                telemetry: dict[str, Any]) -> tuple[bool | None, str]:
    """The verdict (None: not decidable) and the evidence it rests on, in one line."""
    if pipeline is None or step is None:
        return None, "no input pipeline: the batches were already on the device"
    rates = f"the pipeline alone gives {pipeline:.4g} examples/s, the step alone takes {step:.4g}"
    slower = pipeline < step
    if device_kind != "gpu":
        # The CPU both feeds and trains: its utilisation says nothing about starvation.
        return slower, f"{rates} (a CPU case: judged on the rates alone)"
    busy = _utilisation(telemetry)
    if busy is None:
        return slower, f"{rates}; GPU utilisation {telemetry.get('unavailable', 'unknown')}"
    return (slower and busy < BUSY_PERCENT,
            f"{rates}; the GPU was busy {busy:.0f}% of the time (limit {BUSY_PERCENT:.0f}%)")
