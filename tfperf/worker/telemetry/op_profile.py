"""What a profiled round spent, op by op, and which XLA clusters it ran: read from
TensorFlow's profiler trace by the worker that wrote it (the pytest process imports no
TensorFlow), and sent whole in its PROFILED answer for the A/B's where-report
(tfperf/ab/where.py).

What a trace holds on this machine (TensorFlow 2.21, CPU), and so what is read:
- each TensorFlow op an executor ran, on its compute threads, named `scope/name:Type`;
- each HLO instruction XLA:CPU ran, with its module and instruction as stats (`hlo_module`,
  `hlo_op`), beside an `end: <instruction>` marker of no duration;
- each XLA module it ran, in the metadata plane, with its HloProto (so its instructions);
- memory events (`MemoryAllocation`, with `tf_op` and `allocation_bytes`) where the allocator
  traces them: in this harness's workers, oneDNN's CPU allocator (whose statistics the phases'
  peaks turn on) and XLA:CPU's buffers; a bare script's CPU allocator traced none.
Ops are grouped by type (a TensorFlow op) or instruction kind (`fusion.3` as `fusion`): two
builds name their scopes and instructions differently, and the report compares the sides.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

# The largest ops by time a side sends: a report lists the largest differences, and an op in
# one side's list but below the other's is unknown there (where.py), not taken as 0.
KEEP = 60
_NUMBERED = re.compile(r"\.\d+$")
_CLUSTER_SUFFIX = re.compile(r"_config_proto_.*$")
_CALLS = frozenset({"PartitionedCall", "StatefulPartitionedCall", "While", "StatelessWhile", "If",
                    "StatelessIf", "Case", "StatelessCase", "_XlaRun", "XlaLaunch"})


def _op(name: str, stats: dict[str, Any]) -> str | None:
    """The op an event ran, as the report groups it; None for the runtime's own events."""
    module, instruction = stats.get("hlo_module"), stats.get("hlo_op")
    if isinstance(instruction, str) and instruction:
        return f"xla:{_NUMBERED.sub('', instruction)}"
    if module is not None or name.startswith("end: ") or "::" in name or ": " in name:
        return None
    kind = name.rpartition(":")[2] if ":" in name else ""
    # A function called as an op holds the ops it ran: counted, they would be counted twice.
    if not kind or kind.startswith("__") or kind in _CALLS:
        return None
    return kind


def cluster_name(module: str) -> str:
    """An XLA module's name without the configuration hash it ends in."""
    return _CLUSTER_SUFFIX.sub("", module)


def _stats(stats: Any, names: dict[int, str]) -> dict[str, Any]:
    """An event's stats by name; a reference stat (an interned string) as its text."""
    found = {}
    for stat in stats:
        kind = stat.WhichOneof("value")
        found[names.get(stat.metadata_id, "")] = names.get(stat.ref_value) \
            if kind == "ref_value" else getattr(stat, kind) if kind else None
    return found


def _clusters(plane: Any, names: dict[int, str]) -> dict[str, int]:
    """Each XLA module the trace ran (its HloProto, in the metadata plane): instructions."""
    from tensorflow.compiler.xla.service import hlo_pb2

    found = {}
    for meta in plane.event_metadata.values():
        for stat in meta.stats:
            if names.get(stat.metadata_id) == "Hlo Proto":
                proto = hlo_pb2.HloProto()
                proto.ParseFromString(stat.bytes_value)
                found[cluster_name(proto.hlo_module.name or meta.name)] = sum(
                    len(c.instructions) for c in proto.hlo_module.computations)
    return found


def summarise(logdir: Path, steps: int) -> dict[str, Any]:
    """Each op's time (s per step) and count, the bytes allocated by op where traced, and each
    XLA cluster the round ran with its instruction count."""
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    seconds: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    allocated: dict[str, int] = defaultdict(int)
    clusters: dict[str, int] = {}
    for path in sorted(logdir.rglob("*.xplane.pb")):
        space = xplane_pb2.XSpace()
        space.ParseFromString(path.read_bytes())
        for plane in space.planes:
            events = {key: meta.name for key, meta in plane.event_metadata.items()}
            names = {key: meta.name for key, meta in plane.stat_metadata.items()}
            clusters |= _clusters(plane, names)
            for line in plane.lines:
                for event in line.events:
                    name = events.get(event.metadata_id, "")
                    stats = _stats(event.stats, names)
                    if name == "MemoryAllocation":
                        allocated[str(stats.get("tf_op") or "(no op named)")] += int(
                            stats.get("allocation_bytes") or 0)
                    elif (op := _op(name, stats)) is not None:
                        seconds[op] += event.duration_ps / 1e12
                        counts[op] += 1
    per_step = max(steps, 1)
    kept = sorted(seconds, key=lambda op: -seconds[op])[:KEEP]
    return {"steps": steps,
            "ops_s": sum(seconds.values()) / per_step,  # every op's, kept or not
            # Lists, not objects: message keys are written sorted, and order is the point.
            "ops": [[op, seconds[op] / per_step, counts[op] / per_step] for op in kept],
            "every_op": len(kept) == len(seconds),  # else an op not listed is not known
            "allocated_by_op": [[op, allocated[op] / per_step] for op in sorted(
                allocated, key=lambda op: -allocated[op])[:KEEP]],
            "clusters": sorted(clusters.items())}
