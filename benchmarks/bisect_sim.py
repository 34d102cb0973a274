"""How often does a bisection name the wrong culprit? Simulated bisections whose every step is
a simulated A/B session judged by the verdict code itself (tfperf/bisect/simulated_bisections.py), at the
shipped defaults: 16 candidates, the confirmation's first look at 128 pairs.

    python benchmarks/bisect_sim.py --runs 40
    python benchmarks/bisect_sim.py --runs 0 --start-s 19 --pair-s 0.26 --relay-s 3.7

Prints, per noise condition of the A/B grid (per-pair SD, duet SD): with one culprit of twice
the A/B floor at 3, 8 or 14, the wrong, right and undecided bisections and the 95% interval of
the wrong rate; and for the proof's history (a 2% change at 4, a 10% one at 11) and for a 10%
culprit alone at 11, how the bisections ended and their minutes by a cost model (each step's
workers' start, its pairs and its relays: --start-s, --pair-s, --relay-s).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

import lab  # noqa: F401 (this checkout's tfperf first on the path)
import numpy as np

from tfperf.bisect import search
from tfperf.bisect import simulated_bisections as simulate
from tfperf.options.ab_settings import ABSettings

GRID = [simulate.Noise(0.015, 0.01), simulate.Noise(0.02, 0.009), simulate.Noise(0.035, 0.006)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40, help="per culprit position (0: none)")
    parser.add_argument("--start-s", type=float, default=19.0, help="a step's workers' start")
    parser.add_argument("--pair-s", type=float, default=0.26, help="seconds a pair")
    parser.add_argument("--relay-s", type=float, default=3.7, help="seconds a relay")
    args = parser.parse_args()
    settings = ABSettings()
    for noise in GRID if args.runs else []:
        wrong = right = none = 0
        for culprit in (3, 8, 14):
            w, r, n = simulate.wrong_rate(16, culprit, simulate.change_of_twice(settings.floor),
                                          noise, settings, args.runs, seed=culprit)
            wrong, right, none = wrong + w, right + r, none + n
        low, high = simulate.binomial_interval(wrong, 3 * args.runs)
        print(f"{noise}: wrong {wrong}, right {right}, undecided {none} of {3 * args.runs}; "
              f"wrong rate 95% interval [{low:.3f}, {high:.3f}]")
    # The proof's history at the A/B grid's noisiest condition and at what a stack of small
    # convolutions spread on this machine on noisy evenings (9-14% a pair).
    def minutes(bisection: search.Bisection) -> float:
        steps = [s.result for s in bisection.steps if isinstance(s.result, search.Judged)]
        return float(sum(args.start_s + args.pair_s * r.pairs + args.relay_s * settings.relays(r.pairs)
                         for r in steps)) / 60

    for changes, label in (({4: 0.02, 11: 0.10}, "2% at 4 and 10% at 11"),
                           ({11: 0.10}, "10% at 11")):
        for noise in (GRID[-1], simulate.Noise(0.06, 0.005), simulate.Noise(0.09, 0.01),
                      simulate.Noise(0.13, 0.01)):
            draw = np.random.default_rng(7)
            speeds = simulate.profile(16, changes)
            found = [simulate.bisect(speeds, noise, settings, draw) for _ in range(100)]
            ended = Counter((b.outcome, b.culprit) for b in found)
            pairs = np.median([sum(s.result.pairs for s in b.steps
                                   if isinstance(s.result, search.Judged)) for b in found])
            took = [minutes(b) for b in found]
            print(f"{label}, {noise}: {dict(ended)}; median {pairs:.0f} pairs; minutes median "
                  f"{np.median(took):.1f}, 90th percentile {np.percentile(took, 90):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
