"""Tiers: how much of the matrix runs, and how long each case is measured."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Tier(enum.IntEnum):
    """Ordered: a case in a lower tier is also in every higher one."""

    SMOKE = 0
    NIGHTLY = 1
    FULL = 2

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Tier:
        try:
            return cls[text.upper()]
        except KeyError:
            valid = ", ".join(t.label for t in cls)
            raise ValueError(f"unknown tier {text!r}; valid: {valid}") from None


@dataclass(frozen=True)
class Measurement:
    """How one case is measured: warm-up rounds are excluded, each round is K steps."""

    size: str  # the workload size: "tiny" trains on a 2-core CPU in seconds, "full" is GPU-sized
    warmup_rounds: int
    rounds: int
    steps_per_round: int


MEASUREMENT: dict[Tier, Measurement] = {
    # One warm-up round after the compiling one: the worker's XLA-proof round warms up too.
    Tier.SMOKE: Measurement(size="tiny", warmup_rounds=1, rounds=5, steps_per_round=5),
    Tier.NIGHTLY: Measurement(size="full", warmup_rounds=3, rounds=20, steps_per_round=20),
    Tier.FULL: Measurement(size="full", warmup_rounds=3, rounds=30, steps_per_round=50),
}
