"""A workload whose initial weights differ from process to process (its classifier's kernel
takes noise from the operating system's entropy, not from the seed): XLA equivalence arms that
train at once start from different weights, which the check must notice and undo."""

from __future__ import annotations

import keras
import numpy as np
from _tiny import TinyCNN

from tfperf.workload import ModelConfig


class UnseededInit(TinyCNN):
    name = "unseeded_init"

    def build_model(self, config: ModelConfig) -> keras.Model:
        model = super().build_model(config)
        kernel = model.layers[-1].kernel
        noise = np.random.default_rng().normal(0.0, 0.5, kernel.shape)
        kernel.assign(kernel + noise.astype(np.float32))
        return model


WORKLOAD = UnseededInit()
