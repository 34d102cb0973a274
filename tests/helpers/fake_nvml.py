"""A FAKE of the NVML boundary (the pynvml module's API), for self-tests on machines without
an NVIDIA driver. It is not a GPU: each call returns a scripted value. The sampler is tested
against the real pynvml on a GPU machine where one is lent (see the closing notes)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

NVML_CLOCK_SM = 1
NVML_CLOCK_MEM = 2
NVML_TEMPERATURE_GPU = 0
NVML_PCIE_UTIL_TX_BYTES = 0
NVML_PCIE_UTIL_RX_BYTES = 1
NVML_NVLINK_MAX_LINKS = 18
NVML_P2P_CAPS_INDEX_NVLINK = 2
NVML_P2P_STATUS_OK = 0
NVML_P2P_STATUS_NOT_SUPPORTED = 5
NVML_TOPOLOGY_SINGLE = 10
NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138
NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139


class NVMLError(Exception):
    pass


@dataclass
class _Utilization:
    gpu: float
    memory: float


@dataclass
class _Memory:
    used: float
    total: float = 80e9


@dataclass
class _Value:
    ullVal: int


@dataclass
class _FieldValue:
    timestamp: int
    value: _Value
    nvmlReturn: int = 0


class FakeNvml:
    """Two fake GPUs. GPU 0 cycles utilisation 20, 40, 60, 80 %, reports a thermal
    slowdown, has 18 NVLink links (the first 4 active) whose counters grow by 1 GiB per 10 ms
    of NVML time on each call; GPU 1 is idle at 0 % and has neither PCIe counters nor NVLink.
    The two are joined by one PCIe switch."""

    NVML_CLOCK_SM = NVML_CLOCK_SM
    NVML_CLOCK_MEM = NVML_CLOCK_MEM
    NVML_TEMPERATURE_GPU = NVML_TEMPERATURE_GPU
    NVML_PCIE_UTIL_TX_BYTES = NVML_PCIE_UTIL_TX_BYTES
    NVML_PCIE_UTIL_RX_BYTES = NVML_PCIE_UTIL_RX_BYTES
    NVML_NVLINK_MAX_LINKS = NVML_NVLINK_MAX_LINKS
    NVML_P2P_CAPS_INDEX_NVLINK = NVML_P2P_CAPS_INDEX_NVLINK
    NVML_P2P_STATUS_OK = NVML_P2P_STATUS_OK
    NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX
    NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX
    NVMLError = NVMLError

    def __init__(self) -> None:
        self._cycle = {0: itertools.cycle([20.0, 40.0, 60.0, 80.0]), 1: itertools.repeat(0.0)}
        self._nvlink_reads = itertools.count()
        self.initialised = False

    def nvmlDeviceGetCount(self) -> int:
        return len(self._cycle)

    def nvmlDeviceGetName(self, handle: int) -> str:
        return "FAKE H100"

    def nvmlDeviceGetUUID(self, handle: int) -> bytes:
        return f"GPU-fake-{handle}".encode()

    def nvmlDeviceGetCudaComputeCapability(self, handle: int) -> tuple[int, int]:
        return (9, 0)

    def nvmlDeviceGetMaxClockInfo(self, handle: int, clock: int) -> int:
        return 1980

    def nvmlDeviceGetPowerManagementLimit(self, handle: int) -> int:
        return 700_000

    def nvmlSystemGetDriverVersion(self) -> str:
        return "560.35.03"

    def nvmlDeviceGetNvLinkState(self, handle: int, link: int) -> int:
        if handle == 1 or link >= NVML_NVLINK_MAX_LINKS:
            raise NVMLError("Not Supported" if handle == 1 else "Invalid Argument")
        return int(link < 4)

    def nvmlDeviceGetP2PStatus(self, a: int, b: int, index: int) -> int:
        return NVML_P2P_STATUS_NOT_SUPPORTED

    def nvmlDeviceGetTopologyCommonAncestor(self, a: int, b: int) -> int:
        return NVML_TOPOLOGY_SINGLE

    def nvmlDeviceGetFieldValues(self, handle: int, fields: list[int]) -> list[_FieldValue]:
        if handle == 1:
            return [_FieldValue(0, _Value(0), nvmlReturn=3) for _ in fields]
        n = next(self._nvlink_reads)
        return [_FieldValue(n * 10_000, _Value(n * (1 << 20))) for _ in fields]

    def nvmlInit(self) -> None:
        self.initialised = True

    def nvmlShutdown(self) -> None:
        self.initialised = False

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if index not in self._cycle:
            raise NVMLError("Invalid Argument")
        return index

    def nvmlDeviceGetUtilizationRates(self, handle: int) -> _Utilization:
        value = next(self._cycle[handle])
        return _Utilization(gpu=value, memory=value / 2)

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> _Memory:
        return _Memory(used=1e9 * (handle + 1))

    def nvmlDeviceGetPowerUsage(self, handle: int) -> float:
        return 300_000.0  # mW

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: int) -> float:
        return 700_000.0

    def nvmlDeviceGetClockInfo(self, handle: int, clock: int) -> float:
        return 1980.0 if clock == NVML_CLOCK_SM else 2619.0

    def nvmlDeviceGetTemperature(self, handle: int, sensor: int) -> float:
        return 65.0

    def nvmlDeviceGetPcieThroughput(self, handle: int, counter: int) -> float:
        if handle == 1:
            raise NVMLError("Not Supported")
        return 1000.0  # KB/s

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: int) -> int:
        return 0x20 if handle == 0 else 0x0
