"""The allocator's peak in each phase of a case: whether a peak is the training
step's, its compilation's, or the harness's own work in the worker (the yardstick's products,
the XLA proof's round, the input figures read at the end).

Each phase ends by reading the device allocator's peak since the last reset, then resetting it;
a phase met again (a measured round after each yardstick) keeps its highest. The case's whole
peak is the highest of them: what one reading at the end gave before."""

from __future__ import annotations

import tensorflow as tf


class PhasePeaks:
    def __init__(self) -> None:
        self.device: str | None = None  # none until the case's devices are built
        self.peaks: dict[str, int] = {}

    def track(self, device: str) -> None:
        """Start on the case's first device (`CPU:0`, `GPU:0`); a device whose allocator keeps
        no statistics (TensorFlow's CPU allocator without oneDNN) is not tracked."""
        try:
            tf.config.experimental.get_memory_info(device)
        except (ValueError, tf.errors.OpError):
            return
        self.device = device

    def close(self, phase: str) -> None:
        """The phase that just ended: its peak kept, the allocator's statistics reset."""
        if self.device is None:
            return
        peak = int(tf.config.experimental.get_memory_info(self.device)["peak"])
        self.peaks[phase] = max(peak, self.peaks.get(phase, 0))
        tf.config.experimental.reset_memory_stats(self.device)

    def overall(self) -> int | None:
        return max(self.peaks.values()) if self.peaks else None
