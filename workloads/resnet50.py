"""ResNet-50 v1.5 for 1000 classes: the seeds' XLA headline workload (ImageNet shape).

A 7x7/2 stem and 3x3/2 max pool, four stages of bottleneck blocks (3, 4, 6, 3 blocks with 64,
128, 256 and 512 filters, expanded x4), stride on the 3x3 convolution (v1.5). The `full` size
trains 224x224 images; `tiny` keeps the whole network (every layer, 1000 classes) on 64x64
images so that a 2-core CPU runs a step in a fraction of a second.
"""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf
from _resnet import bottleneck_block, classifier, conv_bn, image_shape

from tfperf.worker.model.layers import MaxPool2D
from tfperf.worker.model.learnable_images import ImageBytes, learnable_images
from tfperf.workload import ModelConfig, Tier

CLASSES = 1000
STAGES = ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2))
IMAGE_SIZE = {"tiny": 64, "full": 224}


class ResNet50(ImageBytes):
    name = "resnet50"
    data_formats = ("NHWC", "NCHW")
    precisions = ("fp32", "mixed_bf16", "mixed_fp16")
    towers = False
    tier = Tier.SMOKE
    # The seeds' batch per GPU: 128 in fp32, 256 in mixed precision ("size:precision" keys).
    batch_sizes = {"tiny": 8, "full": 128, "full:mixed_fp16": 256, "full:mixed_bf16": 256}
    smoke_matrix = False

    def build_model(self, config: ModelConfig) -> keras.Model:
        fmt = config.data_format
        inputs = keras.Input(image_shape(IMAGE_SIZE[config.size], fmt))
        x = conv_bn(inputs, 64, 7, 2, fmt)
        x = MaxPool2D(3, 2, fmt)(x)
        for filters, blocks, stride in STAGES:
            for block in range(blocks):
                x = bottleneck_block(x, filters, stride if block == 0 else 1, fmt)
        return keras.Model(inputs, classifier(x, CLASSES, fmt), name=self.name)

    def optimizer(self, config: ModelConfig) -> keras.optimizers.Optimizer:
        return keras.optimizers.SGD(0.01, momentum=0.9)

    def make_batches(self, config: ModelConfig, count: int) -> tuple[np.ndarray, np.ndarray]:
        return learnable_images(config, count, CLASSES, IMAGE_SIZE[config.size])

    def loss(self, labels: tf.Tensor, outputs: tf.Tensor) -> tf.Tensor:
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, outputs)


WORKLOAD = ResNet50()
