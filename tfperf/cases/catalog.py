"""The workload catalog: what the matrix knows of each workload module in a folder, read in a
worker process. Run as `python -m tfperf.cases.catalog FOLDER` by `read`.

Reading a workload module imports TensorFlow and Keras, 4.5-7 s on two cores, and the pytest
process needs none of it: it only generates cases, starts workers and judges their figures.
So the folder is read in a process of its own, forked from the session's zygote where there
is one (which imports TensorFlow for the workers anyway), and the pytest process never imports
TensorFlow. Where this process has TensorFlow already (the self-tests' process), the folder is
read here: the cost this avoids is paid. What a worker read is kept by what it was read from
(catalog_cache), so that the next session over the same files starts no process for it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from tfperf.cases import catalog_cache
from tfperf.ground.failures import CaseFailure
from tfperf.ground.tiers import Tier
from tfperf.processes import protocol
from tfperf.processes.process_setup import claim_stdout, without_plotting
from tfperf.processes.worker_process import Worker
from tfperf.workload import WorkloadError, WorkloadInfo, discover

CATALOG = "catalog"
# A cold TensorFlow import on a loaded two-core machine, with room to spare.
TIMEOUT_S = 300.0


def info_json(info: WorkloadInfo) -> dict[str, Any]:
    return {**asdict(info), "path": str(info.path), "tier": info.tier.label}


def _from_json(data: dict[str, Any]) -> WorkloadInfo:
    return WorkloadInfo(**{**data, "path": Path(data["path"]), "tier": Tier.parse(data["tier"]),
                           "data_formats": tuple(data["data_formats"]),
                           "precisions": tuple(data["precisions"])})


def read(directory: Path, log_path: Path) -> dict[str, WorkloadInfo]:
    """Every workload module in `directory`, by workload name; a WorkloadError names what is
    wrong (a broken module, a missing folder, a duplicate name)."""
    if "tensorflow" in sys.modules:
        return discover(directory)
    kept = catalog_cache.load(directory)
    if kept is not None:
        return {data["name"]: _from_json(data) for data in kept}
    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = ""  # reading modules needs no GPU and must not hold one
    worker = Worker(None, env, TIMEOUT_S, log_path, module="tfperf.cases.catalog",
                    args=(str(directory.resolve()),))
    try:
        with worker:
            worker.phase = f"reading the workloads in {directory}"
            answer = worker.expect(CATALOG)
    except CaseFailure as failure:
        raise WorkloadError(f"reading the workloads in {directory} failed: {failure.message} "
                            f"(log: {log_path})") from None
    if answer.get("error"):
        raise WorkloadError(answer["error"])
    catalog_cache.keep(directory, answer["workloads"])
    return {data["name"]: _from_json(data) for data in answer["workloads"]}


def main(argv: list[str]) -> int:
    without_plotting()
    channel = claim_stdout()
    if len(argv) != 1:
        print("usage: python -m tfperf.cases.catalog FOLDER", file=sys.stderr)
        return 2
    try:
        found = discover(Path(argv[0]))
    except WorkloadError as error:
        protocol.send(channel, CATALOG, error=str(error))
        return 0
    protocol.send(channel, CATALOG, workloads=[info_json(info) for info in found.values()])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
