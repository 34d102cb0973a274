"""FLOPs per example of the workloads at a size, for a plan's time model (see estimate):
counted once in a worker (tfperf.worker.telemetry.flop_census) and kept for the machine, as
the workload catalog is (tfperf.cases.catalog_cache): keyed by the size, the workloads
folder's files, the harness and the TensorFlow that counts them, so that a changed workload is
counted again and the same workloads in another checkout (a nightly's fresh clone) are not.
Counting builds every model at full size: 17-30 s on two cores."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from tfperf.cases import catalog_cache
from tfperf.ground.failures import CaseFailure
from tfperf.processes.worker_process import Worker
from tfperf.storage import files

TIMEOUT_S = 600.0  # building every full-size model on two cores, with room to spare


def _kept(directory: Path, size: str) -> Path:
    return catalog_cache.folder().parent / "flops" / f"{size}-{catalog_cache.key(directory)}.json"


def read(directory: Path, size: str, log_path: Path) -> tuple[dict[str, float], str]:
    """Each workload's FLOPs per example, and a note: "" when counted (now or before), else why
    the model falls back to ResNet-50's figure for every workload."""
    kept = _kept(directory, size)
    with contextlib.suppress(OSError, ValueError, AttributeError):
        return {k: float(v) for k, v in json.loads(kept.read_text()).items()}, ""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    worker = Worker(None, env, TIMEOUT_S, log_path, module="tfperf.worker.telemetry.flop_census",
                    args=(str(directory.resolve()), size))
    try:
        with worker:
            worker.phase = f"counting the FLOPs of the workloads in {directory}"
            found = worker.expect("census")["flops_per_example"]
    except CaseFailure as failure:
        return {}, f"FLOPs not counted ({failure.message}): every workload taken at ResNet-50's"
    with contextlib.suppress(OSError):
        files.write_growing(kept, found)  # whole or not at all, for a plan reading it at once
    return {k: float(v) for k, v in found.items()}, ""
