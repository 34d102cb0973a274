"""NVML telemetry: summaries per GPU from a fake NVML, a stated reason without a driver, and a
throttled result left unjudged."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.helpers.fake_nvml import FakeNvml
from tfperf.gate import case_verdict
from tfperf.ground import machine
from tfperf.measure import diagnosis, gpu_telemetry
from tfperf.measure.gpu_telemetry import Sampler
from tfperf.storage.fingerprint import Fingerprint
from tfperf.storage.session_files import Run


def test_summaries_per_gpu_from_the_fake_nvml() -> None:
    nvml = FakeNvml()
    with Sampler([0, 1], interval_s=0.01, nvml=nvml) as sampler:
        time.sleep(0.3)
    assert not nvml.initialised  # shut down when the phase ended
    summary = sampler.summary()
    gpu0, gpu1 = summary["gpu0"], summary["gpu1"]
    assert gpu0["samples"] >= 8
    assert gpu0["sm_utilization_percent"]["max"] == 80.0
    assert gpu0["sm_utilization_percent"]["p10"] >= 20.0
    assert 35.0 <= gpu0["sm_utilization_percent"]["mean"] <= 65.0
    assert gpu0["power_w"]["mean"] == 300.0 and gpu0["power_limit_w"]["max"] == 700.0
    assert gpu0["pcie_tx_bytes_per_s"]["mean"] == 1000.0 * 1024
    assert gpu0["throttle_reasons"] == ["sw_thermal_slowdown"]
    assert gpu1["sm_utilization_percent"]["max"] == 0.0
    assert gpu1["pcie_rx_bytes_per_s"] == "unavailable: Not Supported"
    assert gpu1["throttle_reasons"] == []


def test_without_a_driver_the_summary_says_why_never_zeros() -> None:
    # The real nvidia-ml-py on this machine, which has no NVIDIA driver.
    with Sampler([0]) as sampler:
        pass
    summary = sampler.summary()
    assert list(summary) == ["unavailable"]
    assert summary["unavailable"].startswith("unavailable: no NVIDIA driver (")


def test_a_bad_interval_is_refused() -> None:
    with pytest.raises(ValueError, match="interval must be above 0 s"):
        Sampler([0], interval_s=0)


def test_a_thermal_throttle_makes_the_result_unreliable_and_unjudged() -> None:
    nvml = FakeNvml()
    with Sampler([0, 1], interval_s=0.01, nvml=nvml) as sampler:
        time.sleep(0.05)
    throttles = gpu_telemetry.throttled(sampler.summary())
    assert throttles == ["gpu0: sw_thermal_slowdown"]
    assert gpu_telemetry.throttled({"gpu0": {"throttle_reasons": ["sw_power_cap"]}}) == []
    assert gpu_telemetry.throttled({"unavailable": "unavailable: no NVIDIA driver"}) == []
    run = Run("c", Fingerprint({"gpu_model": "H100"}), "2026-11-22", "s", 10.0, (10.0, 10.0))
    verdict = case_verdict.not_judged(run, throttles)
    assert verdict.status == "throttled" and not verdict.failed
    assert verdict.unjudged == ("not judged: the GPU throttled during measurement "
                                "(gpu0: sw_thermal_slowdown), so the result is unreliable")
    # Kept with its verdict, it never becomes part of a baseline.
    later = Run("c", Fingerprint({"gpu_model": "H100"}), "2026-11-23", "t", 10.0, (10.0,))
    kept = Run("c", Fingerprint({"gpu_model": "H100"}), "2026-11-22", "s", 10.0, (10.0,),
               verdict=verdict.status)
    assert case_verdict.comparable(later, case_verdict.Sources(None, [kept]), 30)[0] == []


def test_nvlink_rates_come_from_counters_and_a_gpu_without_nvlink_says_so() -> None:
    with Sampler([0, 1], interval_s=0.01, nvml=FakeNvml()) as sampler:
        time.sleep(0.1)
    summary = sampler.summary()
    # The fake's counters grow by 1 GiB per 10 ms of NVML time: 107 GB/s, whatever the
    # sampler's own timing.
    assert summary["gpu0"]["nvlink_tx_bytes_per_s"]["mean"] == pytest.approx((1 << 30) / 0.01)
    assert summary["gpu0"]["nvlink_rx_bytes_per_s"]["p10"] == pytest.approx((1 << 30) / 0.01)
    assert summary["gpu1"]["nvlink_tx_bytes_per_s"] == "unavailable: no NVLink (3)"


def test_machine_facts_name_each_gpu_its_nvlinks_and_how_pairs_connect() -> None:
    inventory = machine.read_gpus(FakeNvml())
    assert inventory.driver == "560.35.03" and inventory.unavailable is None
    first, second = inventory.gpus
    assert (first.name, first.uuid, first.compute_capability) == ("FAKE H100", "GPU-fake-0",
                                                                  "9.0")
    assert first.memory_bytes == 80e9 and first.power_limit_w == 700.0
    assert first.nvlink_links == 4 and second.nvlink_links is None
    assert inventory.links == ("gpu0-gpu1: one PCIe switch",)


@pytest.mark.parametrize(("kind", "pipeline", "telemetry", "bound", "evidence"), [
    ("gpu", 500.0, {"gpu0": {"sm_utilization_percent": {"mean": 45.0}},
                    "gpu1": {"sm_utilization_percent": {"mean": 55.0}}},
     True, "the GPU was busy 50% of the time (limit 80%)"),
    ("gpu", 500.0, {"gpu0": {"sm_utilization_percent": {"mean": 93.0}}},
     False, "the GPU was busy 93% of the time"),
    ("gpu", 2000.0, {"gpu0": {"sm_utilization_percent": {"mean": 10.0}}},
     False, "the pipeline alone gives 2000 examples/s, the step alone takes 1000"),
    ("gpu", 500.0, {"unavailable": "unavailable: no NVIDIA driver (x)"},
     True, "GPU utilisation unavailable: no NVIDIA driver (x)"),
    ("cpu", 500.0, {}, True, "(a CPU case: judged on the rates alone)"),
    ("gpu", None, {}, None, "no input pipeline: the batches were already on the device"),
])
def test_input_bound_needs_a_slower_pipeline_and_an_idle_device(
        kind: str, pipeline: float | None, telemetry: dict[str, Any], bound: bool | None,
        evidence: str) -> None:
    assert diagnosis.input_bound(kind, pipeline, 1000.0, telemetry)[0] is bound
    assert evidence in diagnosis.input_bound(kind, pipeline, 1000.0, telemetry)[1]
