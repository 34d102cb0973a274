"""What a bisection follows: the finding whose first build it places, and how a step's A/B
session says whether its candidate has it.

- `slower`: the A/B speed verdict (B/A of examples/s against the floor).
- `compile`, `first-step`, `memory`, `host-memory`: that A/B cost verdict (B/A over the duets
  against the cost floor; `higher` is the finding).
- `numerics`: the A/B numerics check (`differ` is the finding); its steps train the numerics
  arms.
- `configuration`: whether the candidate's case fails as configured (XLA ran where none may,
  devices or replicas other than named): a fact of one run, not an interval, so its steps
  measure the fewest pairs.

Every finding reads as worse (the candidate has it), not worse (it does not) or undecided, which
is all the search needs (tfperf.bisect.search); the step keeps the figure's own verdict and its
interval, so that a report says `higher, B/A 1.42 [1.38, 1.46]`, not `slower`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tfperf.ab import costs, session_report
from tfperf.bisect.levels import Level
from tfperf.ground.vocabulary import (
    COST_STATUS,
    FOLLOWED,
    FOLLOWS_CONFIGURATION,
    NOT_WORSE_VERDICTS,
    NUMERICS_STATUS,
    RUNS,
    UNDECIDED,
    WORSE_VERDICTS,
    Followed,
    StepVerdict,
)
from tfperf.options.ab_settings import ABSettings

# Each cost a bisection can follow, by the name --finding takes.
COSTS: dict[Followed, costs.Cost] = {
    "compile": costs.COSTS[0], "first-step": costs.COSTS[1], "memory": costs.COSTS[2],
    "host-memory": costs.COSTS[3]}


def finding(text: str) -> Followed:
    """--finding's value; a ValueError, one line, naming the valid ones."""
    for name in FOLLOWED:
        if text == name:
            return name
    raise ValueError(f"--finding: no finding {text!r}; valid: {', '.join(FOLLOWED)}")


def worse(verdict: str) -> bool | None:
    """True: the candidate has the finding; False: it does not; None: undecided."""
    if verdict in WORSE_VERDICTS:
        return True
    return False if verdict in NOT_WORSE_VERDICTS else None


def floor_of(followed: Followed, settings: ABSettings) -> float:
    """The floor a step of this finding is judged against by default: the speed floor, the
    cost's own, or none (numerics and configuration are not a ratio against a floor)."""
    if followed in COSTS:
        return settings.memory_cost_floor if COSTS[followed].memory else \
            settings.time_cost_floor
    return settings.floor if followed == "slower" else 0.0


def step_args(followed: Followed, level: Level, pairs: tuple[int, int],
              settings: ABSettings) -> tuple[list[str], list[str]]:
    """A step's A/B options at `level` (`pairs`: the bisection's first and last look): those a
    user's own arguments may override (whether the numerics arms train), and its level's,
    which come after them."""
    numerics = [f"--perf-ab-numerics={'on' if followed == 'numerics' else 'off'}"]
    if followed == FOLLOWS_CONFIGURATION:  # whether it runs shows before the first pair ends
        return numerics, [f"--perf-ab-pairs={pairs[0]}:{pairs[0]}"]
    level_args = [f"--perf-ab-confidence={level.confidence * 100:.6g}",
                  f"--perf-ab-pairs={min(level.min_pairs or pairs[0], pairs[1])}:{pairs[1]}"]
    if followed in COSTS:
        time_floor, memory_floor = settings.time_cost_floor, settings.memory_cost_floor
        if COSTS[followed].memory:
            memory_floor = level.floor
        else:
            time_floor = level.floor
        return numerics, [*level_args, f"--perf-ab-cost-floors={time_floor * 100:.6g}:"
                                       f"{memory_floor * 100:.6g}"]
    if followed == "numerics":  # the speed verdict is not what is followed: its default floor
        return numerics, level_args
    return numerics, [*level_args, f"--perf-ab-floor={level.floor * 100:.6g}"]


@dataclass(frozen=True)
class Reading:
    verdict: StepVerdict
    ratio: float  # B/A of the followed figure (of speed, where the figure has none)
    low: float
    high: float
    pairs: int


def read(followed: Followed, case: Mapping[str, Any], data: Mapping[str, Any]) -> Reading:
    """What a measured step's A/B case says of the followed finding."""
    settings = session_report.settings_of(dict(data))
    speed = session_report.final(dict(case), settings)
    ratio, low, high, pairs = ((speed.ratio, speed.low, speed.high, speed.pairs)
                               if speed is not None else (1.0, 1.0, 1.0, 0))
    if followed in COSTS:
        kept = ((case.get("costs") or {}).get("verdicts") or {}).get(COSTS[followed].key)
        if kept is None or kept.get("ratio") is None:
            return Reading(UNDECIDED, 1.0, 0.0, float("inf"), pairs)
        status = COST_STATUS.get(kept["status"]) or UNDECIDED
        return Reading(status, kept["ratio"], kept["low"], kept["high"], pairs)
    if followed == "numerics":
        said = NUMERICS_STATUS.get((case.get("numerics") or {}).get("status"))
        return Reading(said if said is not None else UNDECIDED, ratio, low, high, pairs)
    if followed == FOLLOWS_CONFIGURATION:
        return Reading(RUNS, ratio, low, high, pairs)
    assert speed is not None, "a measured step has a speed verdict"
    return Reading(speed.status, ratio, low, high, pairs)
