"""Which measured rounds of a case get a yardstick burst of their own.

A burst is timed before every K-th measured round (`--perf-yardstick-every`, 1: every round)
and once after the last, so that every round has a burst on each side of its stretch. A round
between stands on the last burst, as an A/B side's turns do: its slot repeats that burst's rate,
and figures.beside_rounds rates each round against the faster of the two slots beside it. On a
CPU a burst is 0.1 s of both cores, where a tiny workload's round is a few milliseconds.
No TensorFlow here.
"""

from __future__ import annotations

from collections.abc import Callable

from tfperf.processes.protocol import Burst


class Bursts:
    """`time_one(number)` times one burst (`number`: how many were timed before it)."""

    def __init__(self, time_one: Callable[[int], Burst], every: int = 1) -> None:
        if every < 1:
            raise ValueError(f"a burst every {every} rounds: give 1 or more")
        self._time_one = time_one
        self._every = every
        self.rates: list[float] = []  # one per slot: before each round, and after the last
        self.cpu_shares: list[float | None] = []  # the timed bursts' only

    def before_round(self) -> None:
        if len(self.rates) % self._every:
            self.rates.append(self.rates[-1])
        else:
            self._timed()

    def after_last(self) -> None:
        self._timed()

    def _timed(self) -> None:
        burst = self._time_one(len(self.cpu_shares))
        self.rates.append(burst.rate)
        self.cpu_shares.append(burst.cpu_share)
