"""The matrix as data: ids, validity rules, tiers, skip reasons."""

from __future__ import annotations

import itertools
from dataclasses import replace
from pathlib import Path

from tfperf.cases import matrix, requirements
from tfperf.ground.machine import Gpu, Machine
from tfperf.ground.tiers import Tier
from tfperf.workload import WorkloadInfo


def info(name: str = "w", formats: tuple[str, ...] = ("NHWC", "NCHW"), towers: bool = False,
         smoke_matrix: bool = True, preprocessing: bool = True) -> WorkloadInfo:
    return WorkloadInfo(name, Path(f"{name}.py"), formats, ("fp32", "mixed_bf16", "mixed_fp16"),
                        towers, Tier.SMOKE, {"tiny": 8, "full": 8}, smoke_matrix, preprocessing)


CPU_ONLY = Machine("Linux", "3.11", "2.21.0", "Xeon", 2, (), "no NVIDIA driver")
FOUR_GPUS = Machine("Linux", "3.11", "2.21.0", "EPYC", 64,
                    tuple(Gpu("NVIDIA H100 80GB HBM3", 80 << 30, f"GPU-{i}") for i in range(4)))


def test_every_axis_value_is_in_the_id() -> None:
    case = matrix.Case("resnet20", "gpu", 2, "jit", "NCHW", "default", "replicated", "mixed_bf16",
                       "tfrecord", "device")
    assert case.id == ("resnet20-gpu2-workers1-xla_jit-NCHW-default-replicated-mixed_bf16-"
                       "tfrecord-prep_device")
    cluster = matrix.Case("resnet20", "cpu", 1, "off", "NHWC", "default", "parameter_server",
                          "fp32", workers=2)
    assert "-cpu1-workers2-" in cluster.id


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
    on_device = {c.input for c in cases if c.preprocess == "device"}
    assert on_device == {"tfrecord"}


def test_preprocessing_on_the_device_needs_something_to_preprocess() -> None:
    raw = info("raw", preprocessing=False)
    case = matrix.Case("raw", "cpu", 1, "off", "NHWC", "default", "single", "fp32", "tfrecord",
                       "device")
    assert matrix.invalid_reason(case, raw) == (
        "raw stores its data ready to train: nothing to preprocess")


def test_smoke_varies_one_axis_at_a_time_of_the_reference_workload_only() -> None:
    workloads = {"ref": info("ref"), "other": info("other", smoke_matrix=False)}
    smoke = [c for c in matrix.generate(workloads, Tier.SMOKE) if c.device_kind == "cpu"]
    other = [c for c in smoke if c.workload == "other"]
    assert [c.id for c in other] == [
        "other-cpu1-workers1-xla_off-NHWC-default-single-fp32-synthetic-prep_host"]
    ref = [c for c in smoke if c.workload == "ref"]
    assert all(matrix.varied_factors(c, workloads["ref"]) <= 1 for c in ref)
    # Every smoke value of every varied axis appears once in the reference's cases.
    for axis in matrix.VARIED_IN_SMOKE:
        smoke_values = {v for v, t in matrix.AXIS_BY_NAME[axis].values.items() if t == Tier.SMOKE}
        seen = {str(getattr(c, axis)) for c in ref}
        assert seen == smoke_values - ({"towers_split"} if axis == "placement" else set()), axis
    # What smoke leaves out of the product still runs at nightly.
    nightly = set(matrix.generate(workloads, Tier.NIGHTLY))
    assert matrix.Case("ref", "cpu", 1, "jit", "NCHW", "default", "single", "fp32") in nightly
    assert matrix.Case("other", "cpu", 1, "jit", "NHWC", "default", "single", "fp32") in nightly
    # Input and preprocessing vary together: one factor.
    assert matrix.Case("ref", "cpu", 1, "off", "NHWC", "default", "single", "fp32", "tfrecord",
                       "device") in nightly


def test_tiers_nest_and_only_restricts() -> None:
    workloads = {"w": info()}
    smoke = set(matrix.generate(workloads, Tier.SMOKE))
    nightly = set(matrix.generate(workloads, Tier.NIGHTLY))
    full = set(matrix.generate(workloads, Tier.FULL))
    assert smoke < nightly < full
    assert {c.xla for c in smoke} == {"off", "jit"}
    assert {c.input for c in smoke} == {"synthetic", "tfrecord", "feed"}
    only = set(matrix.generate(workloads, Tier.FULL, {"xla": ("auto",), "device_kind": ("gpu",)}))
    assert only and all(c.xla == "auto" and c.device_kind == "gpu" for c in only)


def test_skip_reasons_say_what_is_missing() -> None:
    gpu4 = matrix.Case("w", "gpu", 4, "off", "NHWC", "default", "replicated", "fp32")
    gpu1 = matrix.Case("w", "gpu", 1, "off", "NHWC", "default", "single", "fp32")
    reason = requirements.skip_reason(gpu4, CPU_ONLY)
    assert reason == "needs 4 GPUs, found 0 (no NVIDIA driver)"
    assert requirements.skip_reason(gpu1, CPU_ONLY) == "needs 1 GPU, found 0 (no NVIDIA driver)"
    assert requirements.skip_reason(gpu1, FOUR_GPUS) is None
    assert requirements.skip_reason(gpu4, FOUR_GPUS) is None
    ps_cluster = matrix.Case("w", "gpu", 1, "jit", "NHWC", "default", "parameter_server", "fp32",
                             workers=2)
    assert requirements.skip_reason(ps_cluster, FOUR_GPUS) is None
    ps_cluster_gpu2 = replace(ps_cluster, device_count=2)
    assert requirements.skip_reason(ps_cluster_gpu2, FOUR_GPUS) == (
        "parameter_server across processes: workers with several GPUs are not implemented yet "
        "(one replica per worker)")


def test_bf16_in_nchw_needs_avx512_on_a_cpu() -> None:
    """Without AVX-512 TensorFlow's oneDNN runs no bfloat16, and Eigen's convolution gradients
    take NHWC only (seen on an AVX2-only AMD EPYC): skipped there, saying so; drawn nowhere
    by the XLA equivalence check."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    from tfperf.equivalence.check import EquivalenceCheck

    case = matrix.Case("w", "cpu", 1, "off", "NCHW", "default", "single", "mixed_bf16")
    avx2 = replace(CPU_ONLY, cpu_isa="avx2")
    assert requirements.skip_reason(case, CPU_ONLY) is None
    assert requirements.skip_reason(case, avx2) == (
        "mixed_bf16 in NCHW on a CPU without AVX-512: TensorFlow's oneDNN kernels run bfloat16 "
        "only with it, and the Eigen ones it falls back to compute convolution gradients in NHWC "
        "only")
    assert requirements.skip_reason(replace(case, data_format="NHWC"), avx2) is None
    assert requirements.skip_reason(replace(case, precision="fp32"), avx2) is None
    check = EquivalenceCheck(None, {"w": info()}, "/device:CPU:0",  # type: ignore[arg-type]
                             ("fp32", "mixed_bf16"), nchw_bf16=False)
    try:
        found = find(check.examples(), lambda s: s.data_format == "NCHW"
                     and s.precision == "mixed_bf16")
    except NoSuchExample:
        found = None
    assert found is None
    assert find(check.examples(), lambda s: s.data_format == "NCHW").precision == "fp32"


def test_worker_processes_only_where_a_strategy_spans_them() -> None:
    w = info()

    def reason(strategy: str, count: int, workers: int, kind: str = "cpu", source: str = "synthetic",
               placement: str = "default") -> str | None:
        case = matrix.Case("w", kind, count, "off", "NHWC", placement, strategy, "fp32", source,
                           workers=workers)
        return matrix.invalid_reason(case, w)

    assert reason("distributed_replicated", 1, 2) is None
    assert reason("distributed_replicated", 4, 2, kind="gpu") is None
    assert reason("distributed_replicated", 2, 1, kind="gpu") == (
        "distributed_replicated needs at least 2 workers (one is replicated)")
    assert reason("distributed_replicated", 2, 2) == (
        "distributed_replicated runs one replica per CPU worker (MultiWorkerMirroredStrategy uses "
        "a worker's GPUs, or its one CPU)")
    assert reason("parameter_server", 1, 2) is None  # chief, 2 workers, a ps task
    assert reason("parameter_server", 1, 1) == (
        "parameter_server in one process needs at least 2 devices")
    assert reason("parameter_server", 2, 2) is None  # valid; skipped as not implemented yet
    assert reason("parameter_server", 1, 2, source="feed") == (
        "parameter_server across processes runs steps on remote workers: no host array to feed")
    assert reason("parameter_server", 1, 2, placement="ps_host") == (
        "ps_host is the host of one process; across processes the variables live on a ps task")
    assert reason("replicated", 2, 2) == "replicated runs in one process: workers 1"
    assert reason("single", 1, 2) == "single runs in one process: workers 1"
    smoke = set(matrix.generate({"w": w}, Tier.SMOKE))
    assert {(c.strategy, c.device_count) for c in smoke if c.workers == 2 and c.device_kind == "cpu"
            } == {("distributed_replicated", 1), ("parameter_server", 1), ("parameter_server", 2)}
    ps_workers_of_two = matrix.Case("w", "gpu", 2, "off", "NHWC", "default", "parameter_server",
                                    "fp32", workers=2)
    assert requirements.skip_reason(ps_workers_of_two, FOUR_GPUS) == (
        "parameter_server across processes: workers with several GPUs are not implemented "
        "yet (one replica per worker)")
    ps_cpu_workers_of_two = replace(ps_workers_of_two, device_kind="cpu")
    split = requirements.with_devices(ps_cpu_workers_of_two, CPU_ONLY, "cpu")
    assert requirements.skip_reason(split, CPU_ONLY) == (
        "parameter_server across processes: TensorFlow's ParameterServerStrategy replicates a "
        "worker over its GPUs only; a CPU worker is one replica")


def test_missing_devices_run_virtual_where_the_policy_allows() -> None:
    cpu2 = matrix.Case("w", "cpu", 2, "off", "NHWC", "default", "replicated", "fp32")
    split = requirements.with_devices(cpu2, CPU_ONLY, "cpu")
    assert split.virtual and split.id.startswith("w-virtual_cpu2-")
    assert requirements.skip_reason(split, CPU_ONLY) is None
    kept = requirements.with_devices(cpu2, CPU_ONLY, "off")
    assert not kept.virtual
    assert requirements.skip_reason(kept, CPU_ONLY) == (
        "needs 2 CPU devices, found 1 (--perf-virtual-devices=cpu splits the CPU into logical "
        "devices)")
    gpu2 = matrix.Case("w", "gpu", 2, "off", "NHWC", "default", "replicated", "fp32")
    one_gpu = Machine("Linux", "3.11", "2.21.0", "EPYC", 64, FOUR_GPUS.gpus[:1])
    assert not requirements.with_devices(gpu2, one_gpu, "cpu").virtual
    assert requirements.with_devices(gpu2, one_gpu, "all").virtual
    assert not requirements.with_devices(gpu2, CPU_ONLY, "all").virtual  # nothing to split


def test_storage_key_names_devices_and_tensorflow() -> None:
    # The CPU's instruction-set level too: test_machine_keys.py.
    assert CPU_ONLY.key() == "Linux-py3.11-tf2.21.0-Xeon-avx512-2cpu"
    assert FOUR_GPUS.key() == "Linux-py3.11-tf2.21.0-EPYC-avx512-64cpu-4xNVIDIA_H100_80GB_HBM3"
    assert FOUR_GPUS.key(virtual=True).endswith("-virtual")


def test_workers_start_with_onednn_on_unless_told_otherwise() -> None:
    """TensorFlow turns oneDNN on by itself only on CPUs with AVX512_VNNI, BF16 or AMX: the
    workers ask for it on every CPU kind, and a side or a shell that says 0 still wins."""
    from tfperf.cases import xla_modes

    assert xla_modes.environment("off", {})["TF_ENABLE_ONEDNN_OPTS"] == "1"
    off = xla_modes.environment("auto", {"TF_ENABLE_ONEDNN_OPTS": "0"})
    assert off["TF_ENABLE_ONEDNN_OPTS"] == "0" and "--tf_xla_auto_jit=2" in off["TF_XLA_FLAGS"]


def test_jit_cannot_spread_a_step_over_devices() -> None:
    case = matrix.Case("deepconn", "cpu", 2, "jit", "NHWC", "towers_split", "single", "fp32")
    reason = matrix.invalid_reason(case, info("deepconn", formats=("NHWC",), towers=True))
    assert reason == "towers_split spreads the step over devices; jit compiles it for one"


def test_generating_is_the_whole_product_judged_one_combination_at_a_time() -> None:
    """generate leaves values out before the product (tiers, layouts, precisions, preprocessing
    a workload lacks): the cases and their order are those of judging every combination."""
    workloads = {"a": info("a", formats=("NHWC",), preprocessing=False),
                 "c": replace(info("c"), precisions=("fp32", "mixed_fp16"), tier=Tier.NIGHTLY)}
    for only in ({}, {"workload": ["c", "a"], "xla": ["auto", "off"], "precision": ["fp32"]}):
        product = itertools.product(*[[v for v in a.values if v in only.get(a.name, a.values)]
                                      for a in matrix.AXES])
        valid = [matrix.Case(w, k, int(n), x, f, p, s, r, i, e, int(workers))
                 for k, n, workers, x, f, p, s, r, i, e in product
                 for w in only.get("workload", sorted(workloads))]
        valid = [c for c in valid if matrix.invalid_reason(c, workloads[c.workload]) is None]
        for tier in Tier:
            judged = sorted((c for c in valid if c.tier(workloads) <= tier),
                            key=lambda c: only.get("workload", sorted(workloads)).index(
                                c.workload))  # stable: the product's order within a workload
            assert list(matrix.generate(workloads, tier, only)) == judged, (tier, only)
