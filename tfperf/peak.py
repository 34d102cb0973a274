"""The device's matrix-product rate: the denominator of MFU, measured, never looked up."""

from __future__ import annotations

import time
from typing import Any

import tensorflow as tf

# Big enough to be compute-bound. On the 2-core CPU 2048 already gives 4096's rate (fp32 208-212
# against 169-218 GFLOP/s, bf16 457-461 against 403-531, fp16 134-179 against 150-187: within the
# machine's noise) in a quarter of the time, which every session pays once per precision. A GPU
# needs more work per call to hide launch latency.
SIZES = {"CPU": 2048, "GPU": 8192}
CALLS = {"CPU": 4, "GPU": 20}
REPEATS = 3


def _best_seconds(function: Any, argument: tf.Tensor) -> float:
    """The best of REPEATS timed calls, after one untimed call (tracing, warm caches)."""
    function(argument).numpy()
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        function(argument).numpy()
        best = min(best, time.perf_counter() - start)
    return best


def matmul_flops_per_second(device: str, dtype: tf.DType) -> float:
    """Best of REPEATS timings of CALLS chained square products on `device`."""
    kind = "GPU" if "GPU" in device.upper() else "CPU"
    n, calls = SIZES[kind], CALLS[kind]
    with tf.device(device):
        a = tf.random.normal((n, n), dtype=tf.float32)
        a = tf.cast(a / n**0.5, dtype)

        @tf.function  # type: ignore[untyped-decorator]
        def chain(x: tf.Tensor) -> tf.Tensor:
            for _ in range(calls):
                x = tf.matmul(x, a)
            return tf.reduce_sum(tf.cast(x[0, :8], tf.float32))

        best = _best_seconds(chain, a)
    return 2 * n**3 * calls / best


COPY_BYTES = {"CPU": 64 << 20, "GPU": 1 << 30}
COPIES = 4


def copy_bytes_per_second(device: str) -> float:
    """The device's memory copy rate, bytes read plus written per second: best of REPEATS
    timings of COPIES chained device-to-device copies (DeepCopy, so none is elided) of a
    buffer far larger than the caches. The yardstick of memory-bound workloads."""
    kind = "GPU" if "GPU" in device.upper() else "CPU"
    nbytes = COPY_BYTES[kind]
    with tf.device(device):
        x = tf.random.uniform((nbytes // 4,), dtype=tf.float32)

        @tf.function  # type: ignore[untyped-decorator]
        def chain(x: tf.Tensor) -> tf.Tensor:
            for _ in range(COPIES):
                x = tf.raw_ops.DeepCopy(x=x)
            return x[0]

        best = _best_seconds(chain, x)
    return 2 * nbytes * COPIES / best
