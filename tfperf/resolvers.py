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
        gpus = devices_per_task if device_kind == "gpu" else 0
        tasks_on_a_node = None  # Slurm says how many tasks each node runs
        return tf.distribute.cluster_resolver.SlurmClusterResolver(
            jobs=jobs,
            tasks_per_node=tasks_on_a_node,
            # The resolver hands each task its own GPUs through CUDA_VISIBLE_DEVICES; a CPU
            # task gets none (its zero-GPU arithmetic fails, hence one per task, not set).
            gpus_per_node=gpus * max(jobs.values()) if gpus else max(jobs.values()),
            gpus_per_task=gpus or 1,
            auto_set_gpu=bool(gpus),
        )
    raise ValueError(f"cluster mode {mode!r}; valid: local, tf_config, slurm")


def worker_count(resolved: Any) -> int:
    """How many tasks of type worker the resolved cluster has."""
    return len(resolved.cluster_spec().as_dict().get("worker", []))
