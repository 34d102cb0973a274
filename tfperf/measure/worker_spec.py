"""What a case's worker is told to run (its WorkerSpec), from the case, its workload and the
session's options: shared by the measured cases and the A/B comparison."""

from __future__ import annotations

from tfperf.cases.matrix import Case
from tfperf.options.consumers import WorkerOptions
from tfperf.processes.protocol import WorkerFaults, WorkerSpec
from tfperf.workload import WorkloadInfo


def logical_gpu_memory_mb(case: Case, gpu_memory_bytes: int) -> int | None:
    """Each logical GPU's share of the physical GPU's memory (TensorFlow needs a limit to
    split a GPU), with a tenth left for the runtime."""
    if not (case.virtual and case.device_kind == "gpu" and gpu_memory_bytes):
        return None
    return int(gpu_memory_bytes * 0.9 / case.device_count) >> 20


def worker_spec(options: WorkerOptions, case: Case, info: WorkloadInfo, gpu_memory_bytes: int
                ) -> WorkerSpec:
    size = options.size
    costs_up = options.faults.cost  # test-only
    return WorkerSpec(
        case=case.worker_axes(),
        workload_path=str(info.path),
        size=size,
        batch_size=options.batch_size or info.batch_size(size, case.precision),
        warmup_rounds=options.warmup_rounds,
        steps_per_round=options.steps_per_round,
        cache_dir=str(options.cache_dir),
        virtual=case.virtual,
        virtual_memory_mb=logical_gpu_memory_mb(case, gpu_memory_bytes),
        all_reduce=options.all_reduce,
        file_layout=options.file_layout,
        cluster=options.cluster,
        faults=WorkerFaults(
            retrace_round=1 if options.faults.retrace and options.faults.retrace in case.id
            else None,
            compile_s=costs_up.compile_s if costs_up else 0.0,
            memory_mb=costs_up.memory_mb if costs_up else 0),
    )


def injected_fraction(options: WorkerOptions, case: Case) -> float:
    """Test-only (--perf-inject-slowdown): the share of a round's time added to this case's."""
    injection = options.faults.slowdown
    return injection.fraction if injection and injection.pattern in case.id else 0.0
