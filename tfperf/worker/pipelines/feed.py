"""Host arrays fed at every step: TF2's feed_dict. Each step is its own call from Python with
NumPy arrays, which TensorFlow converts and copies to the device before the step can start:
the per-step host round trip the seeds warn against."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import tensorflow as tf

from tfperf.worker.pipelines import PipelineContext
from tfperf.worker.training.graph_functions import graph_function
from tfperf.worker.training.loop import RoundResult, Trainer


class FeedSource:
    def __init__(self, trainer: Trainer) -> None:
        self.trainer = trainer
        # Host copies of the pool: what a feed_dict loop holds in Python.
        self.features = trainer.features.numpy()
        self.labels = trainer.labels.numpy()
        self.next = 0
        self._step = graph_function(trainer.step)

    def _batch(self) -> tuple[np.ndarray, np.ndarray]:
        index = self.next % len(self.features)
        self.next += 1
        return self.features[index], self.labels[index]

    def _fed(self) -> tuple[Any, Any]:
        """The next batch as a step takes it: split among the replicas where there are several
        (each share copied to its replica's device, as a feed does)."""
        x, y = self._batch()
        trainer = self.trainer
        if trainer.replicas == 1:
            return x, y
        shares = trainer.strategy.experimental_distribute_values_from_function(
            lambda context: tuple(t[0] for t in trainer.replica_share(
                x[None], y[None], context.replica_id_in_sync_group)))
        return shares[0], shares[1]

    def round(self, steps: int) -> RoundResult:
        losses = [self._step(*self._fed()) for _ in range(steps)]
        values = [float(loss.numpy()) for loss in losses]
        return RoundResult(values[0], sum(values) / len(values))

    def examples_per_sec_alone(self, batches: int) -> float | None:
        """Host arrays converted and copied to the device, as each fed step does."""
        with tf.device(self.trainer.device):
            tf.identity(tf.convert_to_tensor(self._batch()[0]))  # first call: placement
            start = time.perf_counter()
            for _ in range(batches):
                features, labels = self._batch()
                copies = (tf.identity(tf.convert_to_tensor(features)),
                          tf.identity(tf.convert_to_tensor(labels)))
            for copy in copies:
                copy.numpy()  # wait for the last batch's copies
            seconds = time.perf_counter() - start
        return batches * len(features) / seconds


class Feed:
    name = "feed"

    def build(self, context: PipelineContext) -> FeedSource:
        return FeedSource(context.trainer)


PIPELINE = Feed()
