"""Which A/B design? Issue 53's candidates judged on the same simulated sessions by the verdict
code itself (tfperf/ab/simulate.py, verdict.sequential): is every look's interval valid, and how
long does a verdict take?

A design is a rule and its schedule: today's `duets` (Student's t on degrees of freedom chosen
by whether the 0.5% floor binds) or `duets-t` (t on the duets' D - 1 at every look, the floor
only a lower bound on the variance); the confidence (95%, or 90% with each one-sided wrong
verdict at most 5%); the looks; the relay; the spending function's power; and what a pair
costs (with the yardstick burst before every turn, or every k-th).

Per design and cell (per-pair SD, duet SD, noise, second-turn effect):
- held: the share of sessions whose every look's interval held the true ratio (B/A 1; all
  looks judged, no stopping), with the least share held at one look;
- wrong at the floor's edge: `slower` at a true change of floor - 0.1%, `same` at floor + 0.1%
  (each a one-sided wrong verdict, whose share may be alpha / 2);
- A/A `same`, and 2%, 3%, 5% slowdowns caught, each with the median and 90th percentile of
  seconds to a verdict by the time model below.

Time model (docs/ab.md, resnet20 tiny on the 2-core CPU, fast host): 12 s to start, 3 s a
relay, 0.48 s a pair of turns plus 0.1 s of yardstick bursts for each pair that has them.

    python benchmarks/ab_designs.py --sessions 2000
    python benchmarks/ab_designs.py --sessions 500 --designs today best --cells 0.01:0.015
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
from dataclasses import dataclass, replace

import lab  # noqa: F401 (this checkout's tfperf first on the path)
import numpy as np

from tfperf.ab import simulate, verdict
from tfperf.ab.simulate import Conditions
from tfperf.options.ab_settings import CLUSTERS_T, ABSettings

START_S, RELAY_S, PAIR_S, YARDSTICK_S = 12.0, 3.0, 0.48, 0.10


@dataclass(frozen=True)
class Design:
    settings: ABSettings
    yardstick_every: int = 1  # the yardstick bursts run before every k-th pair's turns

    def seconds(self, pairs: int) -> float:
        relays = self.settings.relays(pairs)
        bursts = math.ceil(pairs / self.yardstick_every)
        return START_S + RELAY_S * relays + PAIR_S * pairs + YARDSTICK_S * bursts


# Issue 33's defaults, and candidates that change one thing at a time from them (each schedule
# spelled out: the defaults are the trimmed rule's now).
TODAY = ABSettings(look_rule="duets", alpha=0.05, min_pairs=16, max_pairs=256, relay=16,
                   late_relay=0, spending_power=1, half_doubling=False)
VALID = replace(TODAY, look_rule="duets-t")
ONE_SIDED = replace(VALID, alpha=0.10)
DUETS_T_SHIPPED = replace(ONE_SIDED, relay=8, spending_power=2, half_doubling=True)
DESIGNS = {
    "today": Design(TODAY),
    "duets-t 95%": Design(VALID),
    "duets-t 90%": Design(ONE_SIDED),
    "duets-t 90% relay 8": Design(replace(ONE_SIDED, relay=8)),
    "duets-t 90% relay 8 power 2": Design(replace(ONE_SIDED, relay=8, spending_power=2)),
    # duets-t as it shipped until the trimmed rule
    "duets-t 90% relay 8 half-looks power 2": Design(DUETS_T_SHIPPED),
    "duets-t 90% relay 4 power 2": Design(replace(ONE_SIDED, relay=4, spending_power=2)),
    "duets-t shipped, yardstick every 8th pair": Design(DUETS_T_SHIPPED, 8),
    # A research rule, retired (ab_settings.RETIRED_RULES: no session runs under it): duets-t
    # with Var(B/A) the duets' centres' own spread over D alone, without the model's
    # (pi / 3) sigma_e^2 / m as its lower bound, which overstates a Hodges-Lehmann centre's
    # variance where the pairs' noise has heavy tails. Rejected: valid on the model's simulated
    # grid, it said `same` at a true -1.6% in 8% of pseudo-sessions drawn from transformer's
    # real pairs (ab_reservoir.py judge; docs/ab.md, the reservoir).
    "clusters-t, shipped otherwise": Design(replace(DUETS_T_SHIPPED, look_rule=CLUSTERS_T)),
}


# Real sessions: per-pair SD 2.1-3.5% and duets 0-0.8% on the AVX2-only host, 1.5-3.5% and
# 0.3-1% on the AVX-512 one, 2.5% between duets with oneDNN off (docs/ab.md); the grid's edges
# beyond them.
CELLS = [Conditions(1.0, 0.025, 0.005), Conditions(1.0, 0.03, 0.008),
         Conditions(1.0, 0.015, 0.01), Conditions(1.0, 0.01, 0.015),
         Conditions(1.0, 0.01, 0.025), Conditions(1.0, 0.005, 0.003),
         Conditions(1.0, 0.05, 0.01), Conditions(1.0, 0.10, 0.01),
         Conditions(1.0, 0.02, 0.009, heavy_tails=True),
         Conditions(1.0, 0.01, 0.015, second_turn=0.01)]


def held(design: Design, cell: Conditions, sessions: int, seed: int) -> tuple[float, float]:
    """The share of sessions whose every look held B/A 1, and the least share at one look."""
    settings, draw = design.settings, np.random.default_rng(seed)
    looks = settings.looks()
    hits = np.zeros((sessions, len(looks)), dtype=bool)
    for s in range(sessions):
        pairs = simulate.session(cell, settings, draw)
        for k, look in enumerate(looks):
            found = verdict.judge(pairs.head(look), settings)
            hits[s, k] = found.low <= 1.0 <= found.high
    return float(hits.all(axis=1).mean()), float(hits.mean(axis=0).min())


def verdicts(design: Design, cell: Conditions, sessions: int, seed: int
             ) -> tuple[list[str], list[float]]:
    settings, draw = design.settings, np.random.default_rng(seed)
    statuses: list[str] = []
    seconds: list[float] = []
    for _ in range(sessions):
        last = verdict.sequential(simulate.session(cell, settings, draw), settings)[-1]
        statuses.append(last.status)
        seconds.append(design.seconds(last.pairs))
    return statuses, seconds


def row(task: tuple[str, Conditions, int]) -> str:
    name, cell, n = task
    design = DESIGNS[name]
    floor = design.settings.floor
    every, least = held(design, cell, n, 1)
    inside, _ = verdicts(design, replace(cell, ratio=1 - floor + 0.001), n, 2)
    outside, _ = verdicts(design, replace(cell, ratio=1 - floor - 0.001), n, 3)
    same, same_s = verdicts(design, cell, n, 4)
    caught = []
    for seed, change in enumerate((0.02, 0.03, 0.05), start=5):
        found, seconds = verdicts(design, replace(cell, ratio=1 - change), n, seed)
        caught.append(f"{found.count('slower') / n:.3f} ({np.median(seconds):.0f}/"
                      f"{np.percentile(seconds, 90):.0f})")
    label = (f"{cell.pair_sd:.1%} {cell.duet_sd:.1%}{' heavy' if cell.heavy_tails else ''}"
             f"{' 2nd-turn' if cell.second_turn else ''}")
    return (f"| {label} | {name} | {every:.3f} ({least:.3f}) | "
            f"{inside.count('slower') / n:.3f} | {outside.count('same') / n:.3f} | "
            f"{same.count('same') / n:.3f} ({np.median(same_s):.0f}/"
            f"{np.percentile(same_s, 90):.0f}) | {' | '.join(caught)} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--designs", nargs="+", choices=list(DESIGNS), default=list(DESIGNS))
    parser.add_argument("--cells", nargs="+", metavar="PAIR:DUET",
                        help="per-pair SD and duet SD as fractions (default: the whole grid)")
    parser.add_argument("--processes", type=int, default=2)
    args = parser.parse_args()
    cells = [Conditions(1.0, float(c.split(":")[0]), float(c.split(":")[1]))
             for c in args.cells] if args.cells else CELLS
    print("| pair SD, duet SD | design | every look held (least look) | wrong `slower` at "
          "floor - 0.1% | wrong `same` at floor + 0.1% | A/A same (s median/p90) | 2% caught "
          "| 3% caught | 5% caught |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    tasks = [(name, cell, args.sessions) for cell in cells for name in args.designs]
    with multiprocessing.Pool(args.processes) as pool:
        for line in pool.imap(row, tasks):
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
