"""Why a valid case cannot run here: missing devices, or a value not implemented yet.

Each reason says what is missing, so a skipped case is never mistaken for a pass.
"""

from __future__ import annotations

from tfperf import pipelines, strategies
from tfperf.machine import Machine
from tfperf.matrix import Case

# Grow as the harness grows; a value missing here is declared in the matrix but skipped.
IMPLEMENTED_PLACEMENTS = frozenset({"default"})
IMPLEMENTED_PRECISIONS = frozenset({"fp32", "mixed_bf16", "mixed_fp16"})


def _devices(case: Case, machine: Machine) -> str | None:
    have = machine.device_count(case.device_kind)
    need = case.device_count
    if need <= have:
        return None
    if case.device_kind == "gpu":
        plural = "GPU" if need == 1 else "GPUs"
        why = f" ({machine.gpu_unavailable_reason})" if machine.gpu_unavailable_reason else ""
        return f"needs {need} {plural}, found {have}{why}"
    return (f"needs {need} CPU devices, found {have} (logical device splitting is not "
            "implemented yet)")


def _implemented(case: Case) -> str | None:
    if case.strategy not in strategies.available():
        return f"variable strategy {case.strategy} is not implemented yet"
    if case.input not in pipelines.available():
        return f"input pipeline {case.input} is not implemented yet"
    if case.placement not in IMPLEMENTED_PLACEMENTS:
        return f"placement {case.placement} is not implemented yet"
    if case.precision not in IMPLEMENTED_PRECISIONS:
        return f"precision {case.precision} is not implemented yet"
    return None


def skip_reason(case: Case, machine: Machine) -> str | None:
    if machine.tensorflow == "none":
        return "TensorFlow is not installed"
    return _devices(case, machine) or _implemented(case)
