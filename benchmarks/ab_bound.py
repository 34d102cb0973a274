"""The best any valid A/B design could do on the reservoir's real pairs, for the target's own
question (issue 77, correcting issue 53's bound): how many pairs and seconds until half the A/A
cases say `same` (the median A/A time, the one target with a time limit: half of today's), 90%
say `same`, and a 3% and a 2% slowdown are caught in 95%?

The oracle knows each session's real variance of its estimate, looks once at a 90% interval
(z = 1.645: the one-sided 5% the claim allows) and so pays nothing for estimating the variance
or for looking early; no real design does better with the same estimator and pairs.

- **The variance, from the data**: each session's variance a pair of the estimate is measured
  by resampling its pairs (after the second-turn effect, as the verdict takes them): the
  estimate of 256 pairs drawn with replacement, 300 times, its variance x 256. Not the spread
  of the session's 32 duets' centres, the noisiest estimate (the column `32 centres` shows it
  beside the shipped estimator's).
- **The estimator, a choice** (`ESTIMATORS`): the shipped mean of the duets' Hodges-Lehmann
  centres (duets of 8 pairs), the Hodges-Lehmann estimate of all pairs pooled, the 25% trimmed
  mean and Huber's M-estimate (ab_limit.py).
- **One cost basis**: the reservoir's own seconds (ab_reservoir.costs: the start, a relay and a
  pair without its relays), the relays priced as measured on the candidate's schedule
  (ab_limit.Limit: a fresh duet every 16 pairs, every 32 after 512). `--saving S` also prices a
  pair S seconds cheaper: the absolute saving ab_pair_cost.py measured on its own basis (1.01 s
  to 0.63 s a pair, relays in both: 0.38 s), never a ratio carried from one basis to another.
- Per workload and host, never pooled; the shares are averaged over the sessions, and each
  figure's 95% interval comes from 400 resamples of the sessions.

`--tails` asks whether Lehmann's heavy-tail variance of a duet's Hodges-Lehmann centre comes
near the real one (the verdict's model, (pi / 3) sigma_e^2 / m, assumes normal noise).

    python benchmarks/ab_bound.py benchmarks/data/ab_reservoir/<key>.jsonl.gz \\
        --workload resnet20 --today 227 --saving 0.38
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from ab_limit import Limit, huber, trimmed  # sibling studies (their folder is on the path)
from ab_reservoir import adjusted_generations, costs, duet_centres, load, pairs_of
from scipy.stats import norm

from tfperf.ab import random_effects, signed_rank

Z = 1.645  # a one-sided 5%: the most a 90% interval may miss by on one side
DRAWN, DRAWS, DUET = 256, 300, 8  # pairs an estimate, estimates a session, pairs a duet


def _duet_hl(y: np.ndarray) -> np.ndarray:
    """The shipped estimate of each row: the mean of its duets' (DUET pairs in turn)
    Hodges-Lehmann centres."""
    n = y.shape[1] // DUET * DUET
    index = np.arange(n) // DUET
    return np.asarray(signed_rank.centres(y[:, :n], index, np.bincount(index)).mean(axis=1))


def _pooled_hl(y: np.ndarray) -> np.ndarray:
    return np.array([signed_rank.centre(row) for row in y])


ESTIMATORS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "shipped: duets' HL, mean": _duet_hl, "HL pooled": _pooled_hl,
    "25% trimmed mean": lambda y: trimmed(y)[0], "Huber": lambda y: huber(y)[0]}


def adjusted(kept: dict[str, Any]) -> np.ndarray:
    """A session's log B/A after its second-turn effect, as the verdict takes them."""
    pairs = pairs_of(kept)
    fit = random_effects.fit(pairs, 0.0, False)
    found: np.ndarray = pairs.log_ratios - fit.order_effect * pairs.b_second
    return found


def pair_variance(y: np.ndarray, estimate: Callable[[np.ndarray], np.ndarray],
                  draw: np.random.Generator) -> float:
    """The estimate's variance a pair: of DRAWN pairs drawn with replacement, x DRAWN."""
    drawn = y[draw.integers(len(y), size=(DRAWS, DRAWN))]
    return float(np.var(estimate(drawn), ddof=1) * DRAWN)


def centre_variance(kept: dict[str, Any], m: int) -> float:
    """The session's variance of a duet's centre over m pairs, from its 32 or more duets."""
    return float(np.var(duet_centres(kept, m).ravel(), ddof=1))


def lehmann_variance(kept: dict[str, Any], m: int) -> tuple[float, float, float]:
    """The real variance of a duet's centre over m pairs, the model's and Lehmann's."""
    real, differences, within = centre_variance(kept, m), [], []
    for head, fit, adjusted_ in adjusted_generations(kept, m):
        within.append(fit.within_sd ** 2)
        for duet in np.unique(head.duets):
            v = adjusted_[head.duets == duet]
            i, j = np.triu_indices(len(v), 1)
            differences.append(np.abs(v[i] - v[j]))
    d = np.concatenate(differences)
    h = 1.17 * np.median(d) / 0.6745 * len(d) ** -0.2
    tau = np.mean(d <= h) / (2 * h)
    return real, random_effects.HL_VARIANCE * float(np.mean(within)) / m, 1 / (12 * m * tau ** 2)


def shares(variances: np.ndarray, n: np.ndarray, change: float, floor: float) -> np.ndarray:
    """At each n pairs, the share over the sessions (variances a pair) that an oracle's single
    90% interval gets right: `same` where the change is 0, `slower` otherwise."""
    se = np.sqrt(variances[None, :] / n[:, None])
    truth = np.log1p(change)
    if change == 0:
        # |centre| inside the floor less the interval's half-width on both sides.
        low, high = np.log1p(-floor) + Z * se, np.log1p(floor) - Z * se
        found = np.clip(norm.cdf(high / se) - norm.cdf(low / se), 0.0, 1.0)
    else:
        found = norm.cdf((np.log1p(-floor) - Z * se - truth) / se)
    return np.asarray(found.mean(axis=1))


TARGETS = (("A/A `same` 50%", 0.0, 0.5), ("A/A `same` 90%", 0.0, 0.9),
           ("3% caught 95%", -0.03, 0.95), ("2% caught 95%", -0.02, 0.95))
N = np.arange(2, 20_001, 2)


def fewest(variances: np.ndarray, change: float, floor: float, target: float) -> int:
    reached = shares(variances, N, change, floor) >= target
    return int(N[np.argmax(reached)]) if reached.any() else 0


def tails(sessions: list[dict[str, Any]]) -> int:
    print("| session | real / model | real / Lehmann | Lehmann / model |")
    print("| --- | ---: | ---: | ---: |")
    for kept in sessions:
        real, model, lehmann = lehmann_variance(kept, 8)
        print(f"| {kept['session']} | {real / model:.2f} | {real / lehmann:.2f} | "
              f"{lehmann / model:.2f} |")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", type=Path, nargs="+")
    parser.add_argument("--workload", default="resnet20")
    parser.add_argument("--today", type=float, required=True,
                        help="today's median A/A seconds on these pairs (ab_reservoir.py judge "
                             "--design today)")
    parser.add_argument("--floor", type=float, default=0.015)
    parser.add_argument("--saving", type=float, default=0.0,
                        help="also price a pair this many seconds cheaper (ab_pair_cost.py)")
    parser.add_argument("--tails", action="store_true",
                        help="the real centres' variance against the model's and Lehmann's")
    args = parser.parse_args()
    sessions = [k for k in load(args.files) if k["workload"] == args.workload
                and not k["slowdown"]]
    if len(sessions) < 2 or len({k["machine_key"] for k in sessions}) != 1:
        print(f"{len(sessions)} A/A session(s) of {args.workload}: need 2 or more, of one "
              "machine key", file=sys.stderr)
        return 2
    if args.tails:
        return tails(sessions)
    start, relay, pair = costs(sessions)
    limit = Limit()
    prices = [pair] + ([pair - args.saving] if args.saving else [])

    def seconds(n: int) -> str:
        return "/".join(f"{start + p * n + relay * limit.relays(n):.0f}" for p in prices)

    print(f"{args.workload} on {sessions[0]['machine_key']}: {len(sessions)} A/A sessions "
          f"of 512 pairs; start {start:.0f} s, a relay {relay:.1f} s, a pair "
          f"{' or '.join(f'{p:.2f}' for p in prices)} s; half of today's {args.today:.0f} s "
          f"is {args.today / 2:.0f} s")
    draw = np.random.default_rng(77)
    ys = [adjusted(k) for k in sessions]
    old = np.array([centre_variance(k, DUET) * DUET for k in sessions])
    print(f"the shipped estimate's SD a pair from the 32 duets' centres (issue 53's bound): "
          f"{', '.join(f'{v:.1%}' for v in np.sqrt(old))}")
    print("| estimator | SD a pair, sessions (median) | variance / shipped's (median) | "
          + " | ".join(f"pairs for {t[0]} [95% over sessions] (s)" for t in TARGETS) + " |")
    print("| --- | --- | ---: |" + " --- |" * len(TARGETS))
    shipped = None
    for name, estimate in ESTIMATORS.items():
        v = np.array([pair_variance(y, estimate, draw) for y in ys])
        shipped = v if shipped is None else shipped
        cells = [f"{np.sqrt(v.min()):.1%}-{np.sqrt(v.max()):.1%} ({np.sqrt(np.median(v)):.1%})",
                 f"{np.median(v / shipped):.2f}"]
        for _, change, target in TARGETS:
            need = fewest(v, change, args.floor, target)
            again = [fewest(v[draw.integers(len(v), size=len(v))], change, args.floor, target)
                     for _ in range(400)]
            cells.append(f"{need} [{np.percentile(again, 2.5):.0f}, "
                         f"{np.percentile(again, 97.5):.0f}] ({seconds(need)})")
        print(f"| {name} | {' | '.join(cells)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
