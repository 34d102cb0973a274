"""DeepCoNN: the seeds' two-tower review model, rating prediction from review text.

Each tower reads one document of word ids (the user's reviews, the item's reviews) through a
word embedding shared by both towers, a 1-D convolution with tanh, a max pool (window 2,
stride 1), and a dense layer with relu; a factorization machine joins the two tower outputs
into a rating, trained with squared error (Zheng et al. 2017, as in the seeds). The towers are
independent until the join: the `towers_split` placement puts them on different devices.

Text has no image layout: the workload runs channels-last only (the matrix's NHWC value).
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
    vocabulary: int
    length: int  # words per document
    embedding: int
    filters: int


SHAPES = {
    "tiny": Shape(vocabulary=2000, length=64, embedding=32, filters=32),
    # The paper's sizes: 300-d embeddings, 100 filters of width 3, long concatenated reviews.
    "full": Shape(vocabulary=50000, length=512, embedding=300, filters=100),
}
KERNEL = 3
TOWER_UNITS = 64  # the seeds' dense layer
FM_FACTORS = 8
USER_TYPES = ITEM_TYPES = 8  # latent groups the synthetic ratings depend on


class FactorizationMachine(keras.layers.Layer):  # type: ignore[misc]
    """Rating = w0 + <w, x> + sum over factor pairs of x_i x_j <v_i, v_j>, in O(n k) form."""

    def __init__(self, factors: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.factors = factors

    def build(self, input_shape: tuple[int, ...]) -> None:
        n = int(input_shape[-1])
        self.w0 = self.add_weight(shape=(), initializer="zeros", name="w0")
        self.w = self.add_weight(shape=(n, 1), initializer="glorot_uniform", name="w")
        self.v = self.add_weight(shape=(n, self.factors), initializer=keras.initializers.RandomNormal(
            stddev=0.01), name="v")

    def call(self, x: tf.Tensor) -> tf.Tensor:
        linear = self.w0 + tf.squeeze(tf.matmul(x, self.w), -1)
        pairs = tf.square(tf.matmul(x, self.v)) - tf.matmul(tf.square(x), tf.square(self.v))
        return linear + 0.5 * tf.reduce_sum(pairs, -1)


def _tower(words: Any, embedding: keras.layers.Embedding, shape: Shape, name: str) -> Any:
    x = embedding(words)
    x = keras.layers.Conv1D(shape.filters, KERNEL, activation="tanh", name=f"{name}_conv")(x)
    x = keras.layers.MaxPooling1D(2, 1, name=f"{name}_pool")(x)
    x = keras.layers.Flatten(name=f"{name}_flat")(x)
    return keras.layers.Dense(TOWER_UNITS, activation="relu", name=f"{name}_dense")(x)


class DeepCoNN:
    name = "deepconn"
    data_formats = ("NHWC",)
    precisions = ("fp32", "mixed_bf16", "mixed_fp16")
    towers = True
    tier = Tier.SMOKE
    batch_sizes = {"tiny": 64, "full": 256}
    smoke_matrix = False

    def build_model(self, config: ModelConfig) -> keras.Model:
        shape = SHAPES[config.size]
        documents = keras.Input((2, shape.length), dtype="int32")  # user's, item's
        embedding = keras.layers.Embedding(shape.vocabulary, shape.embedding, name="words")
        user = _tower(documents[:, 0], embedding, shape, "user")
        item = _tower(documents[:, 1], embedding, shape, "item")
        joined = keras.layers.Concatenate()([user, item])
        # The rating in full precision whatever the policy, so the loss is too.
        rating = FactorizationMachine(FM_FACTORS, dtype=output_dtype(), name="fm")(joined)
        return keras.Model(documents, rating, name=self.name)

    def tower_of(self, layer_name: str) -> int | None:
        for tower, prefix in enumerate(("user_", "item_")):
            if layer_name.startswith(prefix):
                return tower
        return None  # the shared word embedding and the join

    def optimizer(self, config: ModelConfig) -> keras.optimizers.Optimizer:
        # Adam, as the DeepCoNN authors trained it (SGD learns the embeddings far slower).
        return keras.optimizers.Adam(2e-3)

    def make_batches(self, config: ModelConfig, count: int) -> tuple[np.ndarray, np.ndarray]:
        """Users and items belong to latent types; a type writes half its words from its own
        block of the vocabulary; the rating is a fixed function of the two types plus noise.
        Learnable from the words alone."""
        shape = SHAPES[config.size]
        rng = np.random.default_rng(config.seed)
        ratings = rng.uniform(-2.0, 2.0, (USER_TYPES, ITEM_TYPES)).astype(np.float32)
        block = shape.vocabulary // (USER_TYPES + ITEM_TYPES)
        users = rng.integers(0, USER_TYPES, (count, config.batch_size))
        items = rng.integers(0, ITEM_TYPES, (count, config.batch_size))

        def document(types: np.ndarray, first_block: int) -> np.ndarray:
            own = (first_block + types[..., None]) * block + rng.integers(
                0, block, (*types.shape, shape.length))
            anything = rng.integers(0, shape.vocabulary, own.shape)
            return np.where(rng.random(own.shape) < 0.5, own, anything).astype(np.int32)

        words = np.stack([document(users, 0), document(items, USER_TYPES)], axis=2)
        labels = ratings[users, items] + 0.1 * rng.standard_normal(users.shape, dtype=np.float32)
        return words, labels.astype(np.float32)

    def loss(self, labels: tf.Tensor, outputs: tf.Tensor) -> tf.Tensor:
        return tf.square(tf.cast(outputs, tf.float32) - labels)


WORKLOAD = DeepCoNN()
