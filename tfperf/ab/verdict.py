"""The A/B verdict of one case: is side B slower or faster than side A, the same, or not known yet?

The data are per-pair ratios, B's examples/s over A's, of turns run back to back, in an order
counterbalanced within each duet. Two ways to judge them, named in each session file:

- `duets` (the default since issue 33): the worker process is the unit of replication. A
  one-way random-effects model over the duets (random_effects.py) gives B/A and its standard
  error, which covers each process's own speed: the pairs of one duet share their processes'
  offsets, so they are not independent, and an interval that treats them so is too narrow
  exactly on the close calls (docs/ab.md has the simulation). Each look's interval is
  centre +- c_k SE, c_k from the spending bounds below turned into Student's t on the
  within-duet degrees of freedom.
- `spending` and `bonferroni` (sessions kept before it): the Hodges-Lehmann estimate of all
  pairs pooled, with the exact Wilcoxon signed-rank interval (signed_rank.py), as if every
  pair were independent. Kept sessions are judged again by the rule they ran under.

Repeated looks. The pairs are judged at fixed looks (`min_pairs`, then each time the pairs
double, and `max_pairs`) and measuring stops at the first decided verdict. A wrong decided
verdict needs an interval that misses the true ratio at some look, so the intervals are
repeated confidence intervals (Jennison and Turnbull): together they hold the true ratio at
every look with probability 1 - alpha, however early it stops. Each look's width comes from an
alpha-spending function (Lan and DeMets; power family, rho = 1): alpha t has been spent by the
look at information fraction t (spending.py). Under `duets` the information of a look is
1 / Var(B/A) of its design (its pairs and its duets, from the relay's schedule), estimated
with the spreads seen so far: it does not grow as the pairs while the same few duets run,
since their offsets do not shrink. Under `spending` the fraction is the pairs' (n / MAX);
under `bonferroni` each of K looks gets alpha / K.

Pure functions: no files, no processes.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from tfperf.ab import random_effects, signed_rank, spending
from tfperf.ab.random_effects import Fit, Pairs

SLOWER, FASTER, SAME, UNDECIDED = "slower", "faster", "same", "undecided"
# How a case is judged (the module's docstring): duets as units, or (sessions kept before)
# independent pairs with alpha spent by the pairs, or alpha / K at each of K looks.
DUETS, SPENDING, BONFERRONI = "duets", "spending", "bonferroni"
LOOK_RULES = (DUETS, SPENDING, BONFERRONI)


@dataclass(frozen=True)
class ABSettings:
    # The least change that counts, either way: see docs/ab.md for how the A/A runs set it.
    floor: float = 0.015
    alpha: float = 0.05  # the chance of a wrong decided verdict in one case, at most
    min_pairs: int = 16  # the first look; each next one doubles the pairs
    # The last look. 256 rather than 128: a case that has not changed reaches it, and at 128
    # its interval was often still too wide to say `same` (docs/ab.md).
    max_pairs: int = 256
    # Pairs of side A and side B workers, all alive at once; pairs go round them. Each worker
    # process runs at its own speed, about 0.5% apart (docs/ab.md): more duets average more of
    # them out. Even, so that as many duets start A first as start B first.
    duets: int = 4
    # A duet's workers measure this many pairs, then end, and a fresh duet takes their place
    # (0: they measure the whole case). A per-process speed then weighs one duet in many
    # (docs/ab.md): 16 with 4 duets is 4 duets at 64 pairs, 16 at 256.
    relay: int = 16
    # Each side's turn in a pair runs whole rounds for about this long, and an A/B round is
    # this many steps unless --perf-steps-per-round says otherwise. Short: the closer in time a
    # pair's two turns, the more of the machine's drift they share. On the 2-core CPU one
    # 0.2 s round per turn gave a slightly narrower interval than one 0.5 s round, in half the
    # time; 1-2 s turns were wider still (docs/ab.md has the measurement).
    turn_s: float = 0.2
    steps_per_round: int = 2

    # How a case is judged (LOOK_RULES): see the module's docstring.
    look_rule: str = DUETS
    # The least SD of a duet's own offset (log B/A) that the interval assumes, whatever a few
    # duets that happen to agree suggest: 0.5%, the least measured on the 2-core CPU. Chosen
    # by simulation (docs/ab.md): wrong verdicts stay near 1% at offsets of 0.3-1%.
    min_duet_sd: float = 0.005
    # The yardstick as a covariate (random_effects.py). Off: on real sessions it removed too
    # little of the pairs' variance to pay for itself (docs/ab.md); the share is reported.
    adjust_yardstick: bool = False

    def looks(self) -> list[int]:
        """MIN, 2 MIN, 4 MIN, ... and MAX. Every look widens the intervals of the others, and
        a look narrows one as the square root of the pairs: doubling buys the most narrowing
        per look (16:128 is 4 looks; every 16 pairs it would be 8, each wider)."""
        looks = [self.min_pairs]
        while looks[-1] * 2 < self.max_pairs:
            looks.append(looks[-1] * 2)
        return looks if looks[-1] == self.max_pairs else [*looks, self.max_pairs]

    def look_index(self, pairs: int) -> int:
        """The last look `pairs` reach (the first, below it)."""
        return max(0, sum(look <= pairs for look in self.looks()) - 1)

    def duet_numbers(self, pairs: int) -> np.ndarray:
        """The duet of each of the first `pairs` pairs, as duet.py schedules them: pairs go
        round the slots, and a slot's duet is relayed by a fresh one every `relay` pairs."""
        index = np.arange(pairs)
        slot, served = index % self.duets, index // self.duets
        return slot + 1 + (self.duets * (served // self.relay) if self.relay else 0)

    def confidences(self, fit: Fit | None = None) -> list[float]:
        """Each look's confidence, in the order of the looks (under `duets`, for the spreads
        of `fit`; without one, as if every pair were independent)."""
        return [1 - 2 * float(norm.sf(z)) for z in self.bounds(fit)]

    def bounds(self, fit: Fit | None = None) -> tuple[float, ...]:
        looks = self.looks()
        if self.look_rule == BONFERRONI:
            return (float(norm.isf(self.alpha / len(looks) / 2)),) * len(looks)
        if self.look_rule == SPENDING or fit is None:
            return spending.bounds(tuple(n / looks[-1] for n in looks), self.alpha)
        information = [1 / fit.variance(duets, inverse) for duets, inverse in self.designs()]
        return spending.bounds(spending.fractions(information), self.alpha)

    @functools.cache  # noqa: B019 (frozen settings: a handful of instances per session)
    def designs(self) -> list[tuple[int, float]]:
        """Each look's duets, and the mean over them of 1 / their pairs."""
        found = []
        for look in self.looks():
            sizes = np.bincount(self.duet_numbers(look))[1:]
            sizes = sizes[sizes > 0]
            found.append((len(sizes), float(np.mean(1 / sizes))))
        return found

    def confidence_at(self, pairs: int, fit: Fit | None = None) -> float:
        """The confidence of the interval judged at `pairs`."""
        return self.confidences(fit)[self.look_index(pairs)]


@dataclass(frozen=True)
class Verdict:
    status: str
    ratio: float  # B over A: below 1, B is slower
    low: float
    high: float
    pairs: int
    confidence: float
    floor: float
    more_pairs: int | None = None  # undecided: about how many more pairs would decide it
    # Under `duets`: what the interval rests on.
    duets: int | None = None
    pair_sd: float | None = None  # a pair's own noise (log B/A)
    duet_sd: float | None = None  # a duet's own offset, as estimated (log B/A)
    duet_share: float | None = None  # of the estimate's variance, the duets' offsets
    second_turn: float | None = None  # a side's speed in the second turn over the first
    yardstick_share: float | None = None  # of the pairs' variance the yardstick explains
    more_duets: int | None = None  # undecided: the fresh duets those pairs are

    @property
    def decided(self) -> bool:
        return self.status != UNDECIDED

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def figures(self) -> str:
        return (f"B/A {self.ratio:.3f} [{self.low:.3f}, {self.high:.3f}] "
                f"({self.confidence:.1%} interval, {self.pairs} pairs; floor {self.floor:.1%})")

    def kept_open_by(self) -> str:
        """What makes the interval as wide as it is."""
        if self.duet_share is None or self.pair_sd is None or self.duet_sd is None:
            return "the pairs' spread"
        parts = [f"per-pair noise (SD {self.pair_sd:.1%} a pair, "
                 f"{1 - self.duet_share:.0%} of the variance)",
                 f"the duets' own speeds (SD {self.duet_sd:.1%} a duet over {self.duets} duets, "
                 f"{self.duet_share:.0%})"]
        if self.second_turn is not None and abs(self.second_turn - 1) > 0.005:
            parts.append(f"a second-turn effect of {self.second_turn - 1:+.1%} (counterbalanced, "
                         f"so it moves no estimate)")
        return ", ".join(parts)

    def describe(self) -> str:
        said = self.figures()
        if self.status != UNDECIDED:
            return f"{self.status}: {said}"
        if not self.more_pairs:
            more = "more pairs than can be estimated (the ratio sits on the floor)"
        elif self.more_duets:
            more = f"about {self.more_pairs} more pairs ({self.more_duets} more duets)"
        else:
            more = f"about {self.more_pairs} more pairs"
        return f"undecided: {said}; kept open by {self.kept_open_by()}; it would need {more}"


def _status(low: float, high: float, floor: float) -> str:
    if high < 1 - floor:
        return SLOWER
    if low > 1 + floor:
        return FASTER
    if low >= 1 - floor and high <= 1 + floor:
        return SAME
    return UNDECIDED


def _room(centre: float, floor: float) -> float:
    """How far the estimate (log) lies from the nearer edge of the floor."""
    return min(abs(centre - math.log(1 - floor)), abs(centre - math.log(1 + floor)))


def _independent(ratios: Sequence[float], settings: ABSettings) -> Verdict:
    confidence = settings.confidence_at(len(ratios))
    centre, low, high = signed_rank.hodges_lehmann([math.log(r) for r in ratios], confidence)
    lo, hi = math.exp(low), math.exp(high)
    status = _status(lo, hi, settings.floor)
    more = None
    room = _room(centre, settings.floor)
    if status == UNDECIDED and room >= 1e-4:
        # Intervals narrow as one over the square root of the pairs.
        n = len(ratios)
        more = max(1, math.ceil(n * ((high - low) / 2 / room) ** 2) - n)
    return Verdict(status, math.exp(centre), lo, hi, len(ratios), confidence, settings.floor,
                   more)


def _by_duets(pairs: Pairs, settings: ABSettings) -> Verdict:
    fit = random_effects.fit(pairs, settings.min_duet_sd, settings.adjust_yardstick)
    if fit.df <= 0:
        raise ValueError(f"{len(pairs)} pairs on {fit.duets} duets: judging by duets needs "
                         "more pairs than duets, and two for the order effect")
    n, floor = len(pairs), settings.floor
    z = settings.bounds(fit)[settings.look_index(n)]
    # The bound's tail on Student's t: the within-duet spread is itself estimated.
    tail = float(norm.sf(z))
    critical = float(student_t.isf(tail, fit.effective_df))
    half = critical * fit.se
    lo, hi = math.exp(fit.centre - half), math.exp(fit.centre + half)
    status = _status(lo, hi, floor)
    more = more_duets = None
    room = _room(fit.centre, floor)
    if status == UNDECIDED and room >= 1e-4:
        # Fresh duets of the relay's size, until the variance allows the room.
        size = settings.relay or max(1, n // fit.duets)
        per_duet = fit.variance(1, 1 / size)
        needed = per_duet / (room / critical) ** 2
        more_duets = max(1, math.ceil(needed - fit.duets))
        more = more_duets * size
    return Verdict(status, math.exp(fit.centre), lo, hi, n, 1 - 2 * tail, floor, more,
                   fit.duets, fit.within_sd, fit.duet_sd, fit.shares()["duets"],
                   math.exp(fit.order_effect), fit.yardstick_share, more_duets)


def judge(pairs: Pairs, settings: ABSettings) -> Verdict:
    """The verdict of a case's pairs at the look of their number, by the settings' rule."""
    if settings.look_rule == DUETS:
        return _by_duets(pairs, settings)
    return _independent(list(np.exp(pairs.log_ratios)), settings)


def sequential(pairs: Pairs, settings: ABSettings) -> list[Verdict]:
    """The verdicts at each look the pairs reach, up to the first decided one: the session's
    own stopping rule, replayed (the standalone command judges kept pairs again this way)."""
    verdicts: list[Verdict] = []
    for look in settings.looks():
        if look > len(pairs):
            break
        verdicts.append(judge(pairs.head(look), settings))
        if verdicts[-1].decided:
            break
    return verdicts


def independent_pairs(ratios: Sequence[float]) -> Pairs:
    """Ratios alone, as pairs of one duet in alternating order (tests, and simulations of the
    rules that treat pairs as independent)."""
    n = len(ratios)
    return Pairs.of(ratios, [1] * n, ["AB" if i % 2 == 0 else "BA" for i in range(n)])
