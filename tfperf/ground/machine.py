"""What this machine is, read without starting TensorFlow: the GPUs through NVML, the CPU from
/proc, the TensorFlow version from the installed distribution. The baseline key comes from it."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any


@dataclass(frozen=True)
class Gpu:
    name: str
    memory_bytes: int
    uuid: str
    compute_capability: str = ""  # "9.0"
    max_sm_clock_mhz: int | None = None
    power_limit_w: float | None = None
    nvlink_links: int | None = None  # active NVLink links; None: the GPU has no NVLink


# NVML's topology levels: the closest common ancestor of two GPUs.
TOPOLOGY_LEVELS = {0: "same board", 10: "one PCIe switch", 20: "several PCIe switches",
                   30: "one PCIe host bridge", 40: "one NUMA node", 50: "across NUMA nodes"}


@dataclass(frozen=True)
class GpuInventory:
    """What NVML says of the GPUs: each GPU, how each pair is connected, the driver, and why
    there are none."""

    gpus: tuple[Gpu, ...] = ()
    links: tuple[str, ...] = ()  # "gpu0-gpu1: NVLink", "gpu0-gpu2: one PCIe switch"
    driver: str | None = None
    unavailable: str | None = None


@dataclass(frozen=True)
class Machine:
    system: str
    python: str  # major.minor
    tensorflow: str
    cpu_model: str
    cpu_cores: int
    gpus: tuple[Gpu, ...] = ()
    gpu_unavailable_reason: str | None = None
    driver: str | None = None
    gpu_links: tuple[str, ...] = ()
    host: str = ""
    runner: str = ""  # the CI runner's name ($RUNNER_NAME), if any
    # The CPU's instruction-set level as TensorFlow's kernels dispatch on it (ISA_LEVELS): one
    # model name can cover hosts 3x apart (an AVX2-only and an AVX-512 AMD EPYC).
    cpu_isa: str = "avx512"

    @property
    def cpu_avx512(self) -> bool:
        """Without AVX-512, TensorFlow's oneDNN kernels run no bfloat16 and fall back to
        Eigen's, whose convolution gradients take NHWC only."""
        return ISA_LEVELS.index(self.cpu_isa) >= ISA_LEVELS.index("avx512") \
            if self.cpu_isa in ISA_LEVELS else False

    def device_count(self, kind: str) -> int:
        # One physical CPU device whatever the core count: TensorFlow's view.
        return len(self.gpus) if kind == "gpu" else 1

    def benchmark_info(self, build: dict[str, Any] | None) -> dict[str, Any]:
        """What pytest-benchmark's machine_info keeps of this machine. CUDA and cuDNN as
        TensorFlow was built with them only a worker can say (`build`): known once a case has
        run, and pytest-benchmark saves its JSON at the end of the session."""
        return {
            "key": self.key(), "tensorflow": self.tensorflow, "cpu_model": self.cpu_model,
            "cpu_cores": self.cpu_cores, "cpu_isa": self.cpu_isa, "cpu_avx512": self.cpu_avx512,
            "driver": self.driver,
            "cuda": build.get("cuda") if build else None,
            "cudnn": build.get("cudnn") if build else None,
            "tensorflow_build": build or "not known: no case ran in this session",
            "gpus": [asdict(g) for g in self.gpus], "gpu_links": list(self.gpu_links),
            "gpu_unavailable_reason": self.gpu_unavailable_reason,
        }

    def key(self, virtual: bool = False) -> str:
        """The baseline folder: results of different hardware or TensorFlow never mix."""
        parts = [
            self.system,
            f"py{self.python}",
            f"tf{self.tensorflow}",
            f"{_slug(self.cpu_model)}-{self.cpu_isa}-{self.cpu_cores}cpu",
        ]
        if self.gpus:
            parts.append(f"{len(self.gpus)}x{_slug(self.gpus[0].name)}")
        if virtual:
            parts.append("virtual")
        return "-".join(parts)


# The key's TensorFlow part: "-tf2.21.0", a release candidate's "-tf2.22.0-rc0" (as tf.__version__
# spells it) or "-tf2.22.0rc0", a nightly's "-tf2.23.0-dev20261026".
_TENSORFLOW_PART = re.compile(r"-tf\d[\w.+]*?(?:-(?:dev|rc|a|b)\d+)?(?=-)")


def kind_of_key(key: str) -> str:
    """A machine key without its TensorFlow: the kind of machine, whatever build it ran (a
    case's series across builds is kept per kind)."""
    return _TENSORFLOW_PART.sub("", key, count=1)


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


# The levels oneDNN, TensorFlow's CPU kernels, dispatches on (its cpu_isa_t: avx2,
# avx512_core, avx512_core_vnni, avx512_core_bf16, avx512_core_amx), lowest first, each named
# by the /proc/cpuinfo flag that marks it. Every CPU with a level has the ones below it, so the
# highest names the kernels; hosts of one level run the same code.
ISA_LEVELS = ("sse", "avx", "avx2", "avx512", "avx512vnni", "avx512bf16", "amx")
_ISA_FLAGS = (("amx", "amx_tile"), ("avx512bf16", "avx512_bf16"), ("avx512vnni", "avx512_vnni"),
              ("avx512", "avx512f"), ("avx2", "avx2"), ("avx", "avx"))


def isa_level(flags: set[str]) -> str:
    """The highest of ISA_LEVELS whose flag the CPU reports."""
    return next((level for level, flag in _ISA_FLAGS if flag in flags), "sse")


def _cpu_isa() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            flags = next((line.split(":", 1)[1].split() for line in f
                          if line.startswith("flags")), [])
    except OSError:
        flags = []
    return isa_level(set(flags))


def _tensorflow_version() -> str:
    for dist in ("tensorflow", "tensorflow-cpu"):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return "none"


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _optional(call: Any, *args: Any) -> Any:
    """A figure some GPUs or drivers do not report (NVML raises NotSupported): None."""
    try:
        return call(*args)
    except Exception:  # pynvml's NVMLError and its per-code subclasses
        return None


def _active_nvlinks(nvml: Any, handle: Any) -> int | None:
    """Active NVLink links, counted until NVML says a link index is past the GPU's last."""
    active = 0
    for link in range(nvml.NVML_NVLINK_MAX_LINKS):
        try:
            active += bool(nvml.nvmlDeviceGetNvLinkState(handle, link))
        except nvml.NVMLError:
            if link == 0:
                return None
            break
    return active


def _link(nvml: Any, a: Any, b: Any) -> str:
    status = _optional(nvml.nvmlDeviceGetP2PStatus, a, b, nvml.NVML_P2P_CAPS_INDEX_NVLINK)
    if status == nvml.NVML_P2P_STATUS_OK:
        return "NVLink"
    level = _optional(nvml.nvmlDeviceGetTopologyCommonAncestor, a, b)
    return TOPOLOGY_LEVELS.get(level, "unknown") if level is not None else "unknown"


def read_gpus(nvml: ModuleType | Any) -> GpuInventory:
    """The GPUs, how each pair is connected, and the driver, read through an NVML module
    (pynvml; a fake of it in self-tests)."""
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as error:
        return GpuInventory(unavailable=f"no NVIDIA driver ({error})")
    try:
        gpus = []
        handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(nvml.nvmlDeviceGetCount())]
        for handle in handles:
            capability = _optional(nvml.nvmlDeviceGetCudaComputeCapability, handle)
            clock = _optional(nvml.nvmlDeviceGetMaxClockInfo, handle, nvml.NVML_CLOCK_SM)
            limit_mw = _optional(nvml.nvmlDeviceGetPowerManagementLimit, handle)
            gpus.append(Gpu(
                name=_text(nvml.nvmlDeviceGetName(handle)),
                memory_bytes=int(nvml.nvmlDeviceGetMemoryInfo(handle).total),
                uuid=_text(nvml.nvmlDeviceGetUUID(handle)),
                compute_capability=".".join(map(str, capability)) if capability else "",
                max_sm_clock_mhz=int(clock) if clock is not None else None,
                power_limit_w=limit_mw / 1000 if limit_mw is not None else None,
                nvlink_links=_active_nvlinks(nvml, handle),
            ))
        links = tuple(f"gpu{i}-gpu{j}: {_link(nvml, handles[i], handles[j])}"
                      for i in range(len(handles)) for j in range(i + 1, len(handles)))
        driver = _optional(nvml.nvmlSystemGetDriverVersion)
        return GpuInventory(tuple(gpus), links, _text(driver) if driver is not None else None)
    finally:
        nvml.nvmlShutdown()


def _gpus() -> GpuInventory:
    try:
        import pynvml
    except ImportError:
        return GpuInventory(unavailable="nvidia-ml-py is not installed")
    return read_gpus(pynvml)


def detect() -> Machine:
    inventory = _gpus()
    return Machine(
        system=platform.system(),
        python=".".join(platform.python_version_tuple()[:2]),
        tensorflow=_tensorflow_version(),
        cpu_model=_cpu_model(),
        cpu_cores=len(os.sched_getaffinity(0)),
        gpus=inventory.gpus,
        gpu_unavailable_reason=inventory.unavailable,
        driver=inventory.driver,
        gpu_links=inventory.links,
        host=platform.node(),
        runner=os.environ.get("RUNNER_NAME", ""),
        cpu_isa=_cpu_isa(),
    )
