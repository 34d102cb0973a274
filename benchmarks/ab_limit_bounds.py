"""Which critical values keep each one-sided wrong verdict of the `limit` candidate (ab_limit.py)
within its spending's share at every look, once every look estimates its own variance?

The spending's bounds (tfperf/ab/spending.py) assume that the looks' statistics move as a
Brownian motion of known variance. Turned into Student's t on each look's D - 1 degrees of
freedom, each look alone spends what it should, but the looks together spend more: each divides
by its own estimated SE, so their statistics are less correlated than the model says, and at
the floor's edge `same` was wrong in up to 6.4% of simulated sessions. Here the bounds are
computed for the statistics as the rule computes them, by simulation (Jennison and Turnbull's
repeated t-tests, by Monte Carlo instead of numerical integration):

- Sessions are drawn from the model (ab_limit_replay.modelled: duet offsets, normal or
  Student's t tails, counterbalanced orders) at a true change of 0, one cell of offsets and
  tails at a time; at every look the pivot T = estimate / SE as `judge` computes them (the
  25% trimmed mean, the sandwich over duets), and its mirror -T (the model is symmetric).
- For each kind of verdict, look by look, the bound c_k is the value for which the share of
  sessions whose T first fell to -c_k or below by look k is the spending's alpha(t_k): the
  one-sided miss of `same` at the floor's edge, of `slower` or `faster` just inside it. Where
  a look's share is too small to find (fewer than LEAST crossings), the spending's t stands.
- Each look's bound is the largest over the cells, so every cell spends at most its share by
  every look (and the largest of several bounds found on finite samples errs high).

    python benchmarks/ab_limit_bounds.py -n 8000 --out benchmarks/data/ab_limit/bounds.<key>.jsonl.gz
    python benchmarks/ab_limit_bounds.py -n 60000 --alpha 0.001 --seed 181 --out ...  # a stricter level
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from ab_limit import Limit, add_schedule, critical_t, scheduled  # sibling studies
from ab_limit_replay import modelled
from lab import records

from tfperf.ab import spending
from tfperf.ab.simulate import Conditions
from tfperf.ab.trimmed import sandwich
from tfperf.ground.machine import detect

LEAST = 20  # crossings a look needs before its bound is found by simulation
CHUNK = 1000  # sessions drawn at once
# Pair SD, duet SD, heavy tails: the replay grid's cells, each scale-free in its ratio.
CELLS = ((0.01, 0.0, False), (0.01, 0.015, False), (0.01, 0.025, False),
         (0.025, 0.005, True), (0.025, 0.025, True), (0.08, 0.0, True), (0.08, 0.025, True))


def pivots(y: np.ndarray, limit: Limit) -> np.ndarray:
    """Each session's estimate over its SE at each of the limit's looks (sessions x looks)."""
    found = []
    for look in limit.looks():
        centre, influence = limit.estimate(y[:, :look])
        variance, _ = sandwich(influence, limit.duet_numbers(look))
        found.append(centre / np.sqrt(variance))
    return np.stack(found, axis=1)


def spending_shares(limit: Limit) -> tuple[np.ndarray, np.ndarray]:
    """The share of its alpha each kind has spent by each of the limit's looks (`same`: NaN
    where it has no look)."""
    looks = np.array(limit.looks(), dtype=float)
    last_same = max(limit.same_looks)
    same = np.where(np.isin(looks, limit.same_looks),
                    limit.alpha * (looks / last_same) ** limit.same_power, np.nan)
    direction = limit.alpha * spending.power_shares(looks / limit.last, limit.direction_power,
                                                    limit.direction_linear)
    return same, direction


def bounds_for(t: np.ndarray, spent: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Per look, the bound c for which the share of rows (sessions) whose pivot first reached
    -c or below by that look is `spent`; NaN where a look is not this kind's; `fallback` where
    fewer than LEAST crossings would fix it."""
    rows = t.shape[0]
    alive = np.ones(rows, dtype=bool)
    found = np.full(t.shape[1], np.nan)
    for k in np.flatnonzero(~np.isnan(spent)):
        crossings = math.floor(spent[k] * rows) - int(rows - alive.sum())
        beyond = np.sort(-t[alive, k])[::-1]  # crossing where -T >= c, the largest first
        if crossings < LEAST or crossings >= len(beyond):
            c = fallback[k]
        else:
            c = float((beyond[crossings - 1] + beyond[crossings]) / 2)
        found[k] = c
        alive &= -t[:, k] < c
    return found


def spending_t(limit: Limit) -> tuple[np.ndarray, np.ndarray]:
    """The spending's critical t of each look, as the uncalibrated rule takes them."""
    pairs = [critical_t(limit, look, int(limit.duet_numbers(look).max()) + 1)
             for look in limit.looks()]
    same = np.array([s if math.isfinite(s) else np.nan for s, _ in pairs])
    return same, np.array([d for _, d in pairs])


def calibrate(limit: Limit, cells: tuple[tuple[float, float, bool], ...], n: int, seed: int,
              out: Path | None) -> tuple[tuple[int, float, float], ...]:
    same_spent, direction_spent = spending_shares(limit)
    same_t, direction_t = spending_t(limit)
    draw = np.random.default_rng(seed)
    worst_same = np.full(len(limit.looks()), np.nan)
    worst_direction = np.full(len(limit.looks()), np.nan)
    for pair_sd, duet_sd, heavy in cells:
        cell = Conditions(1.0, pair_sd, duet_sd, heavy_tails=heavy)
        t = np.vstack([pivots(modelled(cell, limit, min(CHUNK, n - i), draw), limit)
                       for i in range(0, n, CHUNK)])
        t = np.vstack([t, -t])
        same = bounds_for(t, same_spent, same_t)
        direction = bounds_for(t, direction_spent, direction_t)
        worst_same = np.fmax(worst_same, same)
        worst_direction = np.fmax(worst_direction, direction)
        label = f"{pair_sd:.1%} {duet_sd:.1%}{' heavy' if heavy else ''}"
        print(f"{label}: same {np.round(same[~np.isnan(same)], 2).tolist()}", flush=True)
        print(f"{label}: slower/faster {np.round(direction, 2).tolist()}", flush=True)
        if out:
            records.append(out, {"study": "bounds", "cell": label, "n": n, "seed": seed,
                                 "machine_key": detect().key(), "limit": repr(limit),
                                 "looks": limit.looks(), "same": same.tolist(),
                                 "direction": direction.tolist(),
                                 "same_spending_t": same_t.tolist(),
                                 "direction_spending_t": direction_t.tolist()})
    return tuple((look, round(float(s), 3) if not np.isnan(s) else math.inf,
                  round(float(d), 3))
                 for look, s, d in zip(limit.looks(), worst_same, worst_direction, strict=True))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=8000, help="sessions a cell (and as many mirrored)")
    parser.add_argument("--seed", type=int, default=177)
    add_schedule(parser)
    parser.add_argument("--alpha", type=float, default=Limit.alpha,
                        help="each one-sided wrong verdict's share at most (default: %(default)s)")
    parser.add_argument("--out", type=Path,
                        help="append each cell's bounds and then the table (JSON lines)")
    args = parser.parse_args()
    limit = scheduled(args, alpha=args.alpha)
    table = calibrate(limit, CELLS, args.n, args.seed, args.out)
    if args.out:
        records.append(args.out, {"study": "table", "limit": repr(limit), "n": args.n,
                                  "seed": args.seed, "machine_key": detect().key(),
                                  "same_looks": list(limit.same_looks), "last": limit.last,
                                  "alpha": limit.alpha, "late_relay": limit.late_relay,
                                  "direction_power": limit.direction_power,
                                  "direction_linear": limit.direction_linear,
                                  "trim": limit.trim,
                                  "critical": [[n, None if math.isinf(s) else s, d]
                                               for n, s, d in table]})
    print("CALIBRATED = (")
    for look, same, direction in table:
        print(f"    ({look}, {'math.inf' if math.isinf(same) else same}, {direction}),")
    print(")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
