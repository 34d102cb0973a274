"""A result's fingerprint: the hard key that decides which history it belongs to, and the soft
facts that are only shown when they differ.

A result is never compared with a history of another hard key: a driver update is worth
a note in the report, but a different GPU, CUDA or configuration is a different experiment.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tfperf.ground.machine import Machine

# Bump when a change to how cases are measured makes earlier results incomparable.
MEASUREMENT_VERSION = 1

HARD_FIELDS = (
    "gpu_model", "gpu_count", "gpu_memory_bytes", "compute_capability", "cuda", "cudnn",
    "tensorflow", "tensorflow_git", "python", "cpu_model", "cpu_isa", "cpu_cores", "virtual",
    "config",
)
# What a build of TensorFlow brings: its version and commit, and the CUDA and cuDNN it was built
# against. A case's series across builds (build_series.py) is its runs whose hard fingerprints
# agree in everything else.
BUILD_FIELDS = ("tensorflow", "tensorflow_git", "cuda", "cudnn")
SOFT_FIELDS = ("driver", "gpu_max_sm_clock_mhz", "gpu_power_limit_w", "host_cpu", "host",
               "runner", "keras")
# Soft fields a history's runs may lack, kept before they were: a change from none is not one.
NEWER_SOFT_FIELDS = ("keras",)


def case_config(axes: Mapping[str, str], measured: Mapping[str, Any], workload_version: int
                ) -> dict[str, Any]:
    """What a case's fingerprint hashes as its configuration: the axes, how it was measured,
    and its workload's version. Version 1 adds nothing, so that the runs kept before workloads
    had versions still match; a later one starts the case's history afresh."""
    return {**axes, **measured,
            **({"workload_version": workload_version} if workload_version != 1 else {})}


def config_hash(config: Mapping[str, Any]) -> str:
    """A short hash of the case's configuration (axis values, workload, size, batch, steps and
    the harness's measurement settings)."""
    text = json.dumps({**config, "measurement_version": MEASUREMENT_VERSION}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Fingerprint:
    hard: Mapping[str, Any]
    soft: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        text = json.dumps(dict(self.hard), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def series_key(self) -> str:
        """The key of the case's series across builds: the hard key without the build."""
        return series_key(self.hard)

    def hard_differences(self, other: Fingerprint) -> list[str]:
        """`field: history's value -> this result's value` for each hard field that differs."""
        return _differences(other.hard, self.hard, HARD_FIELDS)

    def soft_differences(self, other: Fingerprint) -> list[str]:
        names = tuple(name for name in SOFT_FIELDS
                      if name not in NEWER_SOFT_FIELDS or other.soft.get(name) is not None)
        return _differences(other.soft, self.soft, names)

    def to_json(self) -> dict[str, Any]:
        return {"hard": dict(self.hard), "soft": dict(self.soft)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Fingerprint:
        return cls(dict(data["hard"]), dict(data.get("soft", {})))


def series_key(hard: Mapping[str, Any]) -> str:
    """The hard fingerprint's key without BUILD_FIELDS: the same for one case's runs on one
    kind of machine under any build."""
    text = json.dumps({k: v for k, v in hard.items() if k not in BUILD_FIELDS}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _differences(before: Mapping[str, Any], now: Mapping[str, Any], names: tuple[str, ...]
                 ) -> list[str]:
    return [f"{name}: {before.get(name)!r} -> {now.get(name)!r}"
            for name in names if before.get(name) != now.get(name)]


def of_case(machine: Machine, build: Mapping[str, Any], device_kind: str, virtual: bool,
            config: Mapping[str, Any]) -> Fingerprint:
    """The fingerprint of one case's result. `build` is what the worker's TensorFlow reported
    (version, git hash, CUDA, cuDNN); the GPU facts come from NVML, the CPU's from /proc."""
    gpu = machine.gpus[0] if machine.gpus and device_kind == "gpu" else None
    hard: dict[str, Any] = {
        "gpu_model": gpu.name if gpu else None,
        "gpu_count": len(machine.gpus) if gpu else 0,
        "gpu_memory_bytes": gpu.memory_bytes if gpu else None,
        "compute_capability": gpu.compute_capability if gpu else None,
        "cuda": build.get("cuda") if gpu else None,
        "cudnn": build.get("cudnn") if gpu else None,
        "tensorflow": build.get("tensorflow"),
        "tensorflow_git": build.get("tensorflow_git"),
        "python": machine.python,
        # A CPU case runs on the CPU: its model and cores are the hardware. A GPU case's host
        # CPU is shown when it differs, but does not split the history.
        "cpu_model": None if gpu else machine.cpu_model,
        "cpu_cores": None if gpu else machine.cpu_cores,
        "virtual": virtual,
        "config": config_hash(config),
    }
    if not gpu:
        # Only a CPU case's: its kernels are the ones the CPU's level dispatches to. Left out of
        # a GPU case's, whose history its host's CPU does not split (nor did it before the field
        # existed: a GPU case's runs kept then still match).
        hard["cpu_isa"] = machine.cpu_isa
    soft: dict[str, Any] = {
        "driver": machine.driver,
        "gpu_max_sm_clock_mhz": gpu.max_sm_clock_mhz if gpu else None,
        "gpu_power_limit_w": gpu.power_limit_w if gpu else None,
        "host_cpu": f"{machine.cpu_model} ({machine.cpu_cores} cores)" if gpu else None,
        "host": machine.host,
        "runner": machine.runner,
        "keras": build.get("keras"),
    }
    return Fingerprint(hard, soft)
