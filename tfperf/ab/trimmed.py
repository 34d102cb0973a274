"""The `trimmed` rule: a case's B/A from all its pairs pooled, with a variance from the data.

- **The estimate**: the 25% trimmed mean of the pairs' log B/A. The pairs' noise has heavy tails
  (kurtosis 4-20 on the 2-core hosts): on the reservoir's real pairs its variance is 0.66-0.95
  of the mean of the duets' Hodges-Lehmann centres (benchmarks/results/ab_bound.md).
- **Its variance, offsets included without a test**: a sandwich over duets. Each pair's
  influence on the trimmed mean (the pair winsorised at the cuts, less their mean, over
  1 - 2 x the share cut) is summed within its duet, and Var = D / (D - 1) x the sum of the
  squared sums / n^2. A duet's own speed moves all its pairs' influences together, so it is in
  the variance as it is: no model of it, no floor for it, no test on the data first; a pair's
  heavy tail enters only through its bounded influence. Counterbalanced orders cancel in the
  mean; what running second adds stays in the pairs' spread.
- **Separate spending for each kind of verdict**: `same` is wrong only where its interval's
  far edge misses the true B/A, `slower` and `faster` only where theirs does, so each kind has
  its own widths: alpha / 2 each, `same` spent as (n / its last look)^0.5 over its looks,
  `slower` and `faster` late, as (n / MAX)^5 with 1% of it linear in n, over theirs
  (ABSettings.same_looks and direction_looks, spending.power_shares). Each look's critical t
  is calibrated by simulation (trimmed_bounds.py).

Pure functions of many sessions' pairs at once (a row each).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tfperf.ab import trimmed_bounds
from tfperf.ground.vocabulary import FASTER, SAME, SLOWER, UNDECIDED
from tfperf.options.ab_settings import ABSettings


def trimmed_mean(y: np.ndarray, share: float) -> tuple[np.ndarray, np.ndarray]:
    """Each row's trimmed mean (`share` cut from each end) and each pair's influence on it."""
    n = y.shape[1]
    cut = int(share * n)
    ordered = np.sort(y, axis=1)
    centre = ordered[:, cut:n - cut].mean(axis=1)
    winsorised = np.clip(y, ordered[:, cut:cut + 1], ordered[:, n - cut - 1:n - cut])
    influence = (winsorised - winsorised.mean(axis=1, keepdims=True)) / (1 - 2 * cut / n)
    return centre, influence


def sandwich(influence: np.ndarray, duets: np.ndarray) -> tuple[np.ndarray, int]:
    """Each row's Var(estimate) from its pairs' influences summed within duets (any labels, one
    a pair), and D, the duets."""
    sessions, n = influence.shape
    _, index = np.unique(duets, return_inverse=True)
    count = int(index.max()) + 1
    flat = index.reshape(-1)[None, :] + count * np.arange(sessions)[:, None]
    sums = np.bincount(flat.ravel(), influence.ravel(), sessions * count).reshape(sessions, count)
    variance: np.ndarray = count / (count - 1) * (sums ** 2).sum(axis=1) / n ** 2
    return variance, count


@dataclass(frozen=True)
class Judged:
    """Many sessions' verdicts at one look (a value each, logs of B/A) and what they rest on."""

    status: np.ndarray
    centre: np.ndarray
    se: np.ndarray
    low: np.ndarray  # the interval of the verdict's kind: `same`'s where it says `same`, ...
    high: np.ndarray  # ... else the directions'
    duets: int
    same_t: float  # infinite at a look that may not say `same`
    direction_t: float
    duet_share: np.ndarray  # of the variance, what the duets' own speeds add


def judge_rows(log_ratios: np.ndarray, duets: np.ndarray, settings: ABSettings) -> Judged:
    """The verdict of each row's pairs at the look of their number."""
    n = log_ratios.shape[1]
    if len(np.unique(duets)) < 2:
        raise ValueError(f"{n} pairs on one duet: the trimmed rule needs two or more")
    centre, influence = trimmed_mean(log_ratios, settings.trim)
    variance, count = sandwich(influence, duets)
    se = np.sqrt(variance)
    same_t, direction_t = trimmed_bounds.critical(settings, settings.looks()[
        settings.look_index(n)], count)
    low_edge, high_edge = math.log(1 - settings.floor), math.log(1 + settings.floor)
    with np.errstate(invalid="ignore"):
        is_same = (centre - same_t * se >= low_edge) & (centre + same_t * se <= high_edge)
        status = np.select([centre + direction_t * se < low_edge,
                            centre - direction_t * se > high_edge, is_same],
                           [SLOWER, FASTER, SAME], UNDECIDED)
    half = np.where(status == SAME, same_t, direction_t) * se
    naive = (influence ** 2).sum(axis=1) / n ** 2
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.clip(1 - naive / variance, 0.0, 1.0)
    return Judged(status, centre, se, centre - half, centre + half, count, same_t, direction_t,
                  np.nan_to_num(share))


def more_pairs(judged: Judged, n: int, floor: float) -> int | None:
    """About how many more pairs would decide an undecided session (the first row): its SE
    shrinks as one over the square root of the pairs, until its interval clears the floor's
    nearer edge (inside the floor by `same`'s width, outside by the directions')."""
    centre, se = float(judged.centre[0]), float(judged.se[0])
    low_edge, high_edge = math.log(1 - floor), math.log(1 + floor)
    inside = low_edge < centre < high_edge
    room = min(abs(centre - low_edge), abs(centre - high_edge))
    width = judged.same_t if inside and math.isfinite(judged.same_t) else judged.direction_t
    if room < 1e-4 or not math.isfinite(width):
        return None
    return max(1, math.ceil(n * (width * se / room) ** 2) - n)


def robust_sd(log_ratios: np.ndarray) -> float:
    """A pair's own noise, robustly: 1.4826 x the median absolute deviation."""
    return float(1.4826 * np.median(np.abs(log_ratios - np.median(log_ratios))))
