"""The bisection, apart from how a step runs: which candidate each step compares with which, at
what level, and what the steps' verdicts allow it to say.

Candidates are in order, the good end first and the bad end last. The first step confirms the
ends: an A/B of the bad end (side B) against the good one (side A) must say `slower`, else
there is nothing to bisect. Then each step is an A/B of the midpoint of the open range against
its good end: `slower` moves the bad end there, `same` (or `faster`) moves the good end. When
the two ends are neighbours, the bad end is the culprit and the good end the last good. A step
still `undecided` at its last look (a change near the floor between its sides, or noise) asks
the other half instead: the bad end against the midpoint. `slower` there moves the good end to
the midpoint (the confirmed slowdown lies after it), `same` or `faster` moves the bad end (it
lies before); the undecided half is reported as a change not split. Both undecided stop the
bisection with the range it could not split; it never guesses. A candidate that cannot be
built or imported, or whose case fails, is skipped (as asv skips a commit that does not build)
and a neighbour inside the range is tried instead; a range whose every inner candidate was
skipped is reported as such.

Each verdict may be wrong; the culprit is wrong only if some step's verdict is (levels.py
says how each step's level is set so that this happens at most 5% of the time).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tfperf.ab.verdict import SAME, UNDECIDED
from tfperf.bisect import levels
from tfperf.bisect.followed import worse
from tfperf.bisect.levels import Level
from tfperf.ground.vocabulary import BISECT as BISECT
from tfperf.ground.vocabulary import CONFIRM as CONFIRM
from tfperf.ground.vocabulary import EACH as EACH
from tfperf.ground.vocabulary import END_FAILED as END_FAILED
from tfperf.ground.vocabulary import FOUND as FOUND
from tfperf.ground.vocabulary import NOT_APART as NOT_APART
from tfperf.ground.vocabulary import OTHER_HALF as OTHER_HALF
from tfperf.ground.vocabulary import OUT_OF_TIME as OUT_OF_TIME
from tfperf.ground.vocabulary import RUNNING, SKIPPED, Followed, StepVerdict
from tfperf.ground.vocabulary import SCANNED as SCANNED
from tfperf.ground.vocabulary import Outcome as Outcome
from tfperf.ground.vocabulary import Role as Role

# Findings whose steps' verdicts are not a ratio against a floor: nothing lies "below" it.
UNFLOORED: tuple[Followed, ...] = ("numerics", "configuration")

# The confirmation's first look (tfperf-bisect's --confirm-pairs default): the steps' floor is
# half the slowdown its interval admits, so it measures more than a step. 384 under the trimmed
# rule, whose early intervals are wide (its directions spend late): at 128 a 10% culprit's
# confirmation admitted 2%, the steps' floor stayed at the A/B floor, and a bisection of 16
# commits took 23.5 minutes (median) at 9% a pair; at 384, 11.7 (benchmarks/bisect_sim.py).
CONFIRM_PAIRS = 384


@dataclass(frozen=True)
class Judged:
    """One step's A/B of a candidate (side B) against a good end (side A): the followed
    figure's verdict and interval (tfperf.bisect.followed)."""

    verdict: StepVerdict
    ratio: float  # B/A
    low: float
    high: float
    pairs: int
    seconds: float
    sides: dict[str, dict[str, Any]] = field(default_factory=dict)  # version, git hash, spec
    session: str = ""  # the step's A/B session id (its file and its store rows)
    # What else differs between the step's sides (tfperf.ab.differences).
    differences: list[dict[str, str]] = field(default_factory=list)
    note: str = ""  # a candidate that fails as configured: how (its failure's message)


@dataclass(frozen=True)
class Unusable:
    """A step that measured nothing: the candidate could not be built, imported or run."""

    reason: str
    seconds: float = 0.0


Result = Judged | Unusable
# (candidate, good end, level) -> the step's result.
Judge = Callable[[int, int, Level], Result]


@dataclass(frozen=True)
class Step:
    role: Role
    candidate: int
    against: int
    level: Level
    result: Result


@dataclass
class Bisection:
    count: int  # candidates, both ends included
    planned: int  # the verdicts the levels were planned for
    steps: list[Step] = field(default_factory=list)
    outcome: Outcome = RUNNING
    good: int = 0  # the range the culprit lies in: (good, bad]
    bad: int = 0
    floor: float = 0.0  # the steps' floor after the confirmation
    skipped: dict[int, str] = field(default_factory=dict)
    followed: Followed = "slower"  # the finding whose first build it places

    @property
    def culprit(self) -> int | None:
        return self.bad if self.outcome == FOUND else None

    def below_floor(self) -> list[Step]:
        """Bisection steps whose two sides differ by a change the bisection did not split: one
        that moved the good end although its interval excludes 1 (a change smaller than the
        floor), or one left undecided that the other half's verdict went past."""
        if self.followed in UNFLOORED:  # their verdicts are no ratio against a floor
            return []
        passed = {id(before) for before, after in zip(self.steps, self.steps[1:], strict=False)
                  if after.role == OTHER_HALF and isinstance(after.result, Judged)
                  and after.result.verdict != UNDECIDED}

        def small(result: Judged) -> bool:
            return worse(result.verdict) is False and not result.low <= 1 <= result.high

        return [s for s in self.steps if s.role == BISECT and isinstance(s.result, Judged)
                and (small(s.result) or id(s) in passed)]

    def not_excluded(self) -> list[Step]:
        """Bisection steps that moved the good end on `same` with an interval holding both 1 and
        a slowdown (a cost: a growth): a change smaller than the floor may lie between their
        sides, which the bisection neither found nor ruled out (a 2% commit under an interval of
        +-3%)."""
        if self.followed in UNFLOORED:
            return []

        def admits(result: Judged) -> bool:
            if self.followed == "slower":
                return result.low < 1 <= result.high
            return result.low <= 1 < result.high

        return [s for s in self.steps if s.role == BISECT and isinstance(s.result, Judged)
                and s.result.verdict == SAME and admits(s.result)]


def run(count: int, judge: Judge, ab_floor: float, *, floor: float | None = None,
        confirm_pairs: int | None = None, error: float = levels.ERROR,
        budget_s: float | None = None, followed: Followed = "slower",
        clock: Callable[[], float] = time.monotonic) -> Bisection:
    """Bisect `count` ordered candidates (0 the good end, count - 1 the bad end) for the first
    that has the `followed` finding.

    `ab_floor` is the confirmation's floor; the steps' is `floor` if given, else, for speed,
    chosen from the confirmed change (levels.step_floor), and for any other finding the
    confirmation's. The confirmation's first look is at `confirm_pairs` if given. `budget_s`:
    no step starts after it is spent."""
    if count < 2:
        raise ValueError("a bisection needs a good end and a bad end")
    started = clock()
    found = Bisection(count, levels.planned_verdicts(count), good=0, bad=count - 1,
                      followed=followed)
    decided = 0  # verdicts asked for so far: each spends a share of the error

    def ask(role: Role, candidate: int, against: int, step_floor: float,
            min_pairs: int | None = None) -> Result:
        nonlocal decided
        level = Level(step_floor, levels.step_alpha(decided + 1, found.planned, error), min_pairs)
        result = judge(candidate, against, level)
        if isinstance(result, Judged):
            decided += 1
        found.steps.append(Step(role, candidate, against, level, result))
        return result

    confirmed = ask(CONFIRM, count - 1, 0, ab_floor, confirm_pairs)
    if isinstance(confirmed, Unusable) or worse(confirmed.verdict) is not True:
        found.outcome = END_FAILED if isinstance(confirmed, Unusable) else NOT_APART
        return found
    found.floor = floor if floor is not None else levels.step_floor(
        confirmed.high, ab_floor) if followed == "slower" else ab_floor
    while found.bad - found.good > 1:
        inner = [c for c in range(found.good + 1, found.bad) if c not in found.skipped]
        if not inner:
            found.outcome = SKIPPED
            return found
        if budget_s is not None and clock() - started >= budget_s:
            found.outcome = OUT_OF_TIME
            return found
        middle = (found.good + found.bad) / 2
        candidate = min(inner, key=lambda c: (abs(c - middle), c))
        result = ask(BISECT, candidate, found.good, found.floor)
        if isinstance(result, Unusable):
            found.skipped[candidate] = result.reason
        elif worse(result.verdict) is True:
            found.bad = candidate
        elif worse(result.verdict) is False:
            found.good = candidate
        else:
            assert result.verdict == UNDECIDED, result.verdict
            other = ask(OTHER_HALF, found.bad, candidate, found.floor)
            if isinstance(other, Judged) and worse(other.verdict) is True:
                found.good = candidate
            elif isinstance(other, Judged) and worse(other.verdict) is False:
                found.bad = candidate
            else:
                found.outcome = UNDECIDED
                return found
    found.outcome = FOUND
    return found


def each(count: int, judge: Judge, floor: float, *, error: float = levels.ERROR,
         budget_s: float | None = None, followed: Followed = "slower",
         clock: Callable[[], float] = time.monotonic) -> Bisection:
    """Not a bisection: every candidate against the one before it, to say where each change
    of more than the floor lies. Each of the count - 1 verdicts gets error / (count - 1), so
    that all of them are right together with probability 1 - error at least."""
    started = clock()
    found = Bisection(count, count - 1, good=0, bad=count - 1, floor=floor, outcome=SCANNED,
                      followed=followed)
    level = Level(floor, error / (count - 1))
    previous = 0  # the last candidate that could be measured
    for candidate in range(1, count):
        if budget_s is not None and clock() - started >= budget_s:
            found.outcome = OUT_OF_TIME
            return found
        result = judge(candidate, previous, level)
        found.steps.append(Step(EACH, candidate, previous, level, result))
        if isinstance(result, Unusable):
            found.skipped[candidate] = result.reason
        else:
            previous = candidate
    return found

