"""Where a case's devices and cluster tasks are, as the worker sees them."""

from __future__ import annotations

from typing import Any

from tfperf.processes import protocol
from tfperf.worker.proofs.case_checks import ConfigurationError


def split_device(kind: str, count: int, memory_mb: int | None) -> None:
    """Split the first physical device of `kind` into `count` logical devices; must run before
    TensorFlow's runtime starts."""
    import tensorflow as tf

    physical = tf.config.list_physical_devices(kind)
    if not physical:
        raise ConfigurationError(f"no physical {kind} device to split into {count}")
    config = tf.config.LogicalDeviceConfiguration(memory_limit=memory_mb if kind == "GPU" else None)
    tf.config.set_logical_device_configuration(physical[0], [config] * count)


def local_device(settings: Any, device: str) -> str:
    """`device` with the job and task whose ops it runs: this process's task, or a worker
    task for a coordinator's steps (sent to whichever worker is free)."""
    resolver = settings.resolver
    if resolver is None:
        return f"/job:localhost/replica:0/task:0{device}"
    if resolver.task_type == "chief":
        return f"/job:worker/replica:0/task:0{device}"
    return f"/job:{resolver.task_type}/replica:0/task:{resolver.task_id}{device}"


def resolver(spec: protocol.WorkerSpec, workers: int) -> Any:
    """Where the other tasks are; a proof that the cluster has the workers the case names."""
    from tfperf.processes import cluster
    from tfperf.worker.cluster import resolvers

    case = spec.case
    resolved = resolvers.resolver(spec.cluster, case["device_kind"], int(case["device_count"]),
                                  cluster.jobs(case["strategy"], workers))
    have = resolvers.worker_count(resolved)
    if have != workers:
        raise ConfigurationError(f"the case needs {workers} workers, the {spec.cluster} cluster "
                                 f"has {have}: {resolved.cluster_spec().as_dict()}")
    return resolved


def step_tasks(resolver: Any, coordinated: bool) -> dict[str, str]:
    """The remote tasks that run the steps (name -> address): a coordinator's workers."""
    if not coordinated:
        return {}
    addresses = resolver.cluster_spec().job_tasks("worker")
    return {f"worker:{i}": address for i, address in enumerate(addresses)}


def profile_folder(resolver: Any) -> str:
    """The folder of this task's profile: the cluster's tasks each write their own."""
    return "local" if resolver is None else f"{resolver.task_type}{resolver.task_id}"


def task_label(resolver: Any) -> str:
    """This task as the cluster names it, worker:1."""
    return f"{resolver.task_type}:{resolver.task_id}"
