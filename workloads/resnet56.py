"""ResNet-56 for 32x32x3 images and 10 classes: the deeper CIFAR ResNet (nine basic blocks a
stage), where per-layer overheads (kernel launches, small convolutions) weigh more."""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf
from _resnet import cifar_resnet

from tfperf.synthetic import ImageBytes, learnable_images
from tfperf.tiers import Tier
from tfperf.workload import ModelConfig

CLASSES = 10


class ResNet56(ImageBytes):
    name = "resnet56"
    data_formats = ("NHWC", "NCHW")
    precisions = ("fp32", "mixed_bf16", "mixed_fp16")
    towers = False
    tier = Tier.SMOKE
    batch_sizes = {"tiny": 32, "full": 128}
    smoke_matrix = False

    def build_model(self, config: ModelConfig) -> keras.Model:
        return cifar_resnet(self.name, 56, config.data_format, CLASSES)

    def optimizer(self, config: ModelConfig) -> keras.optimizers.Optimizer:
        return keras.optimizers.SGD(0.05, momentum=0.9)

    def make_batches(self, config: ModelConfig, count: int) -> tuple[np.ndarray, np.ndarray]:
        return learnable_images(config, count, CLASSES, 32)

    def loss(self, labels: tf.Tensor, outputs: tf.Tensor) -> tf.Tensor:
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, outputs)


WORKLOAD = ResNet56()
