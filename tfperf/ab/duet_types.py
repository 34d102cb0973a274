"""What a case's duets are made of and what they yield: the two sides, each pair of turns, each
side's rounds, and the whole comparison. Its own module, so that duet.py (which runs the pairs)
and duet_pool.py (which starts and relays the workers) both read it and neither imports the
other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from tfperf.ab.verdict import Verdict
from tfperf.ground.vocabulary import SIDES as SIDES
from tfperf.ground.vocabulary import SideName
from tfperf.measure.figures import Measured
from tfperf.processes.protocol import WorkerSpec
from tfperf.processes.runtime import Runtime


@dataclass(frozen=True)
class Side:
    name: SideName
    role: str  # which it is: the reference (side A), the TensorFlow under test (side B)
    runtime: Runtime
    spec: WorkerSpec
    inject_fraction: float = 0.0  # test-only: B's rounds only (--perf-inject-slowdown)

    def label(self) -> str:
        return f"side {self.name} ({self.role}, {self.runtime.describe()})"


@dataclass(frozen=True)
class Pair:
    duet: int
    order: Literal["AB", "BA"]  # "AB": A's round ran first
    a_rate: float  # examples/s
    b_rate: float
    at_s: float  # since the first pair began
    rounds: int = 1  # in each side's turn
    # Each turn's yardstick burst (its device's rate, measured just before it): how fast the
    # machine was for each side's turn.
    a_yardstick: float | None = None
    b_yardstick: float | None = None
    # CPU cores busy during the turns (mean of the two): the worker whose turn it was, and the
    # others together, which should be asleep. None where /proc cannot say.
    active_cores: float | None = None
    idle_cores: float | None = None
    # Each turn's rounds' wall seconds, and the CPU seconds its worker process (all its threads)
    # spent on them: other figures of the same turns than examples/s by wall time.
    a_round_s: tuple[float, ...] | None = None
    b_round_s: tuple[float, ...] | None = None
    a_cpu_s: float | None = None
    b_cpu_s: float | None = None

    @property
    def ratio(self) -> float:
        return self.b_rate / self.a_rate

    def to_json(self) -> dict[str, Any]:
        return {"duet": self.duet, "order": self.order, "a_rate": self.a_rate,
                "b_rate": self.b_rate, "at_s": self.at_s, "rounds": self.rounds,
                "a_yardstick": self.a_yardstick, "b_yardstick": self.b_yardstick,
                "active_cores": self.active_cores, "idle_cores": self.idle_cores,
                "a_round_s": None if self.a_round_s is None else list(self.a_round_s),
                "b_round_s": None if self.b_round_s is None else list(self.b_round_s),
                "a_cpu_s": self.a_cpu_s, "b_cpu_s": self.b_cpu_s}


@dataclass
class SideRounds:
    """One side's rounds over all duets, in the order they ran."""

    readies: dict[int, dict[str, Any]] = field(default_factory=dict)
    finished: dict[int, dict[str, Any]] = field(default_factory=dict)
    round_s: list[float] = field(default_factory=list)
    yardstick_rates: list[float] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    def measured(self, telemetry: dict[str, Any], wall_s: float) -> Measured:
        """As one measurement of the side: duet 1's worker's own figures, every duet's
        rounds."""
        return Measured(self.readies[1], self.finished[1], self.round_s, self.yardstick_rates,
                        self.losses, telemetry, None, wall_s)


@dataclass
class Comparison:
    """One case's duets run to their decided look: the pairs, each side's rounds, the looks."""

    pairs: list[Pair]
    sides: dict[SideName, SideRounds]
    verdicts: list[Verdict]  # one per look taken
    telemetry: dict[str, Any]  # the GPUs' during the measured rounds
    wall_s: float
    rounds_s: float  # the measured pairs, and the relays between them
    relay_s: float = 0.0  # of which: duets ending and fresh ones starting (settings.relay)
