"""The matrix as data: ids, validity rules, tiers, skip reasons."""

from __future__ import annotations

from pathlib import Path

from tfperf import matrix, requirements
from tfperf.machine import Gpu, Machine
from tfperf.tiers import Tier
from tfperf.workload import WorkloadInfo


def info(name: str = "w", formats: tuple[str, ...] = ("NHWC", "NCHW"), towers: bool = False
         ) -> WorkloadInfo:
    return WorkloadInfo(name, Path(f"{name}.py"), formats, ("fp32", "mixed_bf16", "mixed_fp16"),
                        towers, Tier.SMOKE, {"tiny": 8, "full": 8})


CPU_ONLY = Machine("Linux", "3.11", "2.21.0", "Xeon", 2, (), "no NVIDIA driver")
FOUR_GPUS = Machine("Linux", "3.11", "2.21.0", "EPYC", 64,
                    tuple(Gpu("NVIDIA H100 80GB HBM3", 80 << 30, f"GPU-{i}") for i in range(4)))


def test_every_axis_value_is_in_the_id() -> None:
    case = matrix.Case("resnet20", "gpu", 2, "jit", "NCHW", "default", "replicated", "mixed_bf16")
    assert case.id == "resnet20-gpu2-xla_jit-NCHW-default-replicated-mixed_bf16"


def test_invalid_combinations_are_never_generated() -> None:
    workloads = {"w": info(formats=("NHWC",)), "t": info("t", towers=True)}
    cases = list(matrix.generate(workloads, Tier.FULL))
    assert cases
    assert all(matrix.invalid_reason(c, workloads[c.workload]) is None for c in cases)
    assert not [c for c in cases if c.workload == "w" and c.data_format == "NCHW"]
    assert not [c for c in cases if c.strategy == "single" and c.device_count > 1
                and c.placement == "default"]
    assert not [c for c in cases if c.placement == "towers_split" and c.workload == "w"]
    assert [c for c in cases if c.placement == "towers_split" and c.workload == "t"]


def test_tiers_nest_and_only_restricts() -> None:
    workloads = {"w": info()}
    smoke = set(matrix.generate(workloads, Tier.SMOKE))
    nightly = set(matrix.generate(workloads, Tier.NIGHTLY))
    full = set(matrix.generate(workloads, Tier.FULL))
    assert smoke < nightly < full
    assert {c.xla for c in smoke} == {"off", "jit"}
    only = set(matrix.generate(workloads, Tier.FULL, {"xla": ("auto",), "device_kind": ("gpu",)}))
    assert only and all(c.xla == "auto" and c.device_kind == "gpu" for c in only)


def test_skip_reasons_say_what_is_missing() -> None:
    gpu4 = matrix.Case("w", "gpu", 4, "off", "NHWC", "default", "replicated", "fp32")
    gpu1 = matrix.Case("w", "gpu", 1, "off", "NHWC", "default", "single", "fp32")
    reason = requirements.skip_reason(gpu4, CPU_ONLY)
    assert reason == "needs 4 GPUs, found 0 (no NVIDIA driver)"
    assert requirements.skip_reason(gpu1, CPU_ONLY) == "needs 1 GPU, found 0 (no NVIDIA driver)"
    assert requirements.skip_reason(gpu1, FOUR_GPUS) is None
    assert requirements.skip_reason(gpu4, FOUR_GPUS) == (
        "variable strategy replicated is not implemented yet")
    split = matrix.Case("w", "gpu", 1, "off", "NHWC", "towers_split", "single", "fp32")
    assert requirements.skip_reason(split, FOUR_GPUS) == (
        "placement towers_split is not implemented yet")


def test_storage_key_names_devices_and_tensorflow() -> None:
    assert CPU_ONLY.key() == "Linux-py3.11-tf2.21.0-Xeon-2cpu"
    assert FOUR_GPUS.key() == "Linux-py3.11-tf2.21.0-EPYC-64cpu-4xNVIDIA_H100_80GB_HBM3"
    assert FOUR_GPUS.key(virtual=True).endswith("-virtual")
