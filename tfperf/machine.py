"""What this machine is, read without starting TensorFlow: the GPUs through NVML, the CPU from
/proc, the TensorFlow version from the installed distribution. The baseline key comes from it."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Gpu:
    name: str
    memory_bytes: int
    uuid: str


@dataclass(frozen=True)
class Machine:
    system: str
    python: str  # major.minor
    tensorflow: str
    cpu_model: str
    cpu_cores: int
    gpus: tuple[Gpu, ...] = ()
    gpu_unavailable_reason: str | None = None

    def device_count(self, kind: str) -> int:
        # One physical CPU device whatever the core count: TensorFlow's view.
        return len(self.gpus) if kind == "gpu" else 1

    def key(self, virtual: bool = False) -> str:
        """The baseline folder: results of different hardware or TensorFlow never mix."""
        parts = [
            self.system,
            f"py{self.python}",
            f"tf{self.tensorflow}",
            f"{_slug(self.cpu_model)}-{self.cpu_cores}cpu",
        ]
        if self.gpus:
            parts.append(f"{len(self.gpus)}x{_slug(self.gpus[0].name)}")
        if virtual:
            parts.append("virtual")
        return "-".join(parts)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "_", text).strip("_")


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _tensorflow_version() -> str:
    for dist in ("tensorflow", "tensorflow-cpu"):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "none"


def _gpus() -> tuple[tuple[Gpu, ...], str | None]:
    try:
        import pynvml
    except ImportError:
        return (), "nvidia-ml-py is not installed"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as error:
        return (), f"no NVIDIA driver ({error})"
    try:
        gpus = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
            name = pynvml.nvmlDeviceGetName(handle)
            gpus.append(
                Gpu(
                    name=name.decode() if isinstance(name, bytes) else str(name),
                    memory_bytes=int(pynvml.nvmlDeviceGetMemoryInfo(handle).total),
                    uuid=str(pynvml.nvmlDeviceGetUUID(handle)),
                )
            )
        return tuple(gpus), None
    finally:
        pynvml.nvmlShutdown()


def detect() -> Machine:
    gpus, reason = _gpus()
    return Machine(
        system=platform.system(),
        python=".".join(platform.python_version_tuple()[:2]),
        tensorflow=_tensorflow_version(),
        cpu_model=_cpu_model(),
        cpu_cores=len(os.sched_getaffinity(0)),
        gpus=gpus,
        gpu_unavailable_reason=reason,
    )
