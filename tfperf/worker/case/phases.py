"""Which phase a worker is in, told to the runner as it changes: a failure is named for where
it happened, even one that kills the process before it can say anything."""

from __future__ import annotations

from typing import IO

from tfperf.processes import protocol


class Phases:
    def __init__(self, channel: IO[str]) -> None:
        self.channel = channel
        self.phase = "building"  # the runner's own assumption until told otherwise

    def enter(self, phase: str) -> None:
        self.phase = phase
        protocol.send(self.channel, protocol.PHASE, phase=phase)
