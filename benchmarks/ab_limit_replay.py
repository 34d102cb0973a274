"""How does the `limit` candidate (ab_limit.py) do on resampled real pairs and on the model's grid
with duet offsets and heavy tails (issue 77)?

`reservoir`: pseudo-sessions drawn from the reservoir's real A/A pairs of one workload on one
host (benchmarks/data/ab_reservoir/, never pooled): each draws one real session (so a bootstrap
over the sessions), then its pairs from that session's 512 with replacement, up to the
candidate's last look. The reservoir's pairs are white beyond the pair and its duets' offsets
about 0 (ab_reservoir.md), so pairs are drawn as independent: drawing a design's duet of 16
or 32 from one real duet's 16 would add that duet's sampling noise as an offset it does not
have (a two-stage bootstrap's bias); offsets are the grid's to test. Each
session's log B/A are first centred on the rule's own estimate (an A/A session's pairs are
symmetric about 0 by the counterbalanced order: what is left is its 512 pairs' sampling
noise, which 2,048 resampled pairs would otherwise keep as a bias). A known change is added to
side B (B/A x (1 + change)): A/A, -2% and -3% slowdowns, the floor's edge itself at +-1.5%
(every decided verdict a one-sided miss) and +-0.1% about it (`slower` or `faster` just inside
it wrong, `same` just beyond it wrong). Seconds by the
workload's own measured costs (ab_reservoir.costs: start, a relay, a pair without its relays)
and, with --pair, at another pair's cost.

`grid`: sessions drawn as tfperf/ab/simulate.py's model draws them (duet offsets normal, pairs'
noise normal or Student's t on 5 degrees of freedom, a second-turn effect), on the candidate's
schedule of duets (simulate.session takes the shipped schedule, so the draw is repeated here).

Each level: the verdicts' counts, the right and the wrong verdicts' shares with 95%
Clopper-Pearson intervals over the pseudo-sessions (and, on the reservoir, a 95% bootstrap
interval over the real sessions), pairs to a verdict (median and 90th percentile; for A/A, the
pairs by which 90% said `same`), and seconds.

    python benchmarks/ab_limit_replay.py reservoir \\
        benchmarks/data/ab_reservoir/<key>.jsonl.gz --workload resnet20 -n 2000 --pair 0.26
    python benchmarks/ab_limit_replay.py grid -n 1000 --out benchmarks/data/ab_limit/grid.<key>.jsonl.gz
    python benchmarks/ab_limit_replay.py grid -n 4000 --cells 0.01:0.015 --levels -0.015 0.015

(The grid's figures do not depend on the machine; its file is named by the machine that drew
them, as every kept file is.)
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from ab_limit import (  # siblings
    CALIBRATED,
    SAME,
    SLOWER,
    UNDECIDED,
    Limit,
    add_schedule,
    scheduled,
    sequential,
)
from ab_reservoir import costs, load
from lab import records
from scipy.stats import binomtest

from tfperf.ab.simulate import Conditions
from tfperf.ground.machine import detect

LEVELS = (0.0, -0.02, -0.03, -0.014, -0.015, -0.016, 0.014, 0.015, 0.016)


def right_and_wrong(change: float, floor: float) -> tuple[str, tuple[str, ...]]:
    """The right verdict at a true change, and the wrong decided ones (each one-sided claim). At
    the floor's edge itself every decided verdict's interval misses the truth on one side."""
    if math.isclose(abs(change), floor):
        return UNDECIDED, (SAME, SLOWER, "faster")
    if abs(change) < floor:
        return SAME, ((SLOWER,) if change < 0 else ("faster",)) if change else (SLOWER, "faster")
    return (SLOWER, (SAME, "faster")) if change < 0 else ("faster", (SAME, SLOWER))


def centred(kept: dict[str, Any], limit: Limit) -> np.ndarray:
    """A session's log B/A, centred on the rule's own estimate of them (what the rule
    estimates is then 0 in every session drawn, whatever the pairs' skew)."""
    y = np.log([p["b_rate"] / p["a_rate"] for p in kept["pairs"]])
    found: np.ndarray = y - limit.estimate(y[None, :])[0][0]
    return found


def resampled(pool: np.ndarray, limit: Limit, count: int, draw: np.random.Generator
              ) -> tuple[np.ndarray, np.ndarray]:
    """`count` pseudo-sessions (a row each) from pool (sessions x pairs), and the real session
    each was drawn from: its pairs drawn with replacement from that session's."""
    which = draw.integers(pool.shape[0], size=count)
    pair = draw.integers(pool.shape[1], size=(count, limit.last))
    found: np.ndarray = pool[which[:, None], pair]
    return found, which


def modelled(cell: Conditions, limit: Limit, count: int, draw: np.random.Generator
             ) -> np.ndarray:
    """`count` sessions as tfperf/ab/simulate.session draws them, on the candidate's schedule:
    offsets a duet, orders in blocks of AB and BA within each duet, a pair's noise."""
    schedule = limit.duet_numbers(limit.last)
    duets = int(schedule.max()) + 1
    rank = np.zeros(limit.last, dtype=int)
    for d in range(duets):
        rank[schedule == d] = np.arange(np.count_nonzero(schedule == d))
    first = draw.choice([1.0, -1.0], size=(count, duets, int(rank.max()) // 2 + 1))
    b_second = first[:, schedule, rank // 2] * np.where(rank % 2 == 0, 1.0, -1.0)
    offsets = draw.normal(0.0, cell.duet_sd, (count, duets))[:, schedule]
    noise = (draw.standard_t(5, (count, limit.last)) * math.sqrt(3 / 5) if cell.heavy_tails
             else draw.standard_normal((count, limit.last)))
    found: np.ndarray = (math.log(cell.ratio) + offsets + cell.second_turn * b_second
                         + cell.pair_sd * noise)
    return found


def share(k: int, n: int) -> str:
    low, high = binomtest(k, n).proportion_ci(0.95, "exact")
    return f"{k / n:.1%} [{low:.1%}, {high:.1%}]"


def level_row(change: float, status: np.ndarray, pairs: np.ndarray, limit: Limit,
              seconds: list[tuple[str, float, float, float]],
              boot: dict[str, str] | None = None) -> dict[str, Any]:
    """One level's figures, as a line of the kept file and of the table."""
    right, wrong = right_and_wrong(change, limit.floor)
    n = len(status)
    counts = {s: int(np.count_nonzero(status == s)) for s in (SLOWER, "faster", SAME, UNDECIDED)}
    hits = status == right
    # Pairs by which 90% (and 50%) were decided right: an undecided or wrong one never is.
    by = np.where(hits, pairs, np.iinfo(np.int64).max)
    p50, p90 = (int(np.sort(by)[math.ceil(q * n) - 1]) for q in (0.5, 0.9))
    row = {"change": change, "n": n, **counts, "right": share(int(hits.sum()), n),
           "wrong": {w: share(counts[w], n) + (f"; over sessions {boot[w]}" if boot else "")
                     for w in wrong},
           "right_by_p50": p50, "right_by_p90": p90,
           "pairs_median": float(np.median(pairs)), "pairs_p90": float(np.percentile(pairs, 90))}
    for name, start, relay, pair in seconds:
        row[f"seconds_{name}"] = [float(np.percentile([start + pair * p + relay * limit.relays(p)
                                                       for p in pairs], q)) for q in (50, 90)]
    return row


def print_row(label: str, row: dict[str, Any]) -> None:
    big = np.iinfo(np.int64).max
    by = "/".join("-" if row[k] == big else str(row[k]) for k in ("right_by_p50", "right_by_p90"))
    wrong = "; ".join(f"`{w}` {s}" for w, s in row["wrong"].items())
    secs = "; ".join(f"{k[8:]} {v[0]:.0f}/{v[1]:.0f}" for k, v in row.items()
                     if k.startswith("seconds_"))
    print(f"| {label} | {row['change']:+.1%} | {row['n']} | {row[SLOWER]} | {row['faster']} | "
          f"{row[SAME]} | {row[UNDECIDED]} | {row['right']} | {by} | {wrong} | "
          f"{row['pairs_median']:.0f}/"
          f"{row['pairs_p90']:.0f} | {secs} |", flush=True)


HEADER = ("| {} | change | n | slower | faster | same | undecided | right (95% CP) | pairs by "
          "which 50%/90% right | wrong (95% CP) | pairs median/p90 | seconds median/p90 |\n"
          "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- | --- |")


def reservoir(args: argparse.Namespace) -> int:
    kept = [k for k in load(args.files) if k["workload"] == args.workload and not k["slowdown"]]
    if len({k["machine_key"] for k in kept}) != 1 or len(kept) < 2:
        print("need 2 or more A/A sessions of one machine key", file=sys.stderr)
        return 2
    limit = chosen(args)
    start, relay, pair = costs(kept)
    seconds = [(f"{pair:.2f}s", start, relay, pair)]
    if args.pair:
        seconds.append((f"{args.pair:.2f}s", start, relay, args.pair))
    pool = np.stack([centred(k, limit) for k in kept])
    print(f"{args.workload} on {kept[0]['machine_key']}: {len(kept)} A/A sessions; start "
          f"{start:.0f} s, relay {relay:.1f} s, pair {pair:.2f} s (relays apart)")
    print(HEADER.format("estimator"))
    draw = np.random.default_rng(args.seed)
    for change in LEVELS:
        y, which = resampled(pool, limit, args.n, draw)
        status, pairs = sequential(y + math.log1p(change), limit)
        _, wrong = right_and_wrong(change, limit.floor)
        # Over the real sessions: each resample of them weighs each pseudo-session by how
        # often its real session was drawn.
        boot = []
        for _ in range(1000):
            weight = np.bincount(draw.integers(len(kept), size=len(kept)),
                                 minlength=len(kept))[which]
            boot.append([float(weight[status == w].sum() / weight.sum()) for w in wrong])
        found = np.array(boot)
        intervals = {w: f"[{np.percentile(found[:, i], 2.5):.1%}, "
                        f"{np.percentile(found[:, i], 97.5):.1%}]" for i, w in enumerate(wrong)}
        row = level_row(change, status, pairs, limit, seconds, intervals)
        print_row(args.estimator, row)
        if args.out:
            records.append(args.out, {"study": "reservoir", "workload": args.workload,
                                      "machine_key": kept[0]["machine_key"],
                                      "sessions": [k["session"] for k in kept],
                                      "limit": repr(limit), "seed": args.seed, **row})
    return 0


CELLS = [Conditions(1.0, 0.01, 0.0), Conditions(1.0, 0.01, 0.015),
         Conditions(1.0, 0.01, 0.025), Conditions(1.0, 0.025, 0.005, heavy_tails=True),
         Conditions(1.0, 0.025, 0.025, heavy_tails=True), Conditions(1.0, 0.08, 0.0, heavy_tails=True),
         Conditions(1.0, 0.08, 0.025, heavy_tails=True),
         Conditions(1.0, 0.01, 0.015, second_turn=0.01)]


# What a kept table that does not name them was computed at: the defaults until 2026-12-07.
UNNAMED = {"last": 2048, "late_relay": 32, "direction_power": 3.0, "direction_linear": 0.0}


def chosen(args: argparse.Namespace) -> Limit:
    """The rule replayed: its `same` looks, and its critical values: the calibrated ones
    (ab_limit.CALIBRATED), the spending's t, or a table ab_limit_bounds.py kept for these
    looks (the file's last)."""
    limit = scheduled(args, estimator=args.estimator)
    if args.bounds == "spending":
        return limit
    if args.bounds == "calibrated":
        return replace(limit, critical=CALIBRATED)
    tables = [row for row in records.rows([Path(args.bounds)]) if row["study"] == "table"
              and tuple(row["same_looks"]) == limit.same_looks
              and row.get("trim", Limit.trim) == limit.trim
              and row.get("alpha", Limit.alpha) == limit.alpha
              and all(row.get(name, value) == getattr(limit, name)
                      for name, value in UNNAMED.items())]
    if not tables:
        raise SystemExit(f"{args.bounds}: no table for `same` looks {limit.same_looks}, a last "
                         f"look of {limit.last}, a late relay of {limit.late_relay} and the "
                         f"directions' power {limit.direction_power}")
    return replace(limit, critical=tuple((n, math.inf if s is None else s, d)
                                         for n, s, d in tables[-1]["critical"]))


def grid(args: argparse.Namespace) -> int:
    limit = chosen(args)
    print(HEADER.format("pair SD, duet SD"))
    draw = np.random.default_rng(args.seed)
    cells = [Conditions(1.0, float(c.split(":")[0]), float(c.split(":")[1]),
                        heavy_tails=c.endswith(":heavy")) for c in args.cells or []] or CELLS
    for cell in cells:
        label = (f"{cell.pair_sd:.1%} {cell.duet_sd:.1%}{' heavy' if cell.heavy_tails else ''}"
                 f"{' 2nd-turn' if cell.second_turn else ''}")
        for change in args.levels or LEVELS:
            y = modelled(Conditions(1 + change, cell.pair_sd, cell.duet_sd, cell.second_turn,
                                    cell.heavy_tails), limit, args.n, draw)
            status, pairs = sequential(y, limit)
            row = level_row(change, status, pairs, limit, [("0.26s", 19.0, 3.7, 0.26)])
            print_row(label, row)
            if args.out:
                records.append(args.out, {"study": "grid", "cell": label,
                                          "machine_key": detect().key(),
                                          "limit": repr(limit), "seed": args.seed, **row})
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    real = sub.add_parser("reservoir", help="pseudo-sessions resampled from real A/A pairs")
    real.add_argument("files", type=Path, nargs="+")
    real.add_argument("--workload", default="resnet20")
    real.add_argument("--pair", type=float, help="also price a pair at these seconds")
    model = sub.add_parser("grid", help="sessions drawn from the model, offsets and tails")
    model.add_argument("--cells", nargs="+", metavar="PAIR:DUET[:heavy]",
                       help="per-pair and duet SD as fractions (default: the grid)")
    model.add_argument("--levels", nargs="+", type=float, help="true changes (default: all)")
    for each in (real, model):
        each.add_argument("-n", type=int, default=1000, help="sessions a level")
        each.add_argument("--estimator", default="trimmed")
        each.add_argument("--bounds", default="calibrated", metavar="calibrated|spending|FILE",
                          help="critical values: ab_limit.CALIBRATED (default), the spending's "
                               "z as t on D - 1 degrees of freedom, or the last table of a "
                               "file of ab_limit_bounds.py for these `same` looks")
        add_schedule(each)
        each.add_argument("--seed", type=int, default=77)
        each.add_argument("--out", type=Path, help="append each level's figures (JSON lines)")
    args = parser.parse_args()
    return {"reservoir": reservoir, "grid": grid}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
