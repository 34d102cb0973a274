"""TensorFlow's cluster resolver for a cluster mode: where a multi-process case's tasks are.

`local` and `tf_config` read `TF_CONFIG` (the suite writes it for a local cluster; a real
cluster's launcher writes it for a joined one); `slurm` reads the Slurm job step's variables
(SLURM_PROCID, SLURM_STEP_NODELIST, SLURM_STEP_TASKS_PER_NODE, ...).
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf


def resolver(mode: str, device_kind: str, devices_per_task: int, jobs: dict[str, int]) -> Any:
    if mode in ("local", "tf_config"):
        return tf.distribute.cluster_resolver.TFConfigClusterResolver()
    if mode == "slurm":
        # The resolver gives each task of a node its own GPUs (CUDA_VISIBLE_DEVICES), after
        # checking that the node has GPUs for all its tasks; no node runs more tasks than the
        # whole job, so that bound never refuses a real layout. A CPU task takes no GPU: the
        # resolver divides by GPUs per task, so it counts one and sets nothing.
        per_task = devices_per_task if device_kind == "gpu" else 1
        return tf.distribute.cluster_resolver.SlurmClusterResolver(
            jobs=jobs,
            gpus_per_node=per_task * sum(jobs.values()),
            gpus_per_task=per_task,
            auto_set_gpu=device_kind == "gpu",
        )
    raise ValueError(f"cluster mode {mode!r}; valid: local, tf_config, slurm")


def worker_count(resolved: Any) -> int:
    """How many tasks of type worker the resolved cluster has."""
    return len(resolved.cluster_spec().as_dict().get("worker", []))
