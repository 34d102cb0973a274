"""Multi-process cases: which processes a case's cluster has, and how each learns its role.

A case with more than one worker is a cluster. On one machine the suite starts every task
itself over loopback: free ports, a `TF_CONFIG` per process, each in its own process group so
that the runner can end them all. A user who outgrows one machine runs the same case as one
task of a real cluster instead (`--perf-cluster=tf_config` or `slurm`): the suite then starts
only this machine's task and TensorFlow's cluster resolver reads the rest from the environment.

No TensorFlow here: the pytest process uses this module, and it never imports
TensorFlow.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from dataclasses import dataclass

CLUSTER_MODES = ("local", "tf_config", "slurm")
# ParameterServerStrategy's variables live on these many ps tasks.
PS_TASKS = 1


@dataclass(frozen=True)
class Task:
    type: str  # chief, worker or ps
    index: int
    # `worker`: it runs the case's training program (tfperf.worker). `server`: a bare
    # tf.distribute.Server that the chief's coordinator sends functions to.
    runs: str

    @property
    def name(self) -> str:
        return f"{self.type}:{self.index}"


def uses_servers(strategy: str) -> bool:
    """ParameterServerStrategy drives bare servers from one chief; every other multi-worker
    strategy runs the same training program in every worker (MultiWorkerMirroredStrategy)."""
    return strategy == "parameter_server"


def tasks(strategy: str, workers: int) -> list[Task]:
    """The case's processes, the one that reports to the runner first."""
    if uses_servers(strategy):
        return [Task("chief", 0, "worker"),
                *(Task("worker", i, "server") for i in range(workers)),
                *(Task("ps", i, "server") for i in range(PS_TASKS))]
    return [Task("worker", i, "worker") for i in range(workers)]


def jobs(strategy: str, workers: int) -> dict[str, int]:
    """Tasks per job, as cluster resolvers take them."""
    counts: dict[str, int] = {}
    for task in tasks(strategy, workers):
        counts[task.type] = counts.get(task.type, 0) + 1
    return counts


def free_ports(count: int) -> list[int]:
    """Ports free on loopback now. Every socket stays open until all are chosen, so no two
    are the same; another program may still take one before TensorFlow binds it, which fails
    the case with TensorFlow's own message rather than anything worse."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def loopback_spec(all_tasks: list[Task]) -> dict[str, list[str]]:
    """A cluster spec with every task on 127.0.0.1, each on its own free port."""
    ports = iter(free_ports(len(all_tasks)))
    spec: dict[str, list[str]] = {}
    for task in all_tasks:
        spec.setdefault(task.type, []).append(f"127.0.0.1:{next(ports)}")
    return spec


def tf_config(spec: Mapping[str, list[str]], task: Task) -> str:
    return json.dumps({"cluster": dict(spec), "task": {"type": task.type, "index": task.index}})
