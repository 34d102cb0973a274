"""The A/B verdict of one case: is side B slower or faster than side A, the same, or not known yet?

The data are per-pair ratios, B's examples/s over A's, of rounds run back to back in random
order. The estimate is the Hodges-Lehmann median of the log ratios (the median of all pairwise
means, the Walsh averages), the interval the Wilcoxon signed-rank interval around it. Why this
method rather than a bootstrap of the median:
- Randomising the order within each pair makes the two sides exchangeable when they do not
  differ, so the log ratios are then symmetric about zero: the one assumption the signed-rank
  interval needs. No distribution is assumed beyond it.
- It keeps about 95% of the mean's efficiency under normal noise (the median: 64%), so the same
  resolution needs fewer pairs, while a few pairs hit by a neighbour's burst barely move it.
- It is exact arithmetic on the data: the same pairs always give the same interval (a
  bootstrap's interval moves with its resampling, and is too narrow for the median at n < 30).
The critical value comes from the signed-rank statistic's exact distribution (its normal
approximation, beyond 200 pairs).

Repeated looks. The pairs are judged at fixed looks (`min_pairs`, then each time the pairs
double, and `max_pairs`) and measuring stops at the first decided verdict. A wrong decided
verdict needs an interval that misses the true ratio at some look, so the intervals are
repeated confidence intervals (Jennison and Turnbull): together they hold the true ratio at
every look with probability 1 - alpha, and the chance of any wrong verdict in a case is at
most alpha however early it stops. Their widths come from an alpha-spending function (Lan and
DeMets; the power family of Kim and DeMets with rho = 1): by the look at n of MAX pairs,
alpha n / MAX has been spent. The looks' statistics are correlated (each holds the pairs of the
last), so the critical values come from their joint normal law, not from Bonferroni's alpha/K
at each look, which ignores it. Spending in proportion to the pairs keeps the last look, where
the closest calls are made, narrow (z 2.15 at 16:256, against Bonferroni's 2.58), for a
wider first one (2.96), where only large changes are decided anyway. Sessions kept before
this rule name none and are judged again by Bonferroni, as they were run.

Pure functions: no files, no processes.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.stats import multivariate_normal, norm

SLOWER, FASTER, SAME, UNDECIDED = "slower", "faster", "same", "undecided"
# How the looks share alpha: spent in proportion to the pairs, or alpha/K at each of K looks
# (sessions kept before the spending rule).
SPENDING, BONFERRONI = "spending", "bonferroni"
LOOK_RULES = (SPENDING, BONFERRONI)


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

    # How the looks share alpha (LOOK_RULES): see the module's docstring.
    look_rule: str = SPENDING

    def looks(self) -> list[int]:
        """MIN, 2 MIN, 4 MIN, ... and MAX. Every look widens the intervals of the others, and
        a look narrows one as the square root of the pairs: doubling buys the most narrowing
        per look (16:128 is 4 looks; every 16 pairs it would be 8, each wider)."""
        looks = [self.min_pairs]
        while looks[-1] * 2 < self.max_pairs:
            looks.append(looks[-1] * 2)
        return looks if looks[-1] == self.max_pairs else [*looks, self.max_pairs]

    def confidences(self) -> list[float]:
        """Each look's interval's confidence, in the order of the looks."""
        looks = self.looks()
        if self.look_rule == BONFERRONI:
            return [1 - self.alpha / len(looks)] * len(looks)
        return [1 - 2 * float(norm.sf(z)) for z in _spending_bounds(tuple(looks), self.alpha)]

    def confidence_at(self, pairs: int) -> float:
        """The confidence of the interval judged at `pairs`: that of the last look it reaches
        (the first look's below it)."""
        reached = sum(look <= pairs for look in self.looks())
        return self.confidences()[max(0, reached - 1)]


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

    @property
    def decided(self) -> bool:
        return self.status != UNDECIDED

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def figures(self) -> str:
        return (f"B/A {self.ratio:.3f} [{self.low:.3f}, {self.high:.3f}] "
                f"({self.confidence:.1%} interval, {self.pairs} pairs; floor {self.floor:.1%})")

    def describe(self) -> str:
        said = self.figures()
        if self.status == UNDECIDED:
            more = f"about {self.more_pairs} more pairs" if self.more_pairs else \
                "more pairs than can be estimated (the ratio sits on the floor)"
            return f"undecided: {said}; it would need {more}"
        return f"{self.status}: {said}"


def _inside(bounds: Sequence[float], correlation: np.ndarray) -> float:
    """P(|Z_k| < bounds[k] at every look k) for standard normal Z of this correlation."""
    limits = np.asarray(bounds)
    # A fixed seed: scipy integrates by quasi-Monte Carlo, and the same looks must always
    # give the same intervals.
    law = multivariate_normal(np.zeros(len(limits)), correlation, seed=0)
    return float(law.cdf(limits, lower_limit=-limits))


@functools.cache
def _spending_bounds(looks: tuple[int, ...], alpha: float) -> tuple[float, ...]:
    """The critical z of each look such that, with no change, the looks' statistics (each
    pair count's standardised sum; correlated as sqrt(n_i / n_j), a Brownian motion's) first
    cross them by look k with probability alpha n_k / MAX."""
    n = np.asarray(looks, dtype=float)
    correlation = np.sqrt(np.minimum.outer(n, n) / np.maximum.outer(n, n))
    bounds: list[float] = []
    for k, pairs in enumerate(n):
        kept = 1 - alpha * pairs / n[-1]
        bounds.append(float(brentq(
            lambda z, k=k, kept=kept: _inside([*bounds, z], correlation[:k + 1, :k + 1]) - kept,
            0.5, 10.0, xtol=1e-6)))
    return tuple(bounds)


@functools.cache
def _signed_rank_cdf(n: int) -> np.ndarray:
    """P(T <= t) for t = 0..n(n+1)/2, T the signed-rank statistic of n pairs under the null."""
    top = n * (n + 1) // 2
    counts = np.zeros(top + 1)
    counts[0] = 1.0
    for rank in range(1, n + 1):  # each rank is in the sum or not
        counts[rank:] = counts[rank:] + counts[:top + 1 - rank].copy()
    cdf: np.ndarray = np.cumsum(counts) / counts.sum()
    return cdf


def _excluded(n: int, tail: float) -> int:
    """How many Walsh averages lie outside the interval on each side: the largest k with
    P(T <= k - 1) <= tail."""
    if n <= 200:
        return int((_signed_rank_cdf(n) <= tail).sum())
    mean, sd = n * (n + 1) / 4, math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    return max(0, math.floor(mean - float(norm.ppf(1 - tail)) * sd))


def hodges_lehmann(log_ratios: Sequence[float], confidence: float) -> tuple[float, float, float]:
    """The estimate and the interval of the log ratios' centre."""
    x = np.asarray(log_ratios, dtype=float)
    n = len(x)
    if n < 2:
        raise ValueError(f"{n} pair(s): an interval needs at least 2")
    i, j = np.triu_indices(n)
    walsh = np.sort((x[i] + x[j]) / 2)
    k = _excluded(n, (1 - confidence) / 2)
    return float(np.median(walsh)), float(walsh[k]), float(walsh[len(walsh) - 1 - k])


def _more_pairs(n: int, centre: float, half_width: float, floor: float) -> int | None:
    """Intervals narrow as one over the square root of the pairs: how many would keep the
    interval off both edges of the floor."""
    edges = (math.log(1 - floor), math.log(1 + floor))
    room = min(abs(centre - edge) for edge in edges)
    if room < 1e-4:
        return None
    return max(1, math.ceil(n * (half_width / room) ** 2) - n)


def judge(ratios: Sequence[float], settings: ABSettings) -> Verdict:
    """The verdict of per-pair ratios (B over A) at the look of their number."""
    confidence = settings.confidence_at(len(ratios))
    centre, low, high = hodges_lehmann([math.log(r) for r in ratios], confidence)
    ratio, lo, hi = math.exp(centre), math.exp(low), math.exp(high)
    floor = settings.floor
    if hi < 1 - floor:
        status = SLOWER
    elif lo > 1 + floor:
        status = FASTER
    elif lo >= 1 - floor and hi <= 1 + floor:
        status = SAME
    else:
        status = UNDECIDED
    more = _more_pairs(len(ratios), centre, (high - low) / 2, floor) \
        if status == UNDECIDED else None
    return Verdict(status, ratio, lo, hi, len(ratios), confidence, floor, more)


def sequential(ratios: Sequence[float], settings: ABSettings) -> list[Verdict]:
    """The verdicts at each look the ratios reach, up to the first decided one: the session's
    own stopping rule, replayed (the standalone command judges kept pairs again this way)."""
    verdicts: list[Verdict] = []
    for look in settings.looks():
        if look > len(ratios):
            break
        verdicts.append(judge(ratios[:look], settings))
        if verdicts[-1].decided:
            break
    return verdicts
