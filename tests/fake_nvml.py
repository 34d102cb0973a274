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


class NVMLError(Exception):
    pass


@dataclass
class _Utilization:
    gpu: float
    memory: float


@dataclass
class _Memory:
    used: float


class FakeNvml:
    """Two fake GPUs. GPU 0 cycles utilisation 20, 40, 60, 80 % and reports a thermal
    slowdown; GPU 1 is idle at 0 % and does not support PCIe counters."""

    NVML_CLOCK_SM = NVML_CLOCK_SM
    NVML_CLOCK_MEM = NVML_CLOCK_MEM
    NVML_TEMPERATURE_GPU = NVML_TEMPERATURE_GPU
    NVML_PCIE_UTIL_TX_BYTES = NVML_PCIE_UTIL_TX_BYTES
    NVML_PCIE_UTIL_RX_BYTES = NVML_PCIE_UTIL_RX_BYTES
    NVMLError = NVMLError

    def __init__(self) -> None:
        self._cycle = {0: itertools.cycle([20.0, 40.0, 60.0, 80.0]), 1: itertools.repeat(0.0)}
        self.initialised = False

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
