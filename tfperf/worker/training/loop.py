"""The training loop: a custom loop in tf.function, the same for every workload and strategy.

A round is K steps inside one tf.function call, so the host synchronises once per round (when
the caller reads the returned loss). Each step runs the per-replica forward and gradient (under
jit_compile in XLA `jit` mode), then applies the gradients outside XLA: compiling
`apply_gradients` under a distribution strategy fails (../shared/TF-NOTES.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from tfperf.worker import placements
from tfperf.worker.model import layers, precision
from tfperf.worker.telemetry import step_flops
from tfperf.worker.training.graph_functions import graph_function
from tfperf.worker.training.pool import POOL_BATCHES, pool_batches
from tfperf.worker.training.remote_losses import RemoteLosses
from tfperf.workload import ModelConfig, Workload

Preprocess = Callable[[tf.Tensor], tf.Tensor]


@dataclass
class RoundResult:
    first_loss: float  # loss of the round's first step
    mean_loss: float  # mean loss over the round's steps


class Trainer:
    def __init__(
        self,
        workload: Workload,
        config: ModelConfig,
        strategy: Any,
        device: str,
        jit_compile: bool,
        precision_name: str = "fp32",
        pool_size: int = POOL_BATCHES,
        batches: tuple[np.ndarray, np.ndarray] | None = None,
        remote_variables: bool = False,
        place: Callable[[Any], dict[str, str]] | None = None,
        coordinator: Any = None,
    ) -> None:
        self.workload = workload
        self.config = config
        self.device = device
        self.strategy = strategy
        with strategy.scope(), precision.policy(precision_name):
            self.model = workload.build_model(config)
            # Model parallelism: layers (and their variables) on the devices a placement names.
            self.assignment = place(self.model) if place else {}
            placements.apply(self.model, self.assignment)
            self.optimizer = precision.optimizer_for(precision_name, workload.optimizer(config))
            # Built inside the scope before the first step: a custom loop under a
            # collective all-reduce fails at its first traced step otherwise.
            self.optimizer.build(self.model.trainable_variables)
        self._loss_scaled = isinstance(self.optimizer, keras.optimizers.LossScaleOptimizer)
        self.replicas = int(strategy.num_replicas_in_sync)
        # The batches a step cycles through, config.batch_size per replica; callers that
        # compare runs pass their own.
        features, labels = batches if batches is not None else pool_batches(
            workload, replace(config, batch_size=config.batch_size * self.replicas), pool_size)
        pool_size = len(features)
        with tf.device(device):
            self.features = tf.constant(features)
            self.labels = tf.constant(labels)
        # Synthetic data lives on each replica's device, its own share of every batch: the
        # measured step pays no input cost.
        # One replica steps through the tensors above; several get their own shares, each on
        # its replica's device (not a second copy of the whole pool).
        self.coordinator = coordinator
        if coordinator is not None:
            # Steps run on remote workers: each worker cycles through the pool from its own
            # dataset, prefetched to its device.
            self._remote_batches = self.per_worker_batches(
                lambda: tf.data.Dataset.from_tensor_slices((features, labels)).repeat())
            # Read after join(), never returned: two coordinator threads copying steps'
            # returned losses at once crashed the chief (see remote_losses).
            self._remote_losses = RemoteLosses(strategy)
            self._remote_step = self.remote_step()
        elif self.replicas == 1:
            self.pool = (self.features, self.labels)
        else:
            self.pool = strategy.experimental_distribute_values_from_function(
                lambda context: self.replica_share(features, labels,
                                                   context.replica_id_in_sync_group))
        self.pool_size = pool_size
        # XLA cannot read a variable that lives on another device (parameter_server): there
        # the compiled function takes the variables' values, read on the replica's device.
        self._stateless = jit_compile and remote_variables
        self._jit_compile = jit_compile
        self._compute = self._compiled()
        self._pool_step = graph_function(self._step_on_pool)
        self._round = graph_function(self._train_round)
        self._step = tf.Variable(0, dtype=tf.int64, trainable=False)
        # Python in `step` runs only while a function is being traced: this counts traces of
        # the training step. One during the measured rounds means they did not see steady
        # state. (A retrace of the round alone reuses the compiled function, whose signature
        # is unchanged: XLA compilations are counted apart, see xla_compilations.)
        self.traces = 0
        self._updated: list[Any] = []

    def replica_share(self, features: np.ndarray, labels: np.ndarray, replica: int
                      ) -> tuple[tf.Tensor, tf.Tensor]:
        """Replica `replica`'s part of global batches (batch axis second)."""
        share = slice(replica * self.config.batch_size, (replica + 1) * self.config.batch_size)
        return tf.constant(features[:, share]), tf.constant(labels[:, share])

    def _loss_and_gradients(self, x: tf.Tensor, y: tf.Tensor
                            ) -> tuple[tf.Tensor, list[tf.Tensor], list[tf.Tensor]]:
        """The loss, the gradients the optimizer takes (scaled under float16 loss scaling) and
        the new values of the layers' statistics (batch norm's moving averages), which the
        caller assigns to `self._updated`."""
        with layers.deferred_updates() as updates, tf.GradientTape() as tape:
            outputs = self.model(x, training=True)
            loss = tf.reduce_mean(tf.cast(self.workload.loss(y, outputs), tf.float32))
            scaled = self.optimizer.scale_loss(loss) if self._loss_scaled else loss
        self._updated = [variable for variable, _ in updates]  # known once traced
        grads = tape.gradient(scaled, self.model.trainable_variables)
        if self.assignment:
            placements.colocate_gradients(tf.compat.v1.get_default_graph())
        return loss, grads, [value for _, value in updates]

    def _stateless_loss_and_gradients(
            self, trainable: list[tf.Tensor], non_trainable: list[tf.Tensor], x: tf.Tensor,
            y: tf.Tensor) -> tuple[tf.Tensor, list[tf.Tensor], list[tf.Tensor]]:
        """As _loss_and_gradients, on the variables' values instead of the variables."""
        with layers.deferred_updates() as updates, tf.GradientTape() as tape:
            tape.watch(trainable)
            outputs, _ = self.model.stateless_call(trainable, non_trainable, x, training=True)
            loss = tf.reduce_mean(tf.cast(self.workload.loss(y, outputs), tf.float32))
            scaled = self.optimizer.scale_loss(loss) if self._loss_scaled else loss
        self._updated = [variable for variable, _ in updates]
        return loss, tape.gradient(scaled, trainable), [value for _, value in updates]

    def _loss_gradients_statistics(self, x: tf.Tensor, y: tf.Tensor
                                   ) -> tuple[tf.Tensor, list[tf.Tensor], list[tf.Tensor]]:
        if not self._stateless:
            return self._compute(x, y)  # type: ignore[no-any-return]
        trainable = [tf.identity(v.value) for v in self.model.trainable_variables]
        non_trainable = [tf.identity(v.value) for v in self.model.non_trainable_variables]
        return self._compute(trainable, non_trainable, x, y)  # type: ignore[no-any-return]

    def gradients(self, batch: int = 0) -> tuple[tf.Tensor, list[tf.Tensor]]:
        """Loss and true (unscaled) gradients at the current weights on one pool batch, through
        the same compiled function as a training step; the weights are not updated.

        Called inside a graph, as the step calls it: called eagerly, a jit_compile function is
        compiled again, apart from the step's (twice the XLA compilation: ResNet-56's forward
        and gradient takes 10 s of it on two cores), and its gradients would come from another
        executable than the one that trains."""
        return graph_function(lambda: self._gradients(batch))()  # type: ignore[no-any-return]

    def _gradients(self, batch: int) -> tuple[tf.Tensor, list[tf.Tensor]]:
        loss, grads, _ = self._loss_gradients_statistics(self.features[batch], self.labels[batch])
        # Embedding gradients come as IndexedSlices: dense, so they compare like the rest.
        grads = [tf.convert_to_tensor(g) for g in grads]
        if self._loss_scaled:
            scale = tf.cast(self.optimizer.dynamic_scale, tf.float32)
            grads = [tf.cast(g, tf.float32) / scale for g in grads]
        return loss, grads

    def _replica_step(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        loss, grads, statistics = self._loss_gradients_statistics(x, y)
        for variable, value in zip(self._updated, statistics, strict=True):
            variable.assign(value)
        self.optimizer.apply(grads, self.model.trainable_variables)
        return loss

    def step(self, x: Any, y: Any, index: tf.Tensor | None = None,
             preprocess: Preprocess | None = None) -> tf.Tensor:
        """One training step on a batch (per-replica values under a strategy), or on batch
        `index` of per-replica pools; the mean loss. `preprocess` turns stored batches into
        model input on each replica's device. Traced inside the caller's tf.function."""

        self.traces += 1

        def replica(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
            if index is not None:
                # A slice of the pool's first axis, not tf.gather: TensorFlow's strided slice
                # aliases a contiguous, aligned first-axis slice where gather copies it, which
                # cost a memory-bound step (fused_elementwise: 64 MB a batch) 10 ms of 20.
                x, y = x[index], y[index]
            return self._replica_step(preprocess(x) if preprocess else x, y)

        loss = self.strategy.run(replica, args=(x, y))
        return self.strategy.reduce(tf.distribute.ReduceOp.MEAN, loss, axis=None)

    def loop(self, steps: tf.Tensor, train_step: Callable[[tf.Tensor], tf.Tensor]
             ) -> tuple[tf.Tensor, tf.Tensor]:
        """`steps` training steps in one graph loop; train_step(i) runs step i and gives its
        loss. Returns the first step's loss and the mean loss."""
        def body(i: tf.Tensor, first: tf.Tensor, total: tf.Tensor
                 ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
            loss = train_step(i)
            return i + 1, tf.where(i == 0, loss, first), total + loss

        _, first, total = tf.while_loop(
            lambda i, first, total: i < steps, body,
            (tf.zeros_like(steps), tf.constant(0.0), tf.constant(0.0)))
        return first, total / tf.cast(steps, tf.float32)

    def _step_on_pool(self, index: tf.Tensor) -> tf.Tensor:
        return self.step(*self.pool, index)

    def _train_round(self, steps: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        def from_pool(i: tf.Tensor) -> tf.Tensor:
            # The step as its own function, the one whole_step_graph traced: the round reuses
            # that trace (the optimizer's update alone is 2.3 s a trace for ResNet-56).
            return self._pool_step((self._step + tf.cast(i, tf.int64)) % self.pool_size)

        result = self.loop(steps, from_pool)
        self._step.assign_add(tf.cast(steps, tf.int64))
        return result

    def per_worker_batches(self, make_dataset: Callable[[], tf.data.Dataset]) -> Any:
        """Under a coordinator: an iterator, on each remote worker, over the dataset that
        `make_dataset` builds there (a step reads its batch where it runs; files it reads must
        be there too)."""
        strategy = self.strategy
        return iter(self.coordinator.create_per_worker_dataset(graph_function(
            lambda: strategy.distribute_datasets_from_function(lambda _: make_dataset()))))

    def remote_step(self, preprocess: Preprocess | None = None) -> Any:
        """Under a coordinator: one step on the next batch of a per_worker_batches iterator."""
        def step_on_next_batch(batches: Any) -> None:
            x, y = next(batches)
            # Nothing returned, so nothing is copied to the chief as the step ends.
            self._remote_losses.add(self.step(x, y, preprocess=preprocess))

        return graph_function(step_on_next_batch)

    def remote_round(self, steps: int, step: Any, args: Callable[[], tuple[Any, ...]]
                     ) -> RoundResult:
        """Under a coordinator: `steps` calls of `step` (a remote_step) on args(), each
        scheduled on whichever remote worker is free, then awaited; their losses read once,
        by this thread, after join()."""
        self._remote_losses.start_round()
        for _ in range(steps):
            self.coordinator.schedule(step, args=args())
        self.coordinator.join()
        return RoundResult(*self._remote_losses.read(steps))

    def run_round(self, steps: int) -> RoundResult:
        """K steps on the device-resident pool (no input cost), one host synchronisation
        (reading the losses). With a coordinator, K steps scheduled on whichever remote worker
        is free, then awaited."""
        if self.coordinator is not None:
            return self.remote_round(steps, self._remote_step, lambda: (self._remote_batches,))
        first, mean = self._round(tf.constant(steps))
        return RoundResult(float(first.numpy()), float(mean.numpy()))

    def _compiled(self) -> Any:
        """The forward and gradient function, compiled whole under jit_compile."""
        return graph_function(
            self._stateless_loss_and_gradients if self._stateless else self._loss_and_gradients,
            jit_compile=self._jit_compile)

    def force_retrace(self) -> None:
        """Test-only: fresh functions, so the next round traces again and, under jit_compile,
        compiles again (what a changed input signature or a captured Python value would cause
        in a real regression)."""
        self._compute = self._compiled()
        self._pool_step = graph_function(self._step_on_pool)
        self._round = graph_function(self._train_round)

    def step_graph(self, batch_size: int) -> Any:
        """A trace of one replica's forward and gradient at this batch size.

        The step's own compute function where its signature allows: the training step (and
        whole_step_graph) then reuse this trace instead of tracing the model again, which cost
        a case 1-6 seconds (ResNet-56 is 2.5 s a trace on two cores)."""
        function = graph_function(self._loss_and_gradients) if self._stateless \
            else self._compute
        return function.get_concrete_function(
            tf.TensorSpec((batch_size, *self.features.shape[2:]), self.features.dtype),
            tf.TensorSpec((batch_size, *self.labels.shape[2:]), self.labels.dtype),
        ).graph

    def whole_step_graph(self) -> Any:
        """A trace of one whole training step under the strategy: every replica's forward and
        gradient, the aggregation and the update. Under a coordinator, the function it sends
        to a worker, on one batch."""
        if self.coordinator is not None:
            return graph_function(self.step).get_concrete_function(
                tf.TensorSpec(self.features.shape[1:], self.features.dtype),
                tf.TensorSpec(self.labels.shape[1:], self.labels.dtype)).graph
        return self._pool_step.get_concrete_function(tf.TensorSpec((), tf.int64)).graph

    def flops_per_example(self, batch_size: int) -> float:
        """Matrix-product FLOPs of one step, read from a trace of forward and gradient."""
        return step_flops.count_graph(self.step_graph(batch_size)) / batch_size
