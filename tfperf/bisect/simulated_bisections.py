"""Simulated bisections whose every step is a simulated A/B session judged by the verdict code
itself (tfperf.ab.simulate): how often is the named culprit wrong?

A profile gives each candidate's true speed relative to the good end (1.0 for the good end; a
culprit of 10% makes every later candidate 0.9). A step's true B/A is the ratio of its two
candidates' speeds; its pairs are drawn as tfperf.ab.simulate draws them, at the step's floor
and level, and judged by the session's stopping rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from tfperf.ab import simulate as ab_simulate
from tfperf.ab import verdict
from tfperf.bisect import search
from tfperf.bisect.levels import Level
from tfperf.options.ab_settings import ABSettings


@dataclass(frozen=True)
class Noise:
    pair_sd: float  # a pair's own noise, log B/A
    duet_sd: float  # a worker process's own offset, log B/A


def profile(count: int, changes: dict[int, float]) -> list[float]:
    """Each candidate's speed: `changes` maps a candidate to the slowdown it adds (0.1: its
    steps take 10% more work, so it runs at 1 / 1.1 of the speed before it)."""
    speed, found = 1.0, []
    for index in range(count):
        speed /= 1 + changes.get(index, 0.0)
        found.append(speed)
    return found


def bisect(speeds: Sequence[float], noise: Noise, settings: ABSettings,
           draw: np.random.Generator, unusable: frozenset[int] = frozenset(),
           confirm_pairs: int | None = search.CONFIRM_PAIRS) -> search.Bisection:
    """One simulated bisection over candidates of these true speeds, as tfperf-bisect runs it
    by default (its confirmation's first look at 64 pairs)."""

    def judge(candidate: int, against: int, level: Level) -> search.Result:
        if candidate in unusable:
            return search.Unusable("simulated: does not build")
        at = replace(settings, floor=level.floor, alpha=level.alpha,
                     min_pairs=min(level.min_pairs or settings.min_pairs, settings.max_pairs))
        conditions = ab_simulate.Conditions(speeds[candidate] / speeds[against],
                                            noise.pair_sd, noise.duet_sd)
        final = verdict.sequential(ab_simulate.session(conditions, at, draw), at)[-1]
        return search.Judged(final.status, final.ratio, final.low, final.high, final.pairs, 0.0)

    return search.run(len(speeds), judge, settings.floor, confirm_pairs=confirm_pairs)


def binomial_interval(hits: int, trials: int) -> tuple[float, float]:
    """The 95% Clopper-Pearson interval of a rate."""
    from scipy.stats import binomtest

    found = binomtest(hits, trials).proportion_ci(0.95, method="exact")
    return float(found.low), float(found.high)


def wrong_rate(count: int, culprit: int, change: float, noise: Noise, settings: ABSettings,
               runs: int, seed: int) -> tuple[int, int, int]:
    """(wrong culprits, right ones, no culprit named) over `runs` simulated bisections with one
    change of `change` at `culprit`."""
    draw = np.random.default_rng(seed)
    speeds = profile(count, {culprit: change})
    wrong = right = none = 0
    for _ in range(runs):
        found = bisect(speeds, noise, settings, draw)
        if found.culprit is None:
            none += 1
        elif found.culprit == culprit:
            right += 1
        else:
            wrong += 1
    return wrong, right, none


def change_of_twice(floor: float) -> float:
    """The work added by a change that slows by exactly twice `floor`."""
    return 1 / (1 - 2 * floor) - 1
