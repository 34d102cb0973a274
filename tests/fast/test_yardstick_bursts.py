"""Which measured rounds get a yardstick burst of their own (--perf-yardstick-every), and what
the rounds between are rated against. A real session's: tests/real/test_yardstick.py."""

from __future__ import annotations

import pytest

from tfperf.measure.figures import beside_rounds
from tfperf.measure.yardstick_bursts import Bursts
from tfperf.processes.protocol import Burst


def _measured(rounds: int, every: int) -> tuple[Bursts, list[int]]:
    """Bursts around `rounds` rounds; the timed bursts' numbers. Each timed burst reads 100 plus
    its number, and had 0.9 of its cores."""
    timed: list[int] = []

    def time_one(number: int) -> Burst:
        timed.append(number)
        return Burst(100.0 + number, 0.9)

    bursts = Bursts(time_one, every)
    for _ in range(rounds):
        bursts.before_round()
    bursts.after_last()
    return bursts, timed


def test_every_round_has_a_burst_before_it_and_the_last_one_after() -> None:
    bursts, timed = _measured(3, 1)
    assert timed == [0, 1, 2, 3]
    assert bursts.rates == [100.0, 101.0, 102.0, 103.0]
    assert bursts.cpu_shares == [0.9] * 4


def test_the_rounds_between_stand_on_the_last_burst() -> None:
    bursts, timed = _measured(5, 2)
    assert timed == [0, 1, 2, 3]  # before rounds 1, 3 and 5, and after the last
    assert bursts.rates == [100.0, 100.0, 101.0, 101.0, 102.0, 103.0]
    assert bursts.cpu_shares == [0.9] * 4  # the timed bursts' only
    # Each round against the faster slot beside it: the next burst where it is the faster.
    assert beside_rounds([1.0] * 5, bursts.rates) == [100.0, 101.0, 101.0, 102.0, 103.0]


def test_a_burst_before_every_kth_round_and_after_the_last_whatever_the_rounds() -> None:
    for rounds in (1, 4, 5, 6, 20):
        _, timed = _measured(rounds, 5)
        assert len(timed) == -(-rounds // 5) + 1, rounds  # before rounds 1, 6, 11...; after


def test_a_burst_every_0_rounds_is_refused() -> None:
    with pytest.raises(ValueError, match="a burst every 0 rounds: give 1 or more"):
        Bursts(lambda number: Burst(1.0), 0)
