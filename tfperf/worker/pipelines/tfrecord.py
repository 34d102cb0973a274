"""TFRecord files read with tf.data: interleave across files, batch, parse the whole batch at
once, preprocess, prefetch (the seeds' pipeline; parsing after batching is several times faster
than parsing each example, ../shared/TF-NOTES.md).

Preprocessing (uint8 images to float) runs in the pipeline on the host, or, with the case's
`preprocess=device`, inside the step on the device: the dataset then carries the compact form.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import tensorflow as tf

from tfperf.worker.pipelines import PipelineContext
from tfperf.worker.training import tfrecord_cache
from tfperf.worker.training.graph_functions import graph_function
from tfperf.worker.training.loop import RoundResult, Trainer
from tfperf.workload import Preprocessed

# Enough examples that the pipeline reads real files, not one cached batch; capped in bytes
# for the full sizes.
MAX_BATCHES = 32
MIN_BATCHES = 2
TARGET_BYTES = 256 << 20
SHUFFLE_BATCHES = 2


def _stored_batches(trainer: Trainer) -> tuple[np.ndarray, np.ndarray]:
    """The workload's data in the form written to disk (encoded where it has an encoding)."""
    workload, config = trainer.workload, trainer.config
    stored_batch = trainer.features[0].numpy()
    if isinstance(workload, Preprocessed):
        stored_batch = workload.encode(stored_batch)
    count = int(np.clip(TARGET_BYTES // max(stored_batch.nbytes, 1), MIN_BATCHES, MAX_BATCHES))
    features, labels = workload.make_batches(config, count)
    if isinstance(workload, Preprocessed):
        features = workload.encode(features)
    # Examples along the first axis: batches are the pipeline's job.
    return (features.reshape(-1, *features.shape[2:]), labels.reshape(-1, *labels.shape[2:]))


def dataset(entry: tfrecord_cache.Entry, batch_size: int,
            preprocess: Any | None) -> tf.data.Dataset:
    spec = {"x": tf.io.FixedLenFeature([], tf.string), "y": tf.io.FixedLenFeature([], tf.string)}

    def parse(serialized: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        parsed = tf.io.parse_example(serialized, spec)
        x = tf.reshape(tf.io.decode_raw(parsed["x"], tf.as_dtype(entry.feature_dtype)),
                       (batch_size, *entry.feature_shape))
        y = tf.reshape(tf.io.decode_raw(parsed["y"], tf.as_dtype(entry.label_dtype)),
                       (batch_size, *entry.label_shape))
        return x, y

    files = tf.data.Dataset.from_tensor_slices([str(f) for f in entry.files]).repeat()
    records = files.interleave(tf.data.TFRecordDataset, cycle_length=min(8, len(entry.files)),
                               num_parallel_calls=tf.data.AUTOTUNE, deterministic=False)
    batches = (records.shuffle(SHUFFLE_BATCHES * batch_size)
               .batch(batch_size, drop_remainder=True)
               .map(parse, num_parallel_calls=tf.data.AUTOTUNE))
    if preprocess is not None:
        batches = batches.map(lambda x, y: (preprocess(x), y), num_parallel_calls=tf.data.AUTOTUNE)
    return batches.prefetch(tf.data.AUTOTUNE)


class TFRecordSource:
    def __init__(self, context: PipelineContext) -> None:
        trainer = context.trainer
        workload, config = trainer.workload, trainer.config
        features, labels = _stored_batches(trainer)
        name = f"{workload.name}-{config.size}-{config.data_format}-b{config.batch_size}"
        self.entry = tfrecord_cache.ensure(context.cache_dir, name, context.file_layout,
                                           features, labels)
        preprocess = workload.preprocess if isinstance(workload, Preprocessed) else None
        on_device = preprocess if context.preprocess_on_device else None
        on_host = None if context.preprocess_on_device else preprocess
        global_batch = config.batch_size * trainer.strategy.num_replicas_in_sync
        self.dataset = dataset(self.entry, global_batch, on_host)
        self._remote: Callable[[int], RoundResult] | None = None
        if trainer.coordinator is not None:
            # Each remote worker reads the files itself (on a real cluster the cache folder
            # must be shared storage), as its steps run there.
            batches = trainer.per_worker_batches(
                lambda: dataset(self.entry, global_batch, on_host))
            step = trainer.remote_step(on_device)
            self._remote = lambda steps: trainer.remote_round(steps, step, lambda: (batches,))
            return
        iterator = iter(trainer.strategy.experimental_distribute_dataset(self.dataset))

        def train_step(i: tf.Tensor) -> tf.Tensor:
            x, y = next(iterator)
            return trainer.step(x, y, preprocess=on_device)

        self._round = graph_function(lambda steps: trainer.loop(steps, train_step))

    def round(self, steps: int) -> RoundResult:
        if self._remote is not None:
            return self._remote(steps)
        first, mean = self._round(tf.constant(steps))
        return RoundResult(float(first.numpy()), float(mean.numpy()))

    def examples_per_sec_alone(self, batches: int) -> float | None:
        iterator = iter(self.dataset)
        for _ in range(2):  # threads started, buffers filled
            next(iterator)
        start = time.perf_counter()
        examples = 0
        for _ in range(batches):
            x, _ = next(iterator)
            examples += int(x.shape[0])
        return examples / (time.perf_counter() - start)


class TFRecord:
    name = "tfrecord"

    def build(self, context: PipelineContext) -> TFRecordSource:
        return TFRecordSource(context)


PIPELINE = TFRecord()
