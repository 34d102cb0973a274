"""Which phase a worker is in, told to the runner as it changes: a failure is named for where
it happened, even one that kills the process before it can say anything. Each phase's
allocator peak is kept as it ends (telemetry.phase_memory)."""

from __future__ import annotations

from typing import IO, Any

from tfperf.processes import protocol


class Phases:
    def __init__(self, channel: IO[str]) -> None:
        self.channel = channel
        self.phase = "building"  # the runner's own assumption until told otherwise
        # A telemetry.phase_memory.PhasePeaks once TensorFlow is imported (this module is
        # imported before it is).
        self.memory: Any = None

    def enter(self, phase: str) -> None:
        if self.memory is not None:
            self.memory.close(self.phase)
        self.phase = phase
        protocol.send(self.channel, protocol.PHASE, phase=phase)
