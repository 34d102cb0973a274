"""A transformer encoder classifying token sequences: what users train now (not in the seeds).

Token and learned position embeddings, post-norm encoder layers (multi-head self-attention and
a GELU feed-forward block, each with a residual and layer norm, as BERT), mean pooling over the
sequence and a dense classifier. `full` is BERT-base's shape (12 layers, hidden 768, 12 heads,
feed-forward 3072, sequence 128); `tiny` is 2 layers at hidden 512 with 8 heads (BERT-small's
width, BERT's head size of 64) and sequence 128, at batch 8. Narrower, the step is overhead:
the feed-forward block's GELU, the layer norms, the softmax and Adam's per-variable updates
grow with the width while the products grow with its square. Measured in one process on the
2-core CPU, rounds interleaved, median MFU: 49% at hidden 256 (batch 16), 54% at 384 (batch
8), 61% at 512 (batch 8); at hidden 128 and sequence 64, 38%.

Sequences have no image layout: the workload runs channels-last only (the matrix's NHWC value).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from tfperf.worker.model.layers import output_dtype
from tfperf.workload import ModelConfig, Tier


@dataclass(frozen=True)
class Shape:
    layers: int
    hidden: int
    heads: int
    sequence: int
    vocabulary: int

    @property
    def feed_forward(self) -> int:
        return 4 * self.hidden


SHAPES = {
    "tiny": Shape(layers=2, hidden=512, heads=8, sequence=128, vocabulary=4000),
    "full": Shape(layers=12, hidden=768, heads=12, sequence=128, vocabulary=30522),
}
CLASSES = 16
OWN_WORDS = 4  # a class's own words (make_batches)


class PositionEmbedding(keras.layers.Layer):  # type: ignore[misc]
    def build(self, input_shape: tuple[int, ...]) -> None:
        self.table = self.add_weight(shape=tuple(input_shape[1:]), name="positions",
                                     initializer=keras.initializers.RandomNormal(stddev=0.02))

    def call(self, x: tf.Tensor) -> tf.Tensor:
        return x + self.table


def _encoder_layer(x: Any, shape: Shape, index: int) -> Any:
    attention = keras.layers.MultiHeadAttention(
        shape.heads, shape.hidden // shape.heads, name=f"attention_{index}")(x, x)
    x = keras.layers.LayerNormalization(epsilon=1e-12, name=f"attention_norm_{index}")(x + attention)
    y = keras.layers.Dense(shape.feed_forward, activation="gelu", name=f"intermediate_{index}")(x)
    y = keras.layers.Dense(shape.hidden, name=f"output_{index}")(y)
    return keras.layers.LayerNormalization(epsilon=1e-12, name=f"output_norm_{index}")(x + y)


class Transformer:
    name = "transformer"
    version = 2  # 2: data it learns from its first steps, Adam at 3e-4 on tiny (1: see below)
    data_formats = ("NHWC",)
    precisions = ("fp32", "mixed_bf16", "mixed_fp16")
    towers = False
    tier = Tier.SMOKE
    batch_sizes = {"tiny": 8, "full": 64}
    smoke_matrix = False

    def build_model(self, config: ModelConfig) -> keras.Model:
        shape = SHAPES[config.size]
        tokens = keras.Input((shape.sequence,), dtype="int32")
        x = keras.layers.Embedding(shape.vocabulary, shape.hidden, name="tokens")(tokens)
        x = PositionEmbedding(name="positions")(x)
        x = keras.layers.LayerNormalization(epsilon=1e-12, name="embedding_norm")(x)
        for index in range(shape.layers):
            x = _encoder_layer(x, shape, index)
        x = keras.layers.GlobalAveragePooling1D()(x)
        # Logits in full precision whatever the policy, so the loss is too.
        logits = keras.layers.Dense(CLASSES, dtype=output_dtype(), name="classifier")(x)
        return keras.Model(tokens, logits, name=self.name)

    def optimizer(self, config: ModelConfig) -> keras.optimizers.Optimizer:
        # Adam, as transformers are trained; SGD with momentum diverges on them. At 1e-3 on
        # tiny its first steps sent the loss from 2.8 to 5-8 before it fell (issue 52).
        return keras.optimizers.Adam(3e-4 if config.size == "tiny" else 1e-4)

    def make_batches(self, config: ModelConfig, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Each class writes a quarter of its tokens from its own few words (OWN_WORDS of the
        vocabulary), the rest at random: a sequence's class is in its words, spread over all
        positions. Few enough that every batch shows each class's words, so the loss falls
        from the first steps: drawn from a block of 250 words (version 1), each word was seen
        too seldom and the loss rose for tens of steps (issue 52: `loss_not_falling` in short
        A/B workers)."""
        shape = SHAPES[config.size]
        rng = np.random.default_rng(config.seed)
        labels = rng.integers(0, CLASSES, (count, config.batch_size), dtype=np.int32)
        block = shape.vocabulary // CLASSES
        own = labels[..., None] * block + rng.integers(0, OWN_WORDS,
                                                       (*labels.shape, shape.sequence))
        anything = rng.integers(0, shape.vocabulary, own.shape)
        tokens = np.where(rng.random(own.shape) < 0.25, own, anything).astype(np.int32)
        return tokens, labels

    def loss(self, labels: tf.Tensor, outputs: tf.Tensor) -> tf.Tensor:
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, outputs)


WORKLOAD = Transformer()
