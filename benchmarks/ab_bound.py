"""The best any valid A/B design could do on the reservoir's real pairs (issue 53's targets).

Every design the verdict can take is bounded by the pairs' own noise. This study gives a design
more than any real one has, and asks whether even that one reaches the targets in the time
asked (half of issue 33's median A/A seconds):

- it knows each session's real variance of a duet's centre (the Hodges-Lehmann estimate of m
  pairs after the second turn, as the verdict takes it), measured over that session's 32 or
  more duets, so it pays no Student's t for estimating it;
- it looks once, at a 90% interval (z = 1.645: the one-sided 5% the claim allows), so it pays
  nothing for looking early;
- its pairs cost what the cheapest arm of `ab_pair_cost.py` measured against the shipped pair
  (0.63 s against 1.01 s: bursts every 8th pair, one-step turns), with their noise assumed
  unchanged, and its relays cost nothing.

Per session it computes the share of A/A cases that would say `same` and of slowdowns that
would be caught at n pairs, averages them over the sessions, and finds the fewest pairs (and
so seconds) for A/A `same` in 90% and a 3% and 2% slowdown caught in 95%.

`--tails` asks instead whether a variance estimated from the pairs could come nearer the real
one than the verdict's model, (pi / 3) sigma_e^2 / m, which assumes normal noise: per A/A
session, the duets' centres' real variance (m = 8) over the model's and over a heavy-tail
estimate of the Hodges-Lehmann variance, 1 / (12 m tau^2) with tau the density of two pairs'
difference at 0 (Lehmann's integral of f squared), counted over the pairs' differences within
each duet in a window of 1.17 MAD N^(-1/5).

    python benchmarks/ab_bound.py benchmarks/data/ab_reservoir/<key>.jsonl.gz \\
        --workload resnet20 --today 227
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
from ab_reservoir import RELAY, adjusted_generations, costs, duet_centres, load  # a sibling study
from scipy.stats import norm

from tfperf.ab import random_effects

Z = 1.645  # a one-sided 5%: the most a 90% interval may miss by on one side
CHEAPER_PAIR = 0.63 / 1.01  # ab_pair_cost.py: bursts every 8th pair, one-step turns


def centre_variance(kept: dict[str, Any], m: int) -> float:
    """The session's real variance of a duet's centre over m pairs."""
    return float(np.var(duet_centres(kept, m).ravel(), ddof=1))


def lehmann_variance(kept: dict[str, Any], m: int) -> tuple[float, float, float]:
    """The real variance of a duet's centre over m pairs, the model's and Lehmann's."""
    real, differences, within = centre_variance(kept, m), [], []
    for head, fit, adjusted in adjusted_generations(kept, m):
        within.append(fit.within_sd ** 2)
        for duet in np.unique(head.duets):
            v = adjusted[head.duets == duet]
            i, j = np.triu_indices(len(v), 1)
            differences.append(np.abs(v[i] - v[j]))
    d = np.concatenate(differences)
    h = 1.17 * np.median(d) / 0.6745 * len(d) ** -0.2
    tau = np.mean(d <= h) / (2 * h)
    return real, random_effects.HL_VARIANCE * float(np.mean(within)) / m, 1 / (12 * m * tau ** 2)


def shares(variances: np.ndarray, m: int, n: int, change: float, floor: float) -> float:
    """Over the sessions, the share an oracle's single 90% interval at n pairs gets right:
    `same` where the change is 0, `slower` otherwise."""
    se = np.sqrt(variances * m / n)
    truth = np.log1p(change)
    if change == 0:
        room = np.log1p(floor) - Z * se  # |centre| must be below it on both sides
        return float(np.mean(np.where(room > 0, 2 * norm.cdf(room / se) - 1, 0.0)))
    return float(np.mean(norm.cdf((np.log1p(-floor) - Z * se - truth) / se)))


def fewest(variances: np.ndarray, m: int, change: float, floor: float, target: float) -> int:
    n = m
    while shares(variances, m, n, change, floor) < target and n < 100_000:
        n += m
    return n


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--workload", default="resnet20")
    parser.add_argument("--today", type=float, required=True,
                        help="issue 33's median A/A seconds on these pairs (ab_reservoir.py judge)")
    parser.add_argument("--floor", type=float, default=0.015)
    parser.add_argument("--tails", action="store_true",
                        help="the real centres' variance against the model's and Lehmann's")
    args = parser.parse_args()
    sessions = [k for k in load(args.files) if k["workload"] == args.workload
                and not k["slowdown"]]
    if len(sessions) < 2:
        print(f"{len(sessions)} A/A session(s) of {args.workload}: need 2 or more", file=sys.stderr)
        return 2
    if args.tails:
        print("| session | real / model | real / Lehmann | Lehmann / model |")
        print("| --- | ---: | ---: | ---: |")
        for kept in sessions:
            real, model, lehmann = lehmann_variance(kept, 8)
            print(f"| {kept['session']} | {real / model:.2f} | {real / lehmann:.2f} | "
                  f"{lehmann / model:.2f} |")
        return 0
    start, _, pair = costs(sessions)
    pair *= CHEAPER_PAIR
    budget = int((args.today / 2 - start) / pair)
    print(f"{args.workload}: {len(sessions)} A/A sessions; the oracle's start {start:.0f} s, "
          f"pair {pair:.2f} s, relays free: half of today's {args.today:.0f} s buys {budget} pairs")
    print("| duet of m pairs | centre SD, sessions (median) | A/A `same` at the budget | "
          "pairs (s) for A/A `same` 90% | 3% caught at the budget | pairs (s) for 3% caught 95% | "
          "pairs (s) for 2% caught 95% |")
    print("| ---: | --- | ---: | --- | ---: | --- | --- |")
    for m in (4, 8, RELAY):
        v = np.array([centre_variance(k, m) for k in sessions])
        cells = [f"{np.sqrt(v.min()):.2%}-{np.sqrt(v.max()):.2%} ({np.sqrt(np.median(v)):.2%})",
                 f"{shares(v, m, budget, 0.0, args.floor):.1%}"]
        need = fewest(v, m, 0.0, args.floor, 0.90)
        cells.append(f"{need} ({start + pair * need:.0f})")
        cells.append(f"{shares(v, m, budget, -0.03, args.floor):.1%}")
        for change in (-0.03, -0.02):
            need = fewest(v, m, change, args.floor, 0.95)
            cells.append(f"{need} ({start + pair * need:.0f})")
        print(f"| {m} | {' | '.join(cells)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
