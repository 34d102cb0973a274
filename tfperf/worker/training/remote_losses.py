"""Where a coordinator's scheduled steps leave their losses for the chief to read after join().

A step scheduled through a ClusterCoordinator returns nothing: it adds its loss to a variable on
the ps task, which the chief's main thread reads once after `join()`, as TensorFlow's
ParameterServerStrategy docs read their metrics. A step that returns its loss has it copied to
the chief by the coordinator thread that ran it, as the step ends
(`cluster_coordinator.Worker._process_closure` -> `RemoteValue.get` -> `values.copy_tensor`),
so with two workers two threads copy at once. The chief died of SIGSEGV there, its main thread
in `join()`, in 2 of 46 whole runs of the multi-process self-tests on a 2-vCPU Xeon
(docs/clusters.md).
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf


class RemoteLosses:
    def __init__(self, strategy: Any) -> None:
        with strategy.scope():  # on the ps task
            self._total = tf.Variable(0.0, trainable=False)
            self._first = tf.Variable(float("nan"), trainable=False)

    def add(self, loss: tf.Tensor) -> None:
        """In a scheduled step (traced): the round's first loss is the first one written. A
        round's first steps start together from the same weights, so whichever writes first
        is one of them; a later one finds it written."""
        self._first.assign(tf.where(tf.math.is_nan(self._first), loss, self._first))
        self._total.assign_add(loss)

    def start_round(self) -> None:
        self._total.assign(0.0)
        self._first.assign(float("nan"))

    def read(self, steps: int) -> tuple[float, float]:
        """After join(): the round's first loss and its mean over `steps` steps."""
        return float(self._first.numpy()), float(self._total.numpy()) / steps
