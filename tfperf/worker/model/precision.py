"""The precision axis: a Keras mixed-precision policy, and loss scaling where float16 needs it.

Variables stay float32 under every policy; workloads keep logits and loss in float32 (their
last layer is built with dtype="float32"). float16's narrow exponent underflows small
gradients, so `mixed_fp16` trains through Keras' dynamic LossScaleOptimizer; bfloat16 has
float32's exponent range and needs none.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import keras

POLICIES = {"fp32": "float32", "mixed_fp16": "mixed_float16", "mixed_bf16": "mixed_bfloat16",
            # Not a matrix value: the reference that XLA equivalence tolerances are set from.
            "fp64": "float64"}


@contextlib.contextmanager
def policy(precision: str) -> Iterator[None]:
    """Layers built inside take the precision's policy; the previous policy comes back after."""
    if precision not in POLICIES:
        raise ValueError(f"unknown precision {precision!r}; valid: {', '.join(POLICIES)}")
    previous = keras.mixed_precision.global_policy()
    keras.mixed_precision.set_global_policy(POLICIES[precision])
    try:
        yield
    finally:
        keras.mixed_precision.set_global_policy(previous)


def optimizer_for(precision: str, optimizer: keras.optimizers.Optimizer) -> keras.optimizers.Optimizer:
    if precision == "mixed_fp16":
        return keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer
