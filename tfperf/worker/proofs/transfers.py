"""What a strategy moves between devices in one training step, read from the step's graph.

Two kinds, as TensorFlow builds them: edges between ops on different devices (a send/receive
pair each: the parameter server's variable reads and gradient pushes, model-parallel
activations), and collective all-reduces (the replicated strategies' gradients), counted with
their inputs' bytes summed over this process's replicas (each replica contributes its
gradients: a process's share of the traffic).
"""

from __future__ import annotations

from typing import Any

from tfperf.worker import placements
from tfperf.worker.telemetry.step_flops import live_ops

# The ops through which replicas exchange gradients.
COLLECTIVES = frozenset({"CollectiveReduce", "CollectiveReduceV2", "CollectiveReduceV3",
                         "CollectiveAllToAllV2", "CollectiveGatherV2", "NcclAllReduce"})


def all_reduces(graph: Any) -> placements.Copies:
    """Collective ops of one step and the bytes this process's replicas contribute to them."""
    count = nbytes = 0
    for op in live_ops(graph.outputs, graph.control_outputs):
        if op.type in COLLECTIVES:
            count += 1
            nbytes += placements.static_bytes(op.inputs[0])
    return placements.Copies(count, nbytes)


def per_step(graph: Any, default_device: str) -> dict[str, dict[str, int]]:
    copies = placements.copies(graph, default_device)
    reduces = all_reduces(graph)
    return {"copies": {"count": copies.count, "bytes": copies.bytes},
            "all_reduce": {"count": reduces.count, "bytes": reduces.bytes}}
