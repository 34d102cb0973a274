"""Says it has an NCHW layout, but transposes NCHW input back to NHWC and convolves in NHWC:
the hidden transposes TF1 users paid for. The suite must catch it, not report an NCHW figure."""

from typing import Any

import keras
from _tiny import CLASSES, TinyCNN

from tfperf.worker.model.layers import FusedBatchNorm, output_dtype
from tfperf.workload import ModelConfig


class NhwcInside(TinyCNN):
    name = "nhwc_inside"

    def build_model(self, config: ModelConfig) -> Any:
        nchw = config.data_format == "NCHW"
        inputs = keras.Input((3, 8, 8) if nchw else (8, 8, 3))
        x = keras.layers.Permute((2, 3, 1))(inputs) if nchw else inputs
        x = keras.layers.Conv2D(8, 3, padding="same", use_bias=False)(x)
        x = keras.layers.ReLU()(FusedBatchNorm("NHWC")(x))
        x = keras.layers.GlobalAveragePooling2D()(x)
        return keras.Model(inputs, keras.layers.Dense(CLASSES, dtype=output_dtype())(x))


WORKLOAD = NhwcInside()
