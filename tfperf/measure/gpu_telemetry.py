"""What the GPU did during a case's measured rounds, sampled through NVML (nvidia-ml-py).

It runs in the parent process on a background thread and never imports TensorFlow, so it can
be tested for real on a GPU machine without TF. Each metric is summarised per GPU as mean,
p10, p90 and max; a metric the device does not support says so. Without a driver the whole
summary says why it is absent, never zeros.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

DEFAULT_INTERVAL_S = 0.1

# NVML's clock-event reasons that mean the GPU was slowed by heat or power during the samples.
THROTTLE_REASONS = {
    0x04: "sw_power_cap",
    0x08: "hw_slowdown",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
}

# The reasons that make a result unreliable: the GPU was slowed by heat or by an emergency
# power brake. Software power capping at the board's limit is not among them: it is the normal
# steady state of a fully loaded datacenter GPU, and is only recorded.
UNRELIABLE_REASONS = ("hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown",
                      "hw_power_brake_slowdown")

Reader = Callable[[Any, Any], tuple[float, ...]]


def throttled(summary: dict[str, Any]) -> list[str]:
    """`gpuN: reason` for each unreliable throttle reason active during the samples."""
    return [f"{gpu}: {reason}" for gpu, figures in sorted(summary.items())
            if isinstance(figures, dict)
            for reason in figures.get("throttle_reasons", ()) if reason in UNRELIABLE_REASONS]


def _utilization(nv: Any, h: Any) -> tuple[float, ...]:
    rates = nv.nvmlDeviceGetUtilizationRates(h)  # one call: both rates cover the same window
    return (rates.gpu, rates.memory)


# Each reader fills the metrics named with it, one NVML call per reader and sample.
READERS: tuple[tuple[tuple[str, ...], Reader], ...] = (
    (("sm_utilization_percent", "memory_utilization_percent"), _utilization),
    (("memory_used_bytes",), lambda nv, h: (nv.nvmlDeviceGetMemoryInfo(h).used,)),
    (("power_w",), lambda nv, h: (nv.nvmlDeviceGetPowerUsage(h) / 1000.0,)),
    (("power_limit_w",), lambda nv, h: (nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0,)),
    (("sm_clock_mhz",), lambda nv, h: (nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),)),
    (("memory_clock_mhz",), lambda nv, h: (nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),)),
    (("temperature_c",),
     lambda nv, h: (nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),)),
    # NVML reports PCIe throughput in KB/s.
    (("pcie_tx_bytes_per_s",),
     lambda nv, h: (nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_TX_BYTES) * 1024.0,)),
    (("pcie_rx_bytes_per_s",),
     lambda nv, h: (nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_RX_BYTES) * 1024.0,)),
)
# NVLink traffic is a pair of GPU-wide counters (KiB since the driver loaded, with NVML's own
# timestamp in microseconds): a rate needs two readings, so it is read apart from READERS.
NVLINK_METRICS = ("nvlink_tx_bytes_per_s", "nvlink_rx_bytes_per_s")
METRICS = tuple(name for names, _ in READERS for name in names) + NVLINK_METRICS


def _nvlink_counters(nv: Any, h: Any) -> list[tuple[int, int]]:
    """(timestamp in us, KiB) of each NVLink counter; NVMLError where a GPU has no NVLink."""
    values = nv.nvmlDeviceGetFieldValues(h, [nv.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX,
                                             nv.NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX])
    for value in values:
        if value.nvmlReturn != 0:
            raise nv.NVMLError(value.nvmlReturn)
    return [(int(v.timestamp), int(v.value.ullVal)) for v in values]


def _real_nvml() -> Any:
    import pynvml

    return pynvml


class Sampler:
    """Use as a context manager around the measured rounds; read `summary()` after."""

    def __init__(self, gpu_indices: list[int], interval_s: float = DEFAULT_INTERVAL_S,
                 nvml: Any = None) -> None:
        if interval_s <= 0:
            raise ValueError(f"NVML sampling interval must be above 0 s, not {interval_s}")
        self.gpu_indices = gpu_indices
        self.interval_s = interval_s
        self._nvml = nvml if nvml is not None else _real_nvml()
        self._unavailable: str | None = None
        self._handles: dict[int, Any] = {}
        self._samples: dict[int, dict[str, list[float]]] = {}
        self._unsupported: dict[int, dict[str, str]] = {}
        self._throttles: dict[int, set[str]] = {}
        self._nvlink_last: dict[int, list[tuple[int, int]]] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Sampler:
        nv = self._nvml
        try:
            nv.nvmlInit()
            self._handles = {i: nv.nvmlDeviceGetHandleByIndex(i) for i in self.gpu_indices}
        except nv.NVMLError as error:
            self._unavailable = f"unavailable: no NVIDIA driver ({error})"
            return self
        for i in self.gpu_indices:
            self._samples[i] = {name: [] for name in METRICS}
            self._unsupported[i] = {}
            self._throttles[i] = set()
        self._sample()  # one sample even for a phase shorter than the interval
        self._thread = threading.Thread(target=self._run, name="nvml-sampler", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._nvml.nvmlShutdown()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def _sample(self) -> None:
        nv = self._nvml
        for i, handle in self._handles.items():
            for names, read in READERS:
                if names[0] in self._unsupported[i]:
                    continue
                try:
                    values = read(nv, handle)
                except nv.NVMLError as error:
                    self._unsupported[i].update({n: f"unavailable: {error}" for n in names})
                    continue
                for name, value in zip(names, values, strict=True):
                    self._samples[i][name].append(float(value))
            self._sample_nvlink(i, handle)
            try:
                mask = int(nv.nvmlDeviceGetCurrentClocksEventReasons(handle))
            except nv.NVMLError:
                continue
            self._throttles[i].update(n for bit, n in THROTTLE_REASONS.items() if mask & bit)

    def _sample_nvlink(self, i: int, handle: Any) -> None:
        nv = self._nvml
        if NVLINK_METRICS[0] in self._unsupported[i]:
            return
        try:
            now = _nvlink_counters(nv, handle)
        except nv.NVMLError as error:
            self._unsupported[i].update({n: f"unavailable: no NVLink ({error})"
                                         for n in NVLINK_METRICS})
            return
        before = self._nvlink_last.get(i)
        self._nvlink_last[i] = now
        if before is None:
            return
        for name, (t0, kib0), (t1, kib1) in zip(NVLINK_METRICS, before, now, strict=True):
            if t1 > t0:
                self._samples[i][name].append((kib1 - kib0) * 1024.0 / ((t1 - t0) / 1e6))

    def summary(self) -> dict[str, Any]:
        if self._unavailable is not None:
            return {"unavailable": self._unavailable}
        result: dict[str, Any] = {}
        for i in self.gpu_indices:
            gpu: dict[str, Any] = {"samples": len(self._samples[i]["sm_utilization_percent"]),
                                   "throttle_reasons": sorted(self._throttles[i])}
            for name, values in self._samples[i].items():
                if name in self._unsupported[i]:
                    gpu[name] = self._unsupported[i][name]
                elif values:
                    data = np.asarray(values)
                    gpu[name] = {"mean": float(data.mean()),
                                 "p10": float(np.percentile(data, 10)),
                                 "p90": float(np.percentile(data, 90)),
                                 "max": float(data.max())}
            result[f"gpu{i}"] = gpu
        return result


def for_case(device_kind: str, env: Mapping[str, str]
             ) -> contextlib.AbstractContextManager[Sampler | None]:
    """NVML sampling of a case's GPUs during its measured rounds; none for a CPU case."""
    if device_kind != "gpu":
        return contextlib.nullcontext()
    visible = env["CUDA_VISIBLE_DEVICES"].split(",")
    # CUDA_VISIBLE_DEVICES holds indices in this suite's runs; NVML counts in PCI bus
    # order, which is CUDA's order when CUDA_DEVICE_ORDER=PCI_BUS_ID (set it on runners).
    return Sampler([int(i) for i in visible if i.isdigit()])


def around(device_kind: str, env: Mapping[str, str], measure: Callable[[], None]
           ) -> dict[str, Any]:
    """Run `measure` (a case's measured rounds) inside its GPUs' sampling; the summary, or
    why there is none."""
    with for_case(device_kind, env) as sampler:
        measure()
    return sampler.summary() if sampler else {
        "unavailable": "unavailable: a CPU case uses no GPU"}
