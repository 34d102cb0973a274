"""What a worker reports besides its rounds' times: what TensorFlow was built as, peak memory,
and, after the measured rounds, the input pipeline and the step each timed alone."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tfperf.processes import protocol

if TYPE_CHECKING:
    from tfperf.worker.pipelines import Source
    from tfperf.worker.training import loop

def build_info() -> dict[str, str | None]:
    """What TensorFlow was built as: its version and git hash, and the CUDA and cuDNN it was
    built against (None in a CPU-only build), part of every result's hard fingerprint; and the
    Keras beside it, a soft fact (a case's series across builds orders by it too)."""
    import keras
    import tensorflow as tf

    info = tf.sysconfig.get_build_info()
    return {"tensorflow": tf.__version__, "tensorflow_git": tf.version.GIT_VERSION,
            "cuda": info.get("cuda_version"), "cudnn": info.get("cudnn_version"),
            "keras": keras.__version__}


def peak_memory(device: str) -> int | None:
    import tensorflow as tf

    try:
        return int(tf.config.experimental.get_memory_info(device)["peak"])
    except (ValueError, tf.errors.OpError):
        return None


def peak_rss() -> int | None:
    """The process's peak resident set (VmHWM), in bytes."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


ALONE_BATCHES = 20  # batches the pipeline is timed over without training


ALONE_ROUNDS = 2  # rounds the step is timed over on device-resident batches


def step_alone(trainer: loop.Trainer, k: int, batch_examples: int) -> float:
    """Examples/s of the step with no input cost (the device-resident pool)."""
    trainer.run_round(k)  # traced and warm
    times = []
    for _ in range(ALONE_ROUNDS):
        start = time.perf_counter()
        trainer.run_round(k)
        times.append(time.perf_counter() - start)
    return batch_examples * k / sorted(times)[len(times) // 2]


def input_figures(source: Source, trainer: loop.Trainer, spec: protocol.WorkerSpec,
                   batch_examples: int) -> dict[str, Any]:
    """The pipeline alone and the step alone, for a case fed by a real pipeline."""
    pipeline = source.examples_per_sec_alone(ALONE_BATCHES)
    if pipeline is None:
        return {"pipeline_examples_per_sec": None, "step_examples_per_sec": None}
    return {"pipeline_examples_per_sec": pipeline,
            "step_examples_per_sec": step_alone(trainer, spec.steps_per_round, batch_examples)}
