"""One task of a ParameterServerStrategy cluster, run as `python -m tfperf.worker.cluster.server`.

A worker or ps task is a bare TensorFlow server: the chief's coordinator sends it variables
and functions. It finds its role in `TF_CONFIG` (or, with `slurm` as its argument, in the
Slurm job step) and serves until it is ended: `Server.join` never returns, so the suite ends
the task's process group when the case is over, whatever happened.
"""

from __future__ import annotations

import os
import shutil
import sys

from tfperf.processes import cluster
from tfperf.processes.process_setup import without_plotting
from tfperf.worker.proofs import xla_compilations


def main(argv: list[str]) -> int:
    usage = "usage: python -m tfperf.worker.cluster.server local|tf_config|slurm WORKERS cpu|gpu [DEVICES]"
    if len(argv) not in (3, 4) or argv[0] not in cluster.CLUSTER_MODES \
            or argv[2] not in ("cpu", "gpu") or not all(a.isdigit() for a in argv[1:2] + argv[3:]):
        print(usage, file=sys.stderr)
        return 2
    mode, workers, kind = argv[0], int(argv[1]), argv[2]
    devices = int(argv[3]) if len(argv) == 4 else 1
    without_plotting()
    import tensorflow as tf

    from tfperf.worker.cluster import resolvers

    resolved = resolvers.resolver(mode, kind, devices, cluster.jobs("parameter_server", workers))
    # The chief proves XLA ran (or did not) here from this count (see xla_proof); it must be
    # switched on before the server starts TensorFlow's runtime, and start from nothing.
    address = resolved.cluster_spec().task_address(resolved.task_type, resolved.task_id)
    counted = xla_compilations.task_folder(address)
    shutil.rmtree(counted, ignore_errors=True)
    counted.mkdir(parents=True)
    xla_compilations.enable(os.environ, counted)
    # A worker runs one scheduled function per thread at a time; the coordinator keeps
    # several in flight, and with a single inter-op thread the servers deadlock silently
    # (../shared/TF-NOTES.md): at least workers + 1.
    config = tf.compat.v1.ConfigProto(inter_op_parallelism_threads=max(4, workers + 1))
    server = tf.distribute.Server(
        resolved.cluster_spec(),
        job_name=resolved.task_type,
        task_index=resolved.task_id,
        protocol=resolved.rpc_layer or "grpc",
        config=config,
        start=True,
    )
    print(f"serving as {resolved.task_type}:{resolved.task_id} at {server.target}",
          file=sys.stderr, flush=True)
    server.join()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
