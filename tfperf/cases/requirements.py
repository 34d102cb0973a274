"""Why a valid case cannot run here: missing devices, or a value not implemented yet.

Each reason says what is missing, so a skipped case is never mistaken for a pass.
"""

from __future__ import annotations

from dataclasses import replace

from tfperf.cases.matrix import Case
from tfperf.ground import registry
from tfperf.ground.machine import Machine

# Grow as the harness grows; a value missing here is declared in the matrix but skipped.
IMPLEMENTED_PRECISIONS = frozenset({"fp32", "mixed_bf16", "mixed_fp16"})


# --perf-virtual-devices: which device kinds may be split into logical devices.
VIRTUAL_POLICIES = {"off": frozenset(), "cpu": frozenset({"cpu"}), "all": frozenset({"cpu", "gpu"})}


def with_devices(case: Case, machine: Machine, policy: str) -> Case:
    """The case as it will run here: on logical devices where the machine has fewer physical
    devices than it needs, at least one, and the policy allows splitting that kind."""
    have = machine.device_count(case.device_kind)
    if have < case.device_count and have >= 1 and case.device_kind in VIRTUAL_POLICIES[policy]:
        return replace(case, virtual=True)
    return case


def _devices(case: Case, machine: Machine) -> str | None:
    have = machine.device_count(case.device_kind)
    need = 1 if case.virtual else case.device_count
    if need <= have:
        return None
    if case.device_kind == "gpu":
        plural = "GPU" if need == 1 else "GPUs"
        why = f" ({machine.gpu_unavailable_reason})" if machine.gpu_unavailable_reason else ""
        split = " (--perf-virtual-devices=all splits one GPU)" if have else ""
        return f"needs {need} {plural}, found {have}{why}{split}"
    return (f"needs {need} CPU devices, found {have} (--perf-virtual-devices=cpu splits the CPU "
            "into logical devices)")


def _implemented(case: Case) -> str | None:
    if case.strategy not in registry.implemented("strategies"):
        return f"variable strategy {case.strategy} is not implemented yet"
    if case.input not in registry.implemented("pipelines"):
        return f"input pipeline {case.input} is not implemented yet"
    if case.placement not in registry.implemented("placements"):
        return f"placement {case.placement} is not implemented yet"
    if case.precision not in IMPLEMENTED_PRECISIONS:
        return f"precision {case.precision} is not implemented yet"
    if case.strategy == "parameter_server" and case.workers > 1:
        if case.device_count > 1 and case.device_kind == "cpu":
            return ("parameter_server across processes: TensorFlow's ParameterServerStrategy "
                    "replicates a worker over its GPUs only; a CPU worker is one replica")
        if case.device_count > 1:
            return ("parameter_server across processes: workers with several GPUs are not "
                    "implemented yet (one replica per worker)")
    return None


def _instructions(case: Case, machine: Machine) -> str | None:
    if case.device_kind == "cpu" and not machine.cpu_avx512 and \
            case.precision == "mixed_bf16" and case.data_format == "NCHW":
        return ("mixed_bf16 in NCHW on a CPU without AVX-512: TensorFlow's oneDNN kernels run "
                "bfloat16 only with it, and the Eigen ones it falls back to compute convolution "
                "gradients in NHWC only")
    return None


def skip_reason(case: Case, machine: Machine) -> str | None:
    if machine.tensorflow == "none":
        return "TensorFlow is not installed"
    return _devices(case, machine) or _implemented(case) or _instructions(case, machine)
