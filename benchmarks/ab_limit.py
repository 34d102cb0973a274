"""The A/B at its data's limit (issue 77): which rule decides as early as the pairs allow, and stays
valid at every look where the duets' offsets differ and the pairs' noise has heavy tails?

The candidate, `limit`, as pure functions of many sessions' pairs at once (numpy and scipy, and
tfperf.ab.spending's boundary integration, itself pure), so that it can move into tfperf/ab/
behind the look-rule registry (tfperf/options/ab_settings.py, LOOK_RULES) as one more rule that
a kept file names, without changing how files kept under the other rules are judged:

- **The estimate**: a robust centre of all the pairs pooled (log B/A), by default their 25%
  trimmed mean (`ESTIMATORS`: also Huber's M-estimate). On the reservoir's pairs its variance a
  pair is 0.66 (resnet20) and 0.75 (transformer) of the shipped mean of the duets'
  Hodges-Lehmann centres on the Xeon's heavy-tailed pairs, 0.95 on the EPYC's (ab_bound.py).
- **Its variance from the data**: a sandwich over duets. Each pair's influence on the estimate
  (the winsorised pair less their mean, over 1 - 2 x 25%; Huber's psi over its mean slope) is
  summed within its duet, and Var = D / (D - 1) x sum of squared duet sums / n^2. A duet's own
  offset moves all its pairs' influences together, so it enters the variance as it is, with no
  test on the data and no floor for it; the pairs' heavy tails enter only through their bounded
  influence.
- **Critical values for the variance as estimated** (`CALIBRATED`, ab_limit_bounds.py): each
  look's t found by simulation so that each kind's share of first misses by that look is its
  spending's, the largest over the model's cells (offsets 0-2.5%, normal and t5 tails). The
  spending's z turned into Student's t on D - 1 degrees of freedom (`critical=()`) is right at
  each look alone but spends too much over the looks, since each divides by its own SE.
- **Separate spending for each kind of verdict**, each one-sided at 5%: `same` is wrong only
  where its interval's far edge misses the truth, `slower` and `faster` only where theirs does,
  so each has its own intervals' widths, from its own spending pace over its own looks:
  `same` at 11 looks from 192 to 1,024 pairs (where A/A cases decide; its first look spends
  alone what looks at 128 and 160 would have spread), spending alpha (n / 1024)^0.5; the
  directions at a look every quarter doubling down from 2,432 pairs to 32, spending late,
  alpha (0.99 (n / 2432)^5 + 0.01 n / 2432) (a 2% slowdown is caught near the last look; the
  linear 1% lets a clear change be called on few pairs).
- **Relays priced**: 4 duets alive, a fresh duet every 16 pairs up to 512 pairs, every 64
  after (a relay costs 3.7 s, 14 pairs' worth at a cheap 0.26 s pair: a relay every 8 pairs
  would cost more than the pairs themselves; late, duets are many and relays dear). The
  last look, 2,432 pairs, is 873 s for resnet20 at a 0.26 s pair: under 15 minutes.

The study's defaults are the product's schedule (tfperf/options/ab_settings.py); until
2026-12-07 it was `--last 2048 --late-relay 32 --direction-power 3 --direction-linear 0`,
which the commands kept
in benchmarks/results/ab_limit.md from before then name.

    python benchmarks/ab_limit.py                 # the schedule: looks, duets, critical values
    python benchmarks/ab_limit.py --pair 0.64 --relay-s 3.7 --start 19
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import lab  # noqa: F401 (this checkout's tfperf first on the path)
import numpy as np
from scipy.special import ndtr, stdtrit

from tfperf.ab import spending, trimmed_bounds, trimmed_tables
from tfperf.ab.trimmed import sandwich, trimmed_mean
from tfperf.options.ab_settings import ABSettings

SAME, SLOWER, FASTER, UNDECIDED = "same", "slower", "faster", "undecided"
TRIM = 0.25
PRODUCT = ABSettings()  # the shipped rule: the study's defaults are its schedule
HUBER_K = 1.345  # 95% efficiency at the normal


def trimmed(y: np.ndarray, share: float = TRIM) -> tuple[np.ndarray, np.ndarray]:
    """Each row's trimmed mean (`share` cut from each end) and each pair's influence on it: the
    product's (tfperf.ab.trimmed)."""
    return trimmed_mean(y, share)


def huber(y: np.ndarray, k: float = HUBER_K, steps: int = 30) -> tuple[np.ndarray, np.ndarray]:
    """Each row's Huber M-estimate (scale 1.4826 MAD about the median, held) and each pair's
    influence: psi of its residual over psi's mean slope."""
    centre = np.median(y, axis=1)
    scale = 1.4826 * np.median(np.abs(y - centre[:, None]), axis=1)
    scale = np.where(scale > 0, scale, 1e-12)[:, None]
    for _ in range(steps):  # iteratively reweighted: a step of mean psi over mean slope
        r = (y - centre[:, None]) / scale
        slope = np.maximum((np.abs(r) < k).mean(axis=1), 1 / y.shape[1])
        centre = centre + scale[:, 0] * np.clip(r, -k, k).mean(axis=1) / slope
    r = (y - centre[:, None]) / scale
    slope = np.maximum((np.abs(r) < k).mean(axis=1), 1 / y.shape[1])
    return centre, scale * np.clip(r, -k, k) / slope[:, None]


Estimator = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
ESTIMATORS: dict[str, Estimator] = {"trimmed": trimmed, "huber": huber}


@dataclass(frozen=True)
class Limit:
    floor: float = 0.015
    alpha: float = 0.05  # each one-sided wrong verdict: `same`, `slower`, `faster`
    duets: int = 4  # alive at once; pairs go round them
    relay: int = 16  # a duet's pairs before a fresh one takes its place ...
    late_relay: int = PRODUCT.late_relay  # ... after `relay_until` (relays dear, duets cheap late)
    relay_until: int = 512
    first: int = 32
    last: int = PRODUCT.max_pairs  # 2,432: resnet20 at a 0.26 s pair and 3.7 s relays, 873 s
    per_doubling: int = 4  # looks for `slower` and `faster`
    # No `same` before 192 pairs: what 128 and 160 spent, 192 spends alone (A/A cases decide
    # there, at 99 s for resnet20 at a 0.26 s pair), and the later bounds hardly move.
    same_looks: tuple[int, ...] = (192, 224, 256, 288, 320, 384, 448, 512, 640, 768, 1024)
    same_power: float = 0.5  # alpha (n / last same look)^power spent on `same` by n pairs
    direction_power: float = PRODUCT.direction_power  # alpha (n / MAX)^power: the directions
    direction_linear: float = PRODUCT.direction_linear  # ... and this share spent as n / MAX
    estimator: str = "trimmed"
    trim: float = TRIM  # the share cut from each end by the trimmed mean
    # Calibrated critical values, (look, t `same`, t `slower`/`faster`) each (ab_limit_bounds.py);
    # empty: the spending's z turned into Student's t on D - 1 degrees of freedom.
    critical: tuple[tuple[int, float, float], ...] = ()

    def estimate(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each row's estimate and its pairs' influences, by the rule's estimator."""
        if self.estimator == "trimmed":
            return trimmed(y, self.trim)
        return ESTIMATORS[self.estimator](y)

    def looks(self) -> list[int]:
        """A look every 1 / per_doubling of a doubling down from the last to the first, each a
        whole round of the duets (an even number of pairs on each, so its orders are balanced),
        and the `same` looks: the product's schedule (ABSettings.direction_looks)."""
        step, found, k = 2 * self.duets, set(self.same_looks), 0
        while self.last * 2 ** (-k / self.per_doubling) >= self.first - 1e-9:
            found.add(step * round(self.last * 2 ** (-k / self.per_doubling) / step))
            k += 1
        return sorted(found | {self.last})

    def duet_numbers(self, pairs: int) -> np.ndarray:
        """Each pair's duet from 0: pairs go round the slots, and a slot's duet is relayed by a
        fresh one every `relay` of its pairs, every `late_relay` after `relay_until` pairs."""
        index = np.arange(pairs)
        served, early = index // self.duets, self.relay_until // self.duets
        ordinal = np.where(served < early, served // self.relay,
                           -(-early // self.relay) + (served - early) // self.late_relay)
        found: np.ndarray = index % self.duets + self.duets * ordinal
        return found

    def relays(self, pairs: int) -> int:
        return max(0, int(self.duet_numbers(pairs).max()) + 1 - self.duets)

    def critical_z(self) -> dict[int, tuple[float | None, float]]:
        """Each look's one-sided bound on z for `same` (None: no `same` at that look), and for
        `slower` and `faster`: each kind spends its alpha (two-sided 2 alpha in
        spending.bounds) at its own pace over its own looks' fractions of pairs (their
        information where the duets' offsets are small)."""
        def bounds(looks: list[int], power: float, linear: float = 0.0) -> dict[int, float]:
            t = np.array(looks, dtype=float) / looks[-1]
            shares = tuple(float(x) for x in spending.power_shares(t, power, linear))
            return dict(zip(looks, spending.bounds(tuple(float(x) for x in t), 2 * self.alpha,
                                                   shares), strict=True))

        same = bounds(sorted(self.same_looks), self.same_power)
        direction = bounds(self.looks(), self.direction_power, self.direction_linear)
        return {n: (same.get(n), direction[n]) for n in self.looks()}


def add_schedule(parser: argparse.ArgumentParser) -> None:
    """The options of a schedule a study of the rule takes (defaults: the product's)."""
    parser.add_argument("--last", type=int, default=Limit.last, help="the last look, pairs")
    parser.add_argument("--late-relay", type=int, default=Limit.late_relay,
                        help="a slot's pairs a duet after the first 512 pairs")
    parser.add_argument("--direction-power", type=float, default=Limit.direction_power,
                        help="alpha (n / last)^power spent on `slower` and `faster` ...")
    parser.add_argument("--direction-linear", type=float, default=Limit.direction_linear,
                        help="... and this share of it as n / last")
    parser.add_argument("--trim", type=float, default=Limit.trim,
                        help="the share the trimmed mean cuts from each end")
    parser.add_argument("--same-looks", type=int, nargs="+", metavar="PAIRS",
                        help="the looks that may say `same` (default: the rule's)")


def scheduled(args: argparse.Namespace, **more: Any) -> Limit:
    """The Limit of add_schedule's options (and `more` of its fields)."""
    return Limit(same_looks=tuple(args.same_looks) if args.same_looks else Limit.same_looks,
                 last=args.last, trim=args.trim, late_relay=args.late_relay,
                 direction_power=args.direction_power, direction_linear=args.direction_linear,
                 **more)


def critical_t(limit: Limit, look: int, duets: int) -> tuple[float, float]:
    """The look's critical values for `same` (infinite where it has no `same`: an infinite
    width never fits inside the floor) and for `slower`/`faster`: the calibrated ones where
    the limit has them, else the spending's z as Student's t on D - 1 degrees of freedom."""
    if limit.critical:
        found = {n: (same, direction) for n, same, direction in limit.critical}
        if look not in found:
            raise ValueError(f"no calibrated critical values at {look} pairs: the table is "
                             "another schedule's")
        return found[look]
    z_same, z_direction = limit.critical_z()[look]
    direction_c = float(-stdtrit(duets - 1, ndtr(-z_direction)))
    return (math.inf if z_same is None else float(-stdtrit(duets - 1, ndtr(-z_same))),
            direction_c)


# The critical t of each look (pairs, `same`, `slower`/`faster`) for the rule's default schedule,
# found by `python benchmarks/ab_limit_bounds.py -n 20000 --seed 196` on 2026-12-07 (the largest
# over its 7 cells; INF: no `same` at that look), as the product keeps them.
INF = math.inf
CALIBRATED: tuple[tuple[int, float, float], ...] = trimmed_tables.TABLES[
    trimmed_bounds.schedule_of(PRODUCT), 0.05]


@dataclass(frozen=True)
class Judged:
    status: np.ndarray  # a verdict a session
    centre: np.ndarray  # log B/A
    se: np.ndarray
    duets: int


def judge(y: np.ndarray, limit: Limit, look: int) -> Judged:
    """The verdict of each session's first `look` pairs (a row of log B/A each, on the
    schedule of limit.duet_numbers) at that look."""
    centre, influence = limit.estimate(y[:, :look])
    variance, duets = sandwich(influence, limit.duet_numbers(look))
    se = np.sqrt(variance)
    same_c, direction_c = critical_t(limit, look, duets)
    low_edge, high_edge = math.log(1 - limit.floor), math.log(1 + limit.floor)
    with np.errstate(invalid="ignore"):
        status = np.select([centre + direction_c * se < low_edge,
                            centre - direction_c * se > high_edge,
                            (centre - same_c * se >= low_edge) & (centre + same_c * se <= high_edge)],
                           [SLOWER, FASTER, SAME], UNDECIDED)
    return Judged(status, centre, se, duets)


def sequential(y: np.ndarray, limit: Limit) -> tuple[np.ndarray, np.ndarray]:
    """Each session's final verdict and its pairs (a row of log B/A each, `limit.last` long):
    each look judges the sessions still undecided, and a decided one stops."""
    sessions = y.shape[0]
    status = np.full(sessions, UNDECIDED, dtype=object)
    pairs = np.full(sessions, limit.last)
    open_ = np.ones(sessions, dtype=bool)
    for look in limit.looks():
        found = judge(y[open_], limit, look).status
        status[open_] = found
        decided = np.flatnonzero(open_)[found != UNDECIDED]
        pairs[decided] = look
        open_[decided] = False
        if not open_.any():
            break
    return status, pairs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pair", type=float, default=0.26, help="seconds a pair")
    parser.add_argument("--relay-s", type=float, default=3.7, help="seconds a relay")
    parser.add_argument("--start", type=float, default=19.0, help="seconds to the first pair")
    args = parser.parse_args()
    limit, calibrated = Limit(), Limit(critical=CALIBRATED)
    print("| look (pairs) | duets | relays | seconds | `same`: z, its t, calibrated t | "
          "`slower`/`faster`: z, its t, calibrated t |")
    print("| ---: | ---: | ---: | ---: | --- | --- |")
    for look, (zs, zd) in limit.critical_z().items():
        duets = int(limit.duet_numbers(look).max()) + 1
        seconds = args.start + args.pair * look + args.relay_s * limit.relays(look)
        (ts, td), (cs, cd) = critical_t(limit, look, duets), critical_t(calibrated, look, duets)
        same = "-" if zs is None else f"{zs:.2f}, {ts:.2f}, {cs:.2f}"
        print(f"| {look} | {duets} | {limit.relays(look)} | {seconds:.0f} | {same} | "
              f"{zd:.2f}, {td:.2f}, {cd:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
