"""Each bisection step's level and floor: how the steps' errors add up to at most 5%.

A bisection names the wrong culprit only if some step's verdict is wrong, and a decided verdict
is wrong only if its A/B interval missed the true B/A at some look (tfperf.ab.verdict: repeated
confidence intervals). Two kinds of wrong verdict matter:
- `slower` at a candidate before the culprit: its true B/A against the good end lies within
  the floor of 1, yet the whole interval lies below 1 - floor;
- `same` at or after the culprit: its true B/A lies below 1 - floor, yet the whole interval
  lies within the floor.
Either needs the interval to miss the truth. So if step i's intervals hold the truth with
probability 1 - alpha_i, the culprit is wrong with probability at most sum(alpha_i) (Boole's
inequality; no independence between steps is assumed). The error is spent so:
- The plan: one confirmation and ceil(log2(N - 1)) halvings of N candidates, K verdicts in
  all; each gets ERROR / (K + 1).
- The last share is kept for verdicts beyond the plan, which skipped candidates (a skipped
  midpoint's neighbour may leave a larger half) and other halves (search.py: the bad end
  against an undecided midpoint) force: the j-th such verdict gets ERROR / (K + 1) / 2^j, and
  these sum to less than one share.
The floor: the confirmation uses the A/B floor; every later step uses half the least slowdown
the confirmation's interval admits (never less than the A/B floor). A culprit that carries the
whole confirmed slowdown is then at least twice the steps' floor from "no change", and a
smaller change elsewhere in the range (below the floor) moves no bad end: its step says `same`
and the report names it as a change the bisection did not split. What the claim assumes: the
A/B interval's own assumptions (docs/ab.md), a culprit of at least twice the floor, and no
other change between the ends beyond the floor. `tests/fast/test_bisect_search.py` checks it by
simulating the steps' A/B sessions through the verdict code itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ERROR = 0.05  # the chance of a wrong culprit, at most


@dataclass(frozen=True)
class Level:
    floor: float  # the least change a step's verdict calls slower or faster
    alpha: float  # the chance that the step's decided verdict is wrong, at most
    # The pairs of the step's first look, if not the A/B default: the confirmation measures
    # more before it may stop, since the steps' floor is half the slowdown its interval admits
    # (an interval that stops at its first decided look lies just past the floor).
    min_pairs: int | None = None

    @property
    def confidence(self) -> float:
        return 1 - self.alpha


def planned_verdicts(count: int) -> int:
    """The confirmation and the halvings that `count` candidates (both ends included) need."""
    return 1 + math.ceil(math.log2(max(count - 1, 1)))


def step_alpha(number: int, planned: int, error: float = ERROR) -> float:
    """The level of the `number`-th verdict (from 1) of a bisection planned for `planned`."""
    share = error / (planned + 1)
    return share if number <= planned else share / 2 ** (number - planned)


def step_floor(confirmed_high: float, ab_floor: float) -> float:
    """Half the least slowdown the confirmation's interval admits (its upper B/A bound), and
    never less than the A/B floor."""
    return max(ab_floor, (1 - confirmed_high) / 2)
