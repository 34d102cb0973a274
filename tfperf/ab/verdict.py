"""The A/B verdict of one case: is side B slower or faster than side A, the same, or not known yet?

The data are per-pair ratios, B's examples/s over A's, of turns run back to back, in an order
counterbalanced within each duet. Two ways to judge them, named in each session file:

- `duets-t` (the default): the worker process is the unit of replication. A one-way
  random-effects model over the duets (random_effects.py) gives B/A and its standard error,
  which covers each process's own speed: the pairs of one duet share their processes' offsets,
  so they are not independent, and an interval that treats them so is too narrow exactly on
  the close calls (docs/design/ab.md has the simulation). Each look's interval is centre +-
  c_k SE, c_k from the spending bounds below turned into Student's t on the duets' D - 1
  degrees of freedom, at every look.
- `duets` (older kept sessions): the same, with Student's t on degrees of freedom chosen by
  whether the floor on the duets' offsets binds (the pairs' where it does): a test on the data
  that left the first looks too narrow where duets differ (docs/design/ab.md).
- `spending` and `bonferroni` (the oldest kept sessions): the Hodges-Lehmann estimate of all
  pairs pooled, with the exact Wilcoxon signed-rank interval (signed_rank.py), as if every
  pair were independent. Kept sessions are judged again by the rule they ran under.
- `clusters-t`, retired (ab_settings.RETIRED_RULES): `duets-t` on the centres' spread alone.

Repeated looks. The pairs are judged at fixed looks (ABSettings.looks) and measuring stops at
the first decided verdict. A wrong decided verdict needs an interval that misses the true ratio
at some look, so the intervals are repeated confidence intervals (Jennison and Turnbull):
together they hold the true ratio at every look with probability 1 - alpha, however early it
stops. Each look's width comes from an alpha-spending function (Lan and DeMets; power family):
alpha t^rho has been spent by the look at information fraction t (spending.py; rho = 2, 1
in sessions kept under `duets` and older rules). Under the duet rules the information of a
look is 1 / Var(B/A) of its design (its pairs and its duets, from the relay's schedule),
estimated with the spreads seen so far: it does not grow as the pairs while the same few duets
run, since their offsets do not shrink. Under `spending` the fraction is the pairs' (n / MAX);
under `bonferroni` each of K looks gets alpha / K.

Pure functions: no files, no processes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tfperf.ab import random_effects, signed_rank, spending, trimmed
from tfperf.ab.random_effects import Fit, Pairs
from tfperf.ab.verdict_types import Verdict as Verdict
from tfperf.ground.vocabulary import FASTER as FASTER
from tfperf.ground.vocabulary import SAME as SAME
from tfperf.ground.vocabulary import SLOWER as SLOWER
from tfperf.ground.vocabulary import UNDECIDED as UNDECIDED
from tfperf.ground.vocabulary import ABStatus
from tfperf.options.ab_settings import (
    BONFERRONI,
    CLUSTERS_T,
    DUET_RULES,
    SPENDING,
    T_RULES,
    TRIMMED,
    ABSettings,
)

Status = ABStatus  # what a verdict can say


def bounds(settings: ABSettings, fit: Fit | None = None) -> tuple[float, ...]:
    """Each look's bound on |z|, in the order of the looks (under `duets`, for the spreads of
    `fit`; without one, as if every pair were independent)."""
    # Imported here: most processes that import this module never judge. scipy.special's
    # ndtri, as scipy.stats.norm.isf computes it, without importing scipy.stats (0.4 CPU-s).
    from scipy.special import ndtri

    looks = settings.looks()
    if settings.look_rule == BONFERRONI:
        return (float(-ndtri(settings.alpha / len(looks) / 2)),) * len(looks)
    if settings.look_rule == SPENDING or fit is None:
        return spending.bounds(tuple(n / looks[-1] for n in looks), settings.alpha)
    information = [[1 / fit.variance(duets, inverse) for duets, inverse in settings.designs()]]
    return tuple(float(z) for z in _by_information(settings, np.asarray(information))[0])


def _by_information(settings: ABSettings, information: np.ndarray) -> np.ndarray:
    """Each session's bounds (a row each), from its information at every look (a row each)."""
    fractions = spending.fractions_of_rows(information)
    # Sessions whose fractions agree to the 1% share their bounds: each set is computed once.
    rows, which = np.unique(fractions, axis=0, return_inverse=True)
    found = np.array([spending.bounds(tuple(float(f) for f in row), settings.alpha,
                                      tuple(float(f) ** settings.spending_power for f in row))
                      for row in rows])
    z: np.ndarray = found[which.reshape(-1)]
    return z


def confidences(settings: ABSettings, fit: Fit | None = None) -> list[float]:
    """Each look's confidence, in the order of the looks."""
    from scipy.special import ndtr  # scipy.stats.norm.sf(z) is ndtr(-z)

    return [1 - 2 * float(ndtr(-z)) for z in bounds(settings, fit)]


def confidence_at(settings: ABSettings, pairs: int, fit: Fit | None = None) -> float:
    """The confidence of the interval judged at `pairs`."""
    return confidences(settings, fit)[settings.look_index(pairs)]


def _status(low: float, high: float, floor: float) -> Status:
    status: Status = _statuses(np.asarray([low]), np.asarray([high]), floor)[0]
    return status


def _statuses(low: np.ndarray, high: np.ndarray, floor: float) -> np.ndarray:
    return np.select([high < 1 - floor, low > 1 + floor, (low >= 1 - floor) & (high <= 1 + floor)],
                     [SLOWER, FASTER, SAME], UNDECIDED)


def _room(centre: float, floor: float) -> float:
    """How far the estimate (log) lies from the nearer edge of the floor."""
    return min(abs(centre - math.log(1 - floor)), abs(centre - math.log(1 + floor)))


def _independent(ratios: Sequence[float], settings: ABSettings) -> Verdict:
    confidence = confidence_at(settings, len(ratios))
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


def _fits(log_ratios: np.ndarray, duets: np.ndarray, b_second: np.ndarray,
          yardstick: np.ndarray | None, settings: ABSettings) -> random_effects.Fits:
    """The fit of each session (a row each) that judging by duets can use."""
    found = random_effects.fits(log_ratios, duets, b_second, yardstick, settings.min_duet_sd,
                                settings.adjust_yardstick)
    n = log_ratios.shape[1]
    if settings.look_rule in T_RULES and found.duets < 2:
        raise ValueError(f"{n} pairs on one duet: judging by duets needs two or more")
    if (found.df <= 0).any():
        raise ValueError(f"{n} pairs on {found.duets} duets: judging by duets needs "
                         "more pairs than duets, and two for the order effect")
    return found


def _variances(found: random_effects.Fits, settings: ABSettings) -> np.ndarray:
    """Each session's Var(log B/A) as its interval takes it: the model's, never less than the
    duets' centres' own spread over D; under the retired `clusters-t` that spread alone."""
    if settings.look_rule == CLUSTERS_T:
        return found.spread_variance()
    return found.variance()


def _critical(found: random_effects.Fits, n: int, settings: ABSettings
              ) -> tuple[np.ndarray, np.ndarray]:
    """Each session's tail (a side's share of what its interval may miss) and critical value
    at the look of `n` pairs."""
    information = np.stack([1 / found.variance(duets, inverse)
                            for duets, inverse in settings.designs()], axis=1)
    z = _by_information(settings, information)[:, settings.look_index(n)]
    from scipy.special import ndtr, stdtrit

    # The bound's tail on Student's t: the spreads are themselves estimated. Under `duets-t`
    # on the duets' D - 1 degrees of freedom at every look: Var(B/A) is never less than the
    # duets' centres' own spread over D, and choosing the degrees of freedom by whether the
    # floor binds (`duets`) is a test on the data that left the first looks' intervals too
    # narrow wherever the duets' offsets exceed the floor (docs/ab.md).
    tail: np.ndarray = ndtr(-z)
    df = found.duets - 1 if settings.look_rule in T_RULES else found.effective_df()
    critical: np.ndarray = -stdtrit(df, tail)
    return tail, critical


def _by_duets(pairs: Pairs, settings: ABSettings) -> Verdict:
    found = _fits(pairs.log_ratios[None, :], pairs.duets, pairs.b_second[None, :],
                  None if pairs.yardstick is None else pairs.yardstick[None, :], settings)
    fit, n, floor = found.one(0), len(pairs), settings.floor
    tails, criticals = _critical(found, n, settings)
    tail, critical = float(tails[0]), float(criticals[0])
    half = critical * math.sqrt(float(_variances(found, settings)[0]))
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


@dataclass(frozen=True)
class Intervals:
    """Many sessions' verdicts at one look, a value each (judge_many)."""

    status: np.ndarray  # Status strings
    ratio: np.ndarray
    low: np.ndarray
    high: np.ndarray


def judge_many(log_ratios: np.ndarray, duets: np.ndarray, b_second: np.ndarray,
               settings: ABSettings) -> Intervals:
    """judge() of many sessions on one duet schedule (a row of log_ratios and b_second each,
    no yardstick), at the look of their number of pairs: what a simulation of thousands of
    sessions needs of each verdict, computed at once where the rule judges by duets."""
    if settings.look_rule == TRIMMED:
        rows = trimmed.judge_rows(log_ratios, duets, settings)
        return Intervals(rows.status, np.exp(rows.centre), np.exp(rows.low), np.exp(rows.high))
    if settings.look_rule not in DUET_RULES:
        judged = [judge(Pairs(y, duets, b), settings) for y, b in zip(log_ratios, b_second,
                                                                     strict=True)]
        return Intervals(np.array([v.status for v in judged]),
                         *(np.array([getattr(v, f) for v in judged])
                           for f in ("ratio", "low", "high")))
    found = _fits(log_ratios, duets, b_second, None, settings)
    _, critical = _critical(found, log_ratios.shape[1], settings)
    half = critical * np.sqrt(_variances(found, settings))
    low, high = np.exp(found.centre - half), np.exp(found.centre + half)
    return Intervals(_statuses(low, high, settings.floor), np.exp(found.centre), low, high)


def _trimmed(pairs: Pairs, settings: ABSettings) -> Verdict:
    from scipy.special import stdtr

    found, n = trimmed.judge_rows(pairs.log_ratios[None, :], pairs.duets, settings), len(pairs)
    status = found.status[0]
    width = found.same_t if status == SAME else found.direction_t
    confidence = 1 - 2 * float(stdtr(found.duets - 1, -width)) if math.isfinite(width) else 1.0
    more = trimmed.more_pairs(found, n, settings.floor) if status == UNDECIDED else None
    second = pairs.log_ratios[pairs.b_second > 0].mean() - pairs.log_ratios[
        pairs.b_second < 0].mean() if (pairs.b_second > 0).any() and (pairs.b_second < 0).any() \
        else 0.0
    return Verdict(status, math.exp(found.centre[0]), math.exp(found.low[0]),
                   math.exp(found.high[0]), n, confidence, settings.floor, more, found.duets,
                   trimmed.robust_sd(pairs.log_ratios), None, float(found.duet_share[0]),
                   math.exp(float(second) / 2))


def judge(pairs: Pairs, settings: ABSettings) -> Verdict:
    """The verdict of a case's pairs at the look of their number, by the settings' rule."""
    if settings.look_rule == TRIMMED:
        return _trimmed(pairs, settings)
    if settings.look_rule in DUET_RULES:
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
