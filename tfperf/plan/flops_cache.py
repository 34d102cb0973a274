"""FLOPs per example of the workloads at a size, for a plan's time model (see estimate):
counted once in a worker (tfperf.worker.telemetry.flop_census) and kept in the cache folder, keyed by
the size and the workloads folder's contents, so a changed workload is counted again."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from tfperf.ground.failures import CaseFailure
from tfperf.processes.worker_process import Worker

TIMEOUT_S = 600.0  # building every full-size model on two cores, with room to spare


def _digest(directory: Path) -> str:
    hashed = hashlib.sha256()
    for path in sorted(directory.glob("*.py")):
        hashed.update(path.name.encode() + b"\0" + path.read_bytes())
    return hashed.hexdigest()[:16]


def read(directory: Path, size: str, cache_dir: Path, log_path: Path) -> tuple[dict[str, float], str]:
    """Each workload's FLOPs per example, and a note: "" when counted (now or before), else why
    the model falls back to ResNet-50's figure for every workload."""
    cached = cache_dir / f"flops-{size}-{_digest(directory)}.json"
    if cached.exists():
        return {k: float(v) for k, v in json.loads(cached.read_text()).items()}, ""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    worker = Worker(None, env, TIMEOUT_S, log_path, module="tfperf.worker.telemetry.flop_census",
                    args=(str(directory.resolve()), size))
    try:
        with worker:
            worker.phase = f"counting the FLOPs of the workloads in {directory}"
            found = worker.expect("census")["flops_per_example"]
    except CaseFailure as failure:
        return {}, f"FLOPs not counted ({failure.message}): every workload taken at ResNet-50's"
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(found, indent=1, sort_keys=True))
    return {k: float(v) for k, v in found.items()}, ""
