"""The device's yardsticks: its matrix-product rate (the denominator of MFU) and its memory copy
rate (that of memory-bound workloads), measured, never looked up.

A yardstick is timed between the measured rounds (before each, and once after the last), in
the same process as the training step, and each round is rated against the faster burst beside
it (a burst the machine disturbed reads low; none reads faster than the device). A shared
machine changes speed under the suite: on the 2-core CI machines the same 2048-square product
ran at about 145 GFLOP/s for some seconds and at about 190 for the next, in one process. A rate
measured once per session, and compared with rounds measured minutes later, carries that swing
into MFU; a rate measured beside each round cancels it. The burst is short (about 0.1 s on the
2-core CPU), and it is never inside the round's timing.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import tensorflow as tf

from tfperf.worker.training.graph_functions import graph_function

# Big enough to be compute-bound. On the 2-core CPU 2048 gives 4096's rate (fp32 208-212
# against 169-218 GFLOP/s, bf16 457-461 against 403-531: within the machine's noise). A GPU needs
# more work per burst to hide launch latency.
SIZES = {"CPU": 2048, "GPU": 8192}
CALLS = {"CPU": 1, "GPU": 4}
# Far larger than the caches, so that a copy reads and writes memory.
COPY_BYTES = {"CPU": 64 << 20, "GPU": 1 << 30}
COPIES = 4


def _kind(device: str) -> str:
    return "GPU" if "GPU" in device.upper() else "CPU"


class Yardstick:
    """`work` units (FLOPs or bytes) per call of a traced burst; `rate()` times one call."""

    def __init__(self, work: float, burst: Callable[[], tf.Tensor], on_cpu: bool) -> None:
        self.work = work
        self._burst = burst
        self._on_cpu = on_cpu
        self._burst().numpy()  # traced and warm: no first-call cost in any timed burst

    def rate(self, repeat: int = 1) -> tuple[float, float | None]:
        """Work per second of one burst and, on CPU, the share of the cores' time the process
        had meanwhile. `repeat` > 1 (test-only): the burst's work is done that many times and
        one's is reported, as a disturbed burst would read.

        Why the share: a burst splits one product evenly over the cores, so a core shared
        with another process makes the whole product wait for that core's half; with a busy
        loop on each of 2 cores a burst read 3x low while the rounds beside it ran 1.2x
        slower (benchmarks/yardstick_disturbance.py). The process's CPU time over the
        burst's wall time x cores says so directly: near 1 when the burst had the cores
        (TensorFlow's pool has one thread per core, and they spin while they wait)."""
        start, cpu_start = time.perf_counter(), time.process_time()
        for _ in range(repeat):
            self._burst().numpy()  # reading the result waits for the device
        seconds = time.perf_counter() - start
        share = (time.process_time() - cpu_start) / (seconds * len(os.sched_getaffinity(0))) \
            if self._on_cpu else None
        return self.work / seconds, share


def matmul(device: str, dtype: tf.DType) -> Yardstick:
    """FLOP/s of chained square products in `dtype` on `device` (a multiply-add is 2 FLOPs)."""
    kind = _kind(device)
    n, calls = SIZES[kind], CALLS[kind]
    with tf.device(device):
        # Entries of variance 1/n, so that chained products stay near 1. Uniform, not normal:
        # each worker draws it once, and on the 2-core CPU a normal draw took 0.05-0.13 CPU-s, a
        # uniform one 0.015, at the same rate after (484 against 485 GFLOP/s in fp32, 899
        # against 903 in bfloat16, medians of 15 bursts).
        bound = (3 / n) ** 0.5
        a = tf.cast(tf.random.uniform((n, n), -bound, bound, dtype=tf.float32), dtype)

    @graph_function
    def burst() -> tf.Tensor:
        with tf.device(device):
            x = a
            for _ in range(calls):
                x = tf.matmul(x, a)
            return tf.reduce_sum(tf.cast(x[0, :8], tf.float32))

    return Yardstick(2 * n**3 * calls, burst, kind == "CPU")


def copy(device: str) -> Yardstick:
    """Bytes read plus written per second by chained device-to-device copies (DeepCopy, so
    none is elided) of a buffer far larger than the caches."""
    kind = _kind(device)
    nbytes = COPY_BYTES[kind]
    with tf.device(device):
        x = tf.random.uniform((nbytes // 4,), dtype=tf.float32)

    @graph_function
    def burst() -> tf.Tensor:
        with tf.device(device):
            y = x
            for _ in range(COPIES):
                y = tf.raw_ops.DeepCopy(x=y)
            return y[0]

    return Yardstick(2 * nbytes * COPIES, burst, kind == "CPU")
