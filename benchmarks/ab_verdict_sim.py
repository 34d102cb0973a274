"""Which A/B interval? The verdict rules compared on simulated cases (tfperf/ab/simulate.py).

Each rule judges the same simulated sessions (per-pair noise, each duet's own offset, the
relay's schedule and counterbalanced orders of the shipped defaults) at each cell of the grid
issue 33 set: per-pair SD 1.5-10%, a duet's own offset 0.3-1% SD. Per rule and cell: wrong
decided verdicts (slower or faster at half the floor; same at 1.2 floors), how often every
look's interval held the true ratio, A/A `same`, the share of 2%, 3% and 5% slowdowns
caught, and the median time to a verdict on the 2-core CPU's clock (start 12 s, 3 s a relay,
0.58 s a pair: docs/ab.md). The rules:

- independent: every pair independent (the oldest kept sessions' rule, `spending`);
- duets floor X: the random-effects model, a duet's own offset at least X (the shipped rule
  with 0.5%);
- clusters: each duet's centre one observation, Student's t on D - 1 degrees of freedom at
  every look (exact under normality, whatever the offsets).

    python benchmarks/ab_verdict_sim.py --sessions 300
    python benchmarks/ab_verdict_sim.py --sessions 200 --grid 0.10:0.01
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from dataclasses import replace

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from tfperf.ab import random_effects, signed_rank, simulate, verdict
from tfperf.ab.random_effects import Pairs
from tfperf.ab.simulate import Conditions
from tfperf.options.ab_settings import ABSettings

# Issue 33's defaults, which docs/ab.md's table of this study was made at (issue 53's rule and
# design are compared by benchmarks/ab_designs.py).
DEFAULTS = ABSettings(look_rule="duets", alpha=0.05, relay=16, spending_power=1,
                      half_doubling=False)
GRID = [(0.015, 0.003), (0.015, 0.01), (0.02, 0.0055), (0.02, 0.009), (0.035, 0.006),
        (0.05, 0.003), (0.05, 0.01), (0.10, 0.01)]
Judge = Callable[[Pairs], tuple[float, float]]  # the interval (B/A) at the pairs' look


def rule(settings: ABSettings) -> Judge:
    def judge(pairs: Pairs) -> tuple[float, float]:
        found = verdict.judge(pairs, settings)
        return found.low, found.high
    return judge


def clusters(pairs: Pairs) -> tuple[float, float]:
    names = np.unique(pairs.duets)
    centres = np.array([signed_rank.centre(pairs.log_ratios[pairs.duets == d]) for d in names])
    fit = random_effects.fit(pairs, 0.0, False)
    z = verdict.bounds(DEFAULTS, fit)[DEFAULTS.look_index(len(pairs))]
    half = float(student_t.isf(norm.sf(z), len(names) - 1)) * centres.std(ddof=1) / \
        math.sqrt(len(names))
    return math.exp(centres.mean() - half), math.exp(centres.mean() + half)


def status(low: float, high: float) -> str:
    floor = DEFAULTS.floor
    return verdict._status(low, high, floor)


def run(judge: Judge, conditions: Conditions, sessions: int, seed: int
        ) -> tuple[list[str], list[int], float]:
    """Final statuses, pairs judged, and the share of sessions whose every look held."""
    draw = np.random.default_rng(seed)
    statuses, pairs, held = [], [], 0
    for _ in range(sessions):
        data = simulate.session(conditions, DEFAULTS, draw)
        intervals = [judge(data.head(look)) for look in DEFAULTS.looks()]
        held += all(low <= conditions.ratio <= high for low, high in intervals)
        for look, (low, high) in zip(DEFAULTS.looks(), intervals, strict=True):
            found = status(low, high)
            if found != "undecided" or look == DEFAULTS.max_pairs:
                statuses.append(found)
                pairs.append(look)
                break
    return statuses, pairs, held / sessions


def seconds(pairs: int) -> float:
    relays = len(np.unique(DEFAULTS.duet_numbers(pairs))) - DEFAULTS.duets
    return 12 + 3 * relays + 0.58 * pairs


def cell(judge: Judge, pair_sd: float, duet_sd: float, n: int) -> str:
    def at(ratio: float, seed: int) -> tuple[list[str], list[int], float]:
        return run(judge, Conditions(ratio, pair_sd, duet_sd), n, seed)

    near, _, _ = at(1 - DEFAULTS.floor / 2, 1)
    beyond, _, _ = at(1 - 1.2 * DEFAULTS.floor, 2)
    same, _, held = at(1.0, 3)
    caught = []
    for seed, slowdown in enumerate((0.02, 0.03, 0.05), start=4):
        found, pairs, _ = at(1 - slowdown, seed)
        caught.append(f"{found.count('slower') / n:.2f} "
                      f"({np.median([seconds(p) for p in pairs]):.0f})")
    wrong_near = (near.count("slower") + near.count("faster")) / n
    return (f"{wrong_near:.3f}, {beyond.count('same') / n:.3f}  |  {held:.2f}  |  "
            f"{same.count('same') / n:.2f}  |  {', '.join(caught)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--grid", nargs="+", metavar="PAIR:DUET",
                        help="cells to run, each per-pair SD and duet SD as fractions "
                             "(default: the whole grid), e.g. 0.10:0.01")
    args = parser.parse_args()
    grid = [tuple(map(float, cell.split(":"))) for cell in args.grid] if args.grid else GRID
    n = args.sessions
    rules: dict[str, Judge] = {
        "independent": rule(replace(DEFAULTS, look_rule="spending")),
        **{f"duets floor {f:.1%}": rule(replace(DEFAULTS, min_duet_sd=f))
           for f in (0.0, 0.003, 0.005, 0.01)},
        "clusters": clusters}
    print("pair SD  duet SD  rule  |  wrong: slower/faster at 0.75%, same at 1.8%  |  every "
          "look held  |  A/A same  |  caught (median s): 2%, 3%, 5%")
    for pair_sd, duet_sd in grid:
        for name, judge in rules.items():
            print(f"{pair_sd:.1%}  {duet_sd:.2%}  {name}  |  {cell(judge, pair_sd, duet_sd, n)}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
