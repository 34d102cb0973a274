"""What a pair costs and how noisy it is, by turn length and yardstick burst (issue 53): can an
A/B verdict come in half the time by making pairs cheaper rather than quieter?

On the AVX-512 Xeon the reservoir's A/A pairs spread 13-15% (log B/A within duets): the
machine's speed swings +-22% from turn to turn, A's and B's turns share 0.83 of it, and what is
left is independent from pair to pair (autocorrelation about 0) and follows no order. A turn is
one 0.2 s round of two steps, and a pair took 0.8 s: the other 0.4 s are each turn's 0.1 s
yardstick burst and the messages. If the noise is the turn's (its start, not its steps), a
shorter turn without a burst before it costs less per pair at the same noise.

`run` runs fixed-length A/A sessions (--pairs each, no early stop, numerics off) of resnet20
tiny's default CPU case, one for each arm in an order drawn afresh per round, each a fresh
`pytest perf/` process from this checkout, alone on the machine, and appends a line a session
(gzip JSON lines): the arm, its settings, the per-pair SD within duets, the seconds per pair
(the measured pairs with their relays over the pairs) and the pairs. `report` gives each arm's
median per-pair SD and seconds per pair, and the time to a verdict it implies relative to the
shipped arm: SD^2 x seconds per pair (pairs needed for an interval of a given width grow as the
variance), with a bootstrap interval over the sessions.

    python benchmarks/ab_pair_cost.py run --rounds 2
    python benchmarks/ab_pair_cost.py report benchmarks/data/ab_pair_cost/*.jsonl.gz
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from lab import records, sessions

from tfperf.ab import random_effects
from tfperf.ab.random_effects import Pairs
from tfperf.ground.machine import detect

DATA = records.DATA / "ab_pair_cost"
# The workload's default CPU case (--workload; resnet20 where a kept line names none).
CASE = ("{} and cpu1 and workers1 and xla_off and NHWC and default and single and fp32 "
        "and synthetic")
WORKLOAD = "resnet20"
# name: (turn seconds, steps a round, a yardstick burst before every K-th pair of a duet). A
# round of two steps takes about 0.2 s here, so a turn is one round: a shorter turn is a round
# of one step, a longer one two rounds.
ARMS = {"shipped": (0.2, 2, 1), "yardstick every 8": (0.2, 2, 8),
        "one step a turn, yardstick every 8": (0.1, 1, 8),
        "two rounds a turn, yardstick every 8": (0.4, 2, 8)}
REFERENCE = "shipped"


def run(args: argparse.Namespace) -> int:
    out = args.out or DATA / f"{detect().key()}.jsonl.gz"
    draw = np.random.default_rng(args.seed)
    for number in range(1, args.rounds + 1):
        for name in draw.permutation(args.arm or list(ARMS)):
            turn, steps, every = ARMS[str(name)]
            done = sessions.run(["perf/test_training.py", "-k", CASE.format(args.workload),
                                 "--perf-ab-side-a=current",
                                 f"--perf-ab-pairs={args.pairs}:{args.pairs}",
                                 "--perf-ab-numerics=off", f"--perf-ab-turn={turn}",
                                 f"--perf-steps-per-round={steps}",
                                 f"--perf-ab-yardstick-every={every}"])
            data = done.ab()
            if data is None:
                print(f"round {number} {name}: no session file", file=sys.stderr)
                continue
            (case,) = data["cases"]
            pairs = case["pairs"]
            fit = random_effects.fit(Pairs.of([p["b_rate"] / p["a_rate"] for p in pairs],
                                              [p["duet"] for p in pairs],
                                              [p["order"] for p in pairs]), 0.0, False)
            line = {"arm": str(name), "workload": args.workload, "turn_s": turn, "steps_per_round": steps,
                    "yardstick_every": every, "round": number,
                    "session": data["session"], "machine_key": data["machine_key"],
                    "pairs": len(pairs), "per_pair_sd": fit.within_sd, "duet_sd": fit.duet_sd,
                    "s_per_pair": case["rounds_s"] / len(pairs), "wall_s": case["wall_s"],
                    "failure": case["failure"]}
            records.append(out, line)
            print(f"round {number} {name}: per-pair SD {fit.within_sd:.1%}, "
                  f"{line['s_per_pair']:.2f} s a pair, {done.seconds:.0f} s",                  flush=True)
    return 0


def report(args: argparse.Namespace) -> int:
    by_workload: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(
        lambda: defaultdict(list))
    for kept in records.rows(args.files):
        if kept["failure"] is None:
            by_workload[kept.get("workload", WORKLOAD)][kept["arm"]].append(kept)
    for workload, by_arm in by_workload.items():
        if REFERENCE not in by_arm:
            print(f"{workload}: no session of the {REFERENCE} arm", file=sys.stderr)
            return 2
        print(f"\n{workload}:\n")
        _table(by_arm)
    return 0


def _table(by_arm: dict[str, list[dict[str, Any]]]) -> None:
    """One workload's arms against the reference: noise, seconds a pair (with its relays, and
    the saving against the reference's in seconds), and the time to a verdict."""
    draw = np.random.default_rng(53)

    def cost(sessions: list[dict[str, Any]]) -> float:
        return float(np.median([s["per_pair_sd"] for s in sessions]) ** 2 *
                     np.median([s["s_per_pair"] for s in sessions]))

    reference = by_arm[REFERENCE]
    shipped_s = float(np.median([s["s_per_pair"] for s in reference]))
    print("| arm | sessions | per-pair SD (median) | s a pair (median) | saving a pair | time to "
          f"a verdict / {REFERENCE}'s (95% bootstrap) |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for arm, of_arm in by_arm.items():
        ratio = cost(of_arm) / cost(reference)
        boot = [cost(list(draw.choice(of_arm, len(of_arm)))) /  # type: ignore[arg-type]
                cost(list(draw.choice(reference, len(reference))))  # type: ignore[arg-type]
                for _ in range(2000)]
        print(f"| {arm} | {len(of_arm)} | "
              f"{np.median([s['per_pair_sd'] for s in of_arm]):.1%} | "
              f"{np.median([s['s_per_pair'] for s in of_arm]):.2f} | "
              f"{shipped_s - np.median([s['s_per_pair'] for s in of_arm]):.2f} s | {ratio:.2f} "
              f"[{np.percentile(boot, 2.5):.2f}, {np.percentile(boot, 97.5):.2f}] |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    running = sub.add_parser("run", help="rounds of fixed-length A/A sessions, one an arm")
    running.add_argument("--rounds", type=int, default=2)
    running.add_argument("--pairs", type=int, default=128)
    running.add_argument("--seed", type=int, default=53)
    running.add_argument("--workload", default=WORKLOAD,
                         help="the workload whose default CPU case runs (default: %(default)s)")
    running.add_argument("--arm", action="append", choices=list(ARMS),
                         help="an arm to run, again for more (default: every arm)")
    running.add_argument("--out", type=Path)
    reporting = sub.add_parser("report", help="each arm's noise and cost against the shipped")
    reporting.add_argument("files", type=Path, nargs="+")
    args = parser.parse_args()
    return {"run": run, "report": report}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
